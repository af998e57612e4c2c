"""The flow store: one SQLite file (WAL), written by a single thread, read from any.

The forwarder hands flows to `submit()` and goes on forwarding; the writer thread analyses the
completed ones (contract checks included) and writes them, so neither SQLite nor the checker ever
sits on the forwarding path. A flow row is written when the request arrives (state `pending`) and
rewritten when the response ends, so a crash loses no finished flow; meanwhile the chunks relayed so
far are appended to `flow_chunks` every PROGRESS_INTERVAL, and the next store opened on the file
marks the pending flows of a dead process `interrupted:` with those bytes. A WebSocket session is
a flow whose chunks are its frames (flow.frame_chunk), kept the same way: `Store.frames(id)` reads
them back, while the socket is open too.

Recording never stops forwarding: flow ids come from memory, and flows the writer cannot write
(disk full, file locked) wait in a bounded backlog and are retried, with a warning on stderr and
in `last_error`. Commands that only read open the file read-only and change nothing in it.

A forwarder's store (`Store(path, writer_process=True)`: `record`, `run`, `mcp-stdio`, the TUI's
forwarder process) runs the writer in a process of its own, so that analysis, redaction and row
writes never share the forwarder's GIL; the hand-off is a socketpair (kernel memory, never a file),
and a writer process that dies is replaced and sent again what it had not committed.

Modules: `schema` (the file, its tables, migrations, read-only opens), `rows` (the columns, named
once, and the typed rows), `chunks` (the chunk codec), `writer` (the writer thread: batches,
stream progress, backlog, ids), `jobs` (what a store asks its writer to do, by name),
`writer_process` (the writer in a process of its own, and its client), `analysis_worker` (big
bodies analysed in a worker process), `session_rules` (each session's session-rule findings, kept
by the writer) and `facade` (`Store`)."""

from __future__ import annotations

# The tunables live here, and the modules read them from here when they use them: one place to
# set them (the tests lower some).

# Above this many body bytes, a flow is analysed in the worker process: checking a multi-megabyte
# conversation holds the GIL for milliseconds, and the forwarder thread needs the GIL to relay.
ANALYSE_APART = 256 * 1024
BATCH_WINDOW = 0.005  # seconds the writer waits after a flow arrives, to write a burst at once
# A writer process (store.writer_process) holds finished flows back while flows keep coming, each up
# to this many seconds: it analyses and writes them when its forwarder is quiet, not beside a burst.
# The flows of a burst reach the list this much later at most; none is at risk meanwhile (a killed
# writer process is sent them again). Request rows and stream progress are never held back.
BURST_GATHER = 1.0
# Bytes relayed this long ago are on disk (`flow_chunks`), so a killed process loses at most this much
# of a stream; half the 100 ms promised, to leave room for the commit itself.
PROGRESS_INTERVAL = 0.05
RETRY_INTERVAL = 0.5  # seconds between attempts while the store cannot be written
WRITE_TIMEOUT = 2.0  # seconds the writer waits for another process's lock before trying again later
# Flows kept in memory while the store cannot be written; past either bound the oldest are dropped.
BACKLOG_FLOWS = 10_000
BACKLOG_BYTES = 256 * 1024 * 1024
# Ids each store keeps reserved ahead, topped up by every write transaction. Few, so that two
# processes recording on one store leave each other gaps of at most this many ids; a burst that
# outruns them borrows ids (see Store.next_flow_id) rather than wait for the file.
ID_POOL = 8

from .chunks import pack_chunks, unpack_chunks  # noqa: E402  (after the tunables they read)
from .facade import Store  # noqa: E402
from .rows import FlowRow, SessionRow  # noqa: E402
from .schema import SCHEMA_VERSION, StoreError, default_path  # noqa: E402

__all__ = [
    "ANALYSE_APART", "BACKLOG_BYTES", "BACKLOG_FLOWS", "BATCH_WINDOW", "BURST_GATHER", "ID_POOL", "PROGRESS_INTERVAL",
    "RETRY_INTERVAL", "SCHEMA_VERSION", "WRITE_TIMEOUT", "FlowRow", "SessionRow", "Store", "StoreError",
    "default_path", "pack_chunks", "unpack_chunks",
]
