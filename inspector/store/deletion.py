"""Deleting flows (Store.delete), inside one writer transaction: a flow goes with all that is its own,
and nothing left behind points at an id that is no longer the flow it named (ids are reclaimed at
the next open: a dangling `replay_of` could name a stranger)."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from dataclasses import dataclass

from . import rows


@dataclass(frozen=True, slots=True)
class Deletion:
    deleted: tuple[int, ...]  # the flows deleted, a socket's turns included, in id order
    in_progress: tuple[int, ...] = ()  # asked for, kept: still being recorded
    missing: tuple[int, ...] = ()  # asked for, not in the store (deleted already, or by another process)


def _ids(conn: sqlite3.Connection, sql: str, ids: Collection[int]) -> set[int]:
    return {flow_id for (flow_id,) in conn.execute(sql, (_json(ids),))}


def _json(ids: Collection[int]) -> str:
    return "[" + ",".join(str(int(i)) for i in sorted(ids)) + "]"


_IN = "IN (SELECT value FROM json_each(?))"


def delete_flows(conn: sqlite3.Connection, flow_ids: Collection[int]) -> Deletion:
    """See Store.delete; `conn` is in the writer's transaction."""
    asked = set(flow_ids)
    found = {flow_id: state for flow_id, state in conn.execute(
        f"SELECT id, state FROM flows WHERE id {_IN}", (_json(asked),))}
    in_progress = {flow_id for flow_id, state in found.items() if state == "pending"}
    chosen = set(found) - in_progress
    # A socket's turns are made of its frames (inspector/sockets.py): they go with it. A turn that is
    # still pending keeps its socket too.
    turns = _ids(conn, f"SELECT id FROM flows WHERE socket_of {_IN}", chosen)
    pending_turns = _ids(conn, f"SELECT id FROM flows WHERE id {_IN} AND state = 'pending'", turns)
    if pending_turns:
        held = _ids(conn, f"SELECT socket_of FROM flows WHERE id {_IN}", pending_turns)
        chosen -= held
        in_progress |= held & asked
        turns = _ids(conn, f"SELECT id FROM flows WHERE socket_of {_IN}", chosen)
    doomed = chosen | turns
    if not doomed:
        return Deletion((), tuple(sorted(in_progress)), tuple(sorted(asked - set(found))))
    ids = _json(doomed)
    sessions = {session_id for (session_id,) in conn.execute(
        f"SELECT DISTINCT session_id FROM flows WHERE id {_IN}", (ids,))}
    conn.execute(f"DELETE FROM flow_chunks WHERE flow_id {_IN}", (ids,))
    conn.execute(f"DELETE FROM flows WHERE id {_IN}", (ids,))
    for column in ("replay_of", "socket_of", "continues"):
        conn.execute(f"UPDATE flows SET {column} = NULL WHERE {column} {_IN}", (ids,))
    _refind(conn, sessions)
    return Deletion(tuple(sorted(doomed)), tuple(sorted(in_progress)), tuple(sorted(asked - set(found))))


def _refind(conn: sqlite3.Connection, sessions: set[int]) -> None:
    """The stored session findings of `sessions`, computed again over the flows they have left
    (one rule can need two flows: what named the deleted one goes, what it alone explained too)."""
    from ..analysis import findings_to_stored, session_findings
    from .session_rules import dialects

    kinds = tuple(dialects())
    among = ", ".join("?" * len(kinds))
    for session_id in sessions:
        found = conn.execute("SELECT findings FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if found is None or found[0] is None:
            continue  # none stored: readers compute them (Store.session_findings), from what is left
        ids = [flow_id for (flow_id,) in conn.execute(
            f"SELECT id FROM flows WHERE session_id = ? AND dialect IN ({among}) AND state != 'pending' ORDER BY id",
            (session_id, *kinds))]
        try:
            stored: bytes | None = findings_to_stored(session_findings(
                flow for flow in (rows.load(conn, flow_id) for flow_id in ids) if flow is not None))
        except sqlite3.OperationalError:
            raise  # the file: the transaction is retried
        except Exception:  # the rules are total by contract; should one fail, readers compute them
            stored = None
        conn.execute("UPDATE sessions SET findings = ? WHERE id = ?", (stored, session_id))
