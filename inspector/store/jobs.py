"""What `Store` asks its writer to do in the writer's next transaction, by name, so that a writer in
a process of its own (writer_process) runs the very same jobs: each takes the write connection and
values that travel by pickle."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from .deletion import delete_flows


def new_session(conn: sqlite3.Connection, started_at: float, upstream: str, listen: str, mode: str,
                pid: int, started: str | None) -> int:
    """A session row owned by process `pid` (started at `started`); `upstream` already redacted."""
    cursor = conn.execute(
        "INSERT INTO sessions (started_at, upstream, listen, mode, owner_pid, owner_started) VALUES (?, ?, ?, ?, ?, ?)",
        (started_at, upstream, listen, mode, pid, started))
    return int(cursor.lastrowid or 0)


def flush(conn: sqlite3.Connection) -> None:
    """Nothing: done once everything queued before it is committed."""


JOBS: dict[str, Callable[..., object]] = {"new_session": new_session, "delete": delete_flows, "flush": flush}
