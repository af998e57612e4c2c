"""Session rules kept up to date by the writer thread: each session's findings (analysis.findings_of)
are stored in `sessions.findings` in the transaction that writes a finished MCP flow of it, so that
readers (the flow screen, `check --session`, the HTML export) read them instead of re-reading and
re-parsing every MCP flow of the session.

Incremental: each MCP flow is parsed for the rules once (analysis.session_part) and kept per
session; a new flow costs its own parse and one run of the rules over the parts kept. The file is
the truth for which flows a session has: flows another process wrote into the same session (a
second recorder, `mcp-stdio`) are read and parsed once, inside the transaction that holds the
write lock, so two writers never store findings that miss each other's flows. Sessions recorded
before schema 9 get theirs in the writer's backfill turns, a few per turn, newest first."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..flow import Flow
from . import rows

if TYPE_CHECKING:
    from ..analysis import SessionPart



def dialects() -> Sequence[str]:
    """The dialect column's values of the flows the session rules read (wire.session.DIALECTS,
    imported when the writer first needs it: the store itself stays light to import)."""
    from ..wire.session import DIALECTS

    return DIALECTS


def _among() -> str:
    return "dialect IN (" + ", ".join("?" * len(dialects())) + ")"
# Sessions from before schema 9 given their findings per turn of the writer's backfill: each costs
# a parse of its MCP flows inside the write transaction, which other processes wait on.
BACKFILL_SESSIONS = 4


class SessionRules:
    def __init__(self, warn: Callable[[str], None]) -> None:
        self._warn = warn
        self._parts: dict[int, dict[int, SessionPart]] = {}  # session -> flow id -> part, committed
        self._written: dict[int, dict[int, Flow]] = {}  # this transaction's finished MCP flows (redacted)
        self._failed: set[int] = set()  # sessions whose rules failed: left NULL, not backfilled again

    def written(self, flow: Flow) -> None:
        """A finished flow the session rules read (an MCP exchange, a model flow whose calls may carry
        opaque state), written in the current transaction, as stored."""
        self._written.setdefault(flow.session_id, {})[flow.id] = flow

    def backfill(self, conn: sqlite3.Connection) -> bool:
        """Have the current transaction store the findings of a few sessions that have none (recorded
        before schema 9) though they have finished MCP flows; True while more are left."""
        due = [session_id for (session_id,) in conn.execute(
            "SELECT id FROM sessions WHERE findings IS NULL AND EXISTS (SELECT 1 FROM flows WHERE "
            f"flows.session_id = sessions.id AND {_among()} AND state != 'pending') ORDER BY id DESC",
            tuple(dialects())).fetchall()
            if session_id not in self._failed and session_id not in self._written]
        for session_id in due[:BACKFILL_SESSIONS]:
            self._written[session_id] = {}
        return len(due) > BACKFILL_SESSIONS

    def store(self, conn: sqlite3.Connection) -> dict[int, dict[int, SessionPart]]:
        """Store the findings of the sessions this transaction wrote MCP flows to; returns the parts
        made, for `committed` (a rolled-back transaction's are dropped with it)."""
        from ..analysis import findings_of, findings_to_stored, session_part

        written, self._written = self._written, {}
        made: dict[int, dict[int, SessionPart]] = {}
        for session_id, flows in written.items():
            kept = self._parts.get(session_id, {})
            fresh: dict[int, SessionPart] = {}
            try:
                fresh.update((flow_id, session_part(flow)) for flow_id, flow in flows.items())
                parts = []
                for (flow_id,) in conn.execute(f"SELECT id FROM flows WHERE session_id = ? AND {_among()} "
                                               "AND state != 'pending' ORDER BY id", (session_id, *dialects())).fetchall():
                    part = fresh.get(flow_id) or kept.get(flow_id)
                    if part is None:  # another process's flow, or one written before this writer started
                        flow = rows.load(conn, flow_id)
                        if flow is None:
                            continue
                        part = fresh[flow_id] = session_part(flow)
                    parts.append(part)
                stored: bytes | None = findings_to_stored(findings_of(parts))
            except sqlite3.OperationalError:
                raise  # the file, not the flows: the whole transaction is retried
            except Exception as exc:  # the rules are total by contract; a bug there must not stop the writer
                self._warn(f"session {session_id}: session rules failed ({exc!r}); they run when read")
                self._failed.add(session_id)
                stored, fresh = None, {}  # NULL: readers compute the findings, as for an old session
            made[session_id] = fresh
            conn.execute("UPDATE sessions SET findings = ? WHERE id = ?", (stored, session_id))
        return made

    def committed(self, made: dict[int, dict[int, SessionPart]]) -> None:
        for session_id, parts in made.items():
            self._parts.setdefault(session_id, {}).update(parts)

    def rolled_back(self) -> None:
        self._written = {}
