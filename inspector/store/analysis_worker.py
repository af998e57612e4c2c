"""Flow analysis for the writer thread: in the thread for ordinary flows, and in one worker process
for big ones. Checking a multi-megabyte conversation holds the GIL for milliseconds, and the
forwarder thread needs the GIL to relay. When the worker dies, its flow and every later one are
analysed in the thread: a flow is never lost for want of the worker."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from ..filters import rules_text
from ..flow import Flow
from .rows import Summary


def body_size(flow: Flow) -> int:
    return len(flow.request_body) + len(flow.response_body) + len(flow.upstream_request_body or b"")


def summarise(flow: Flow) -> Summary:
    from ..analysis import analyse, to_stored  # the checker is heavy; only the writer thread and the worker need it
    from ..wire.summary import response_usage

    try:
        analysis = analyse(flow)
    except Exception as exc:  # analysis is total by contract; a bug there must not lose the flow
        return Summary(parse_error=f"analysis failed: {exc!r}")
    # What the client got, in the client's dialect (in translate mode too).
    tokens_in, tokens_out = response_usage(analysis.response, analysis.dialect)
    return Summary(
        dialect=analysis.dialect.value if analysis.dialect is not None else "", model=analysis.model,
        tools=analysis.tools, tool_calls=analysis.tool_calls, errors=analysis.errors, warnings=analysis.warnings,
        parse_error=analysis.parse_error, rules=rules_text([v.rule for v in analysis.violations]),
        tokens_in=tokens_in, tokens_out=tokens_out, buffered=analysis.buffered,
        analysis=to_stored(analysis, flow),
    )


# A pending row's model is read from request bodies up to this size: the writer shares the GIL with
# the forwarder, and the model of a bigger request waits for its analysis.
PENDING_READ_LIMIT = 256 * 1024


def request_summary(flow: Flow) -> Summary:
    """What the row of a flow still in progress can say from its request alone: its dialect, the
    model it names and the tools it offers (the rest waits for the response and the analysis)."""
    from ..analysis import decode_body, parse_json
    from ..wire.dialect import from_path
    from ..wire.summary import request_facts

    try:
        payload = None
        if len(flow.request_body) <= PENDING_READ_LIMIT:
            payload, _ = parse_json(decode_body(flow.request_body, flow.request_headers))
        # A path no dialect claims is told by shape only once the answer bears it out (analysis._borne_out).
        dialect = from_path(flow.path)
        model, tools = request_facts(payload, dialect, flow.path)
    except Exception:  # hostile bytes; the row is written whatever they hold, its model left blank
        return Summary()
    return Summary(dialect=dialect.value if dialect is not None else "", model=model, tools=tools)


def _start_worker() -> None:
    # Checking may wait; forwarding may not: on a busy machine the scheduler serves this last.
    os.nice(10)
    # Ctrl-C at the terminal is for the parent, which still has flows to analyse while it closes.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Under the TUI the terminal is the screen: nothing of the worker's may be written on it (the
    # parent reports a failure).
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    # The worker ends with its parent, however that ends: it holds its own end of the pipe it reads
    # work from, so a parent killed outright would otherwise leave it waiting for ever.
    parent = multiprocessing.parent_process()
    assert parent is not None, "the analysis worker runs only as a child process"

    def end_with_parent() -> None:
        parent.join()
        os._exit(0)

    threading.Thread(target=end_with_parent, name="parent-watch", daemon=True).start()


class Analyser:
    """The writer thread's access to `summarise()`; the worker is started on first need."""

    def __init__(self, threshold: int) -> None:
        self.threshold = threshold  # body bytes from which a flow is analysed in the worker
        self._pool: ProcessPoolExecutor | None = None
        self._broken = False

    def summary(self, flow: Flow) -> Summary:
        if body_size(flow) < self.threshold or self._broken:
            return summarise(flow)
        try:
            if self._pool is None:
                # spawn, not fork: a fork would copy the locks of the writer's, forwarder's and UI's
                # threads mid-use.
                self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_start_worker)
            return self._pool.submit(summarise, flow).result()
        except BrokenProcessPool:
            problem = "analysis worker process died"
        except (OSError, RuntimeError) as exc:  # RuntimeError: e.g. a main module that starts a store unguarded
            problem = f"analysis worker process failed to start ({exc})"
        print(f"toolwire-inspect: {problem}; analysing in the writer thread from now on", file=sys.stderr)
        self._broken = True
        self.close()
        return summarise(flow)

    def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.shutdown(wait=True, cancel_futures=True)
