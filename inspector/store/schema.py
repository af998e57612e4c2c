"""The store file: where it lives, who may read it, its tables and their versions, and how it is
opened (read-write, migrating it to this build's schema, or read-only, changing nothing)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

import platformdirs

SCHEMA_VERSION = 10

# Version 1, as first shipped: a file at any version is brought forward by the steps after it.
SCHEMA_1 = """
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    started_at REAL NOT NULL,
    upstream TEXT NOT NULL,
    listen TEXT NOT NULL,
    mode TEXT NOT NULL
);
CREATE TABLE flows (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL,
    started_at REAL NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    query TEXT NOT NULL,
    request_headers BLOB NOT NULL,
    request_body BLOB NOT NULL,
    mode TEXT NOT NULL,
    translate TEXT,
    upstream_url TEXT NOT NULL,
    upstream_request_headers BLOB NOT NULL,
    upstream_request_body BLOB,
    status INTEGER,
    response_headers BLOB NOT NULL,
    upstream_response_body BLOB,
    response_body BLOB NOT NULL,
    streamed INTEGER NOT NULL,
    chunks BLOB NOT NULL,
    ttfb_ms REAL,
    latency_ms REAL,
    state TEXT NOT NULL,
    error TEXT,
    replay_of INTEGER,
    notes BLOB NOT NULL,
    dialect TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    tools INTEGER NOT NULL DEFAULT 0,
    tool_calls INTEGER NOT NULL DEFAULT 0,
    errors INTEGER NOT NULL DEFAULT 0,
    warnings INTEGER NOT NULL DEFAULT 0,
    parse_error TEXT
);
CREATE INDEX flows_session ON flows (session_id);
"""
# Version 2: flow ids are reserved through `meta`, so that several processes on one store (the
# TUI, `record`, `replay`) never give two flows the same id.
SCHEMA_2 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""
# Version 3: the owner of each session (to tell a dead process's pending flows from a live one's),
# the chunks of in-flight streams, appended as they are relayed and folded into the flow at its end,
# and an index of the pending flows, which every open looks for.
SCHEMA_3 = """
ALTER TABLE sessions ADD COLUMN owner_pid INTEGER;
ALTER TABLE sessions ADD COLUMN owner_started TEXT;
CREATE TABLE flow_chunks (
    flow_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    t REAL NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (flow_id, seq)
) WITHOUT ROWID;
CREATE INDEX flows_pending ON flows (session_id) WHERE state = 'pending';
"""
# Version 4: the rule ids of each flow's findings (see filters.rules_text), for `~v RULE` and free
# text in the list filter, and the tokens the response reports, for the list's usage column. Flows
# analysed before it have neither: the ids below `rules_backfill_below` are analysed again by the
# writer thread (Writer.backfill), newest first, and the key goes when none is left.
SCHEMA_4 = """
ALTER TABLE flows ADD COLUMN rules TEXT NOT NULL DEFAULT '';
ALTER TABLE flows ADD COLUMN tokens_in INTEGER;
ALTER TABLE flows ADD COLUMN tokens_out INTEGER;
INSERT OR REPLACE INTO meta (key, value) SELECT 'rules_backfill_below', COALESCE(MAX(id), 0) + 1 FROM flows;
"""
# Version 5: whether a stream's events all arrived at once (analysis.buffered_stream), for the list.
SCHEMA_5 = """
ALTER TABLE flows ADD COLUMN buffered INTEGER NOT NULL DEFAULT 0;
"""
# Version 6: the route each flow came through (proxy/routes.py), for `~R NAME` and the list; flows
# recorded before it came through the one unnamed route ("").
SCHEMA_6 = """
ALTER TABLE flows ADD COLUMN route TEXT NOT NULL DEFAULT '';
"""
# Version 7: each flow's whole analysis (analysis.to_stored), so that opening a flow analyses
# nothing. Flows written before it are analysed again in the background as schema 4's were: the
# same mark, moved up to cover every flow there is.
SCHEMA_7 = """
ALTER TABLE flows ADD COLUMN analysis BLOB;
INSERT OR REPLACE INTO meta (key, value) SELECT 'rules_backfill_below', COALESCE(MAX(id), 0) + 1 FROM flows;
"""
# Version 8: WebSocket sessions (Flow.websocket): their frames are the flow's chunks, as frame
# records (flow.frame_chunk), so flow_chunks keeps an open socket's frames as it keeps a stream's.
SCHEMA_8 = """
ALTER TABLE flows ADD COLUMN websocket INTEGER NOT NULL DEFAULT 0;
"""
# Version 9: each session's session-rule findings (analysis.findings_to_stored), kept up to date by
# the writer as MCP flows finish, so that opening an MCP flow reads no other flow. NULL for a session
# recorded before it: readers compute those (Store.session_findings).
SCHEMA_9 = """
ALTER TABLE sessions ADD COLUMN findings BLOB;
"""
# Version 10: a Responses socket's turns are flows of their own (inspector/sockets.py): the socket they
# came through, the turn they continue, the history that continuation rests on.
SCHEMA_10 = """
ALTER TABLE flows ADD COLUMN socket_of INTEGER;
ALTER TABLE flows ADD COLUMN continues INTEGER;
ALTER TABLE flows ADD COLUMN history BLOB;
"""
_STEPS = (SCHEMA_1, SCHEMA_2, SCHEMA_3, SCHEMA_4, SCHEMA_5, SCHEMA_6, SCHEMA_7, SCHEMA_8, SCHEMA_9, SCHEMA_10)
_MIGRATIONS = {version: "".join(_STEPS[version:]) for version in range(len(_STEPS))}
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)  # what a read-only open can list and show without migrating


class StoreError(Exception):
    """The store file cannot be opened or has a schema this version does not know."""


def default_path() -> Path:
    return Path(platformdirs.user_data_dir("toolwire-inspect")) / "flows.sqlite3"


def make_private(path: Path, *, own_folder: bool) -> None:
    """Create the store file readable by its owner only, before SQLite opens it: SQLite gives the
    -wal and -shm files it creates later the main file's mode. A store left readable by an older
    version is tightened too. A new folder is private; so is the default one (ours) even if it exists."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if own_folder:
        os.chmod(path.parent, 0o700)
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    for suffix in ("", "-wal", "-shm"):
        try:
            if os.stat(f"{path}{suffix}").st_mode & 0o077:
                os.chmod(f"{path}{suffix}", 0o600)
        except FileNotFoundError:
            pass  # no -wal or -shm while nobody has the store open


def connect(path: Path, timeout: float) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=timeout)
    conn.execute("PRAGMA journal_mode=WAL")
    # WAL + NORMAL: a committed flow survives a crash of the process (not of the OS), and
    # commits cost no fsync on the writer thread.
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def open_read_only(path: Path, *, live: bool = False) -> sqlite3.Connection:
    """`live`: a writer is about to open the file (the TUI's child, still starting), so it is never
    read as immutable, and it must be at this build's schema: a migration under an open reader
    would change the tables it has already read."""
    if not path.is_file():
        raise StoreError(f"no flow store at {path}")
    # A WAL file opened read-only gets its -wal and -shm created (and left behind). With neither
    # there, no process has the file open, and reading it as immutable creates nothing.
    quiet = not live and not any(Path(f"{path}{suffix}").exists() for suffix in ("-wal", "-shm"))
    uri = f"file:{quote(str(path.resolve()))}?mode=ro{'&immutable=1' if quiet else ''}"
    try:
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None, timeout=30)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open store {path}: {exc}") from exc
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:  # not SQLite at all, or unreadable
        conn.close()
        raise StoreError(f"{path} is not a toolwire-inspect flow store: {exc}") from exc
    if (version != SCHEMA_VERSION if live else version not in READABLE_VERSIONS) or not {"flows", "sessions"} <= tables:
        conn.close()
        if live and version in READABLE_VERSIONS:
            raise StoreError(f"{path} has schema version {version}: its writer migrates it first")
        if version > SCHEMA_VERSION:
            raise StoreError(f"{path} has schema version {version}; this build knows {SCHEMA_VERSION}")
        raise StoreError(f"{path} is not a toolwire-inspect flow store")
    return conn


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version == SCHEMA_VERSION:
        return
    if version not in _MIGRATIONS:
        raise StoreError(f"{path} has schema version {version}; this build knows {SCHEMA_VERSION}")
    conn.execute("BEGIN IMMEDIATE")
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()  # another process may have won
        if version in _MIGRATIONS:
            for statement in _MIGRATIONS[version].split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except sqlite3.Error:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def next_free_id(conn: sqlite3.Connection, *, reclaim: bool = False) -> int:
    """The first flow id no process has reserved or used in this file. `reclaim`: the ids held by
    processes that have ended are free again (a killed process never gave its pool back), so the ids
    go on from the last flow or from what a live process still holds."""
    found = conn.execute("SELECT value FROM meta WHERE key = 'next_flow_id'").fetchone()
    (max_id,) = conn.execute("SELECT COALESCE(MAX(id), 0) FROM flows").fetchone()
    if reclaim:
        held = [stop for key, stop in conn.execute("SELECT key, value FROM meta WHERE key LIKE 'pool:%'")
                if _holder_alive(key)]
        return max([max_id + 1, *held])
    return max(found[0] if found else 1, max_id + 1)


def pool_key(token: str, pid: int | None = None) -> str:
    """The `meta` key under which one store of process `pid` (default this one) records the end of
    its reserved ids (deleted when it gives them back), so that the ids of a killed process can be
    taken back."""
    pid = os.getpid() if pid is None else pid
    return f"pool:{pid}:{process_started(pid) or ''}:{token}"


def forget_ended_pools(conn: sqlite3.Connection) -> None:
    """Delete the pool keys of processes that have ended (inside a write transaction)."""
    conn.executemany("DELETE FROM meta WHERE key = ?", [
        (key,) for (key,) in conn.execute("SELECT key FROM meta WHERE key LIKE 'pool:%'").fetchall()
        if not _holder_alive(key)])


def _holder_alive(key: str) -> bool:
    _, pid, started, _ = key.split(":", 3)
    return process_alive(int(pid), started or None)


def process_started(pid: int) -> str | None:
    """When process `pid` started, as the kernel tells it (None: no such process, or no way to ask).
    With the pid it names one process for good: a reused pid has a different start time."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return fields[19].decode()  # starttime, field 22 of proc(5); [0] here is field 3
    except (OSError, IndexError):
        return None


def process_alive(pid: int, started: str | None) -> bool:
    """Whether the process that owned a session (pid, start time) still runs."""
    if started is not None and Path("/proc/self/stat").exists():
        return process_started(pid) == started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True
