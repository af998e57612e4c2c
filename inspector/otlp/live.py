"""Live export: each finished flow as spans to an OTLP endpoint while recording.

Fed from the store's writer thread once a flow is committed (`FlowEvent` `completed`), never from
the forwarder: `flow_saved` appends to a bounded queue and returns; a thread of its own builds the
spans, from the analysis the store kept (`analysed`: the checker never runs again here, beside the
forwarder, for the GIL), and exports them. A collector that is down, slow or answering errors holds up that thread
alone: the queue fills, and what no longer fits is dropped and counted (`dropped`), as the store's
backlog does, rather than wait."""

from __future__ import annotations

import importlib
import os
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opentelemetry.sdk.metrics.export import MetricExporter
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from ..analysis import Analysis
from ..flow import Flow
from .metrics import GenAiMetrics, wanted
from .spans import Options, TraceBuilder, options

if TYPE_CHECKING:
    from ..analysis import Analysis
    from .process import ExportProcess

QUEUE_FLOWS = 1024  # finished flows waiting for export; past it new ones are dropped and counted
# Flows gather this long (or up to BATCH_FLOWS) into one export: one request per burst, not per flow,
# since every export competes with the forwarder for the GIL.
BATCH_DELAY = 1.0
BATCH_FLOWS = 256
TROUBLE_EVERY = 10.0  # seconds between two reports of new drops or failures (the first is at once)


class ExporterError(ValueError):
    """The OTLP exporter cannot be made as configured; the message says why."""


def exporter(endpoint: str | None) -> SpanExporter:
    """The SDK's OTLP span exporter for `endpoint` (a collector's base URL, like
    OTEL_EXPORTER_OTLP_ENDPOINT: `/v1/traces` is added for HTTP), or with None for what the
    standard variables say. Headers, timeout, compression and TLS come from OTEL_EXPORTER_OTLP_*;
    the protocol is http/protobuf unless OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL says grpc."""
    return _exporter("traces", endpoint)


def metric_exporter(endpoint: str | None) -> MetricExporter:
    """The OTLP metric exporter beside `exporter(endpoint)`: the same collector, `/v1/metrics`."""
    return _exporter("metrics", endpoint)


def _exporter(signal: str, endpoint: str | None) -> Any:
    variables = (f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
    protocol = next((os.environ[name] for name in variables if os.environ.get(name)), "http/protobuf").strip()
    if endpoint is None and not any(os.environ.get(name) for name in (f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT",
                                                                      "OTEL_EXPORTER_OTLP_ENDPOINT")):
        raise ExporterError("no OTLP endpoint: give a URL or set OTEL_EXPORTER_OTLP_ENDPOINT")
    if protocol == "grpc":
        try:
            module = importlib.import_module(f"opentelemetry.exporter.otlp.proto.grpc.{_MODULES[signal]}")
        except ImportError:
            raise ExporterError("OTLP over gRPC needs the otel-grpc extra: pip install "
                                "'toolwire-inspect[otel-grpc]'") from None
        made = module.OTLPSpanExporter if signal == "traces" else module.OTLPMetricExporter
        return made(endpoint=endpoint) if endpoint is not None else made()
    if protocol not in ("http/protobuf", "http"):
        raise ExporterError(f"OTLP protocol {protocol!r} is not offered: http/protobuf or grpc")
    module = importlib.import_module(f"opentelemetry.exporter.otlp.proto.http.{_MODULES[signal]}")
    made = module.OTLPSpanExporter if signal == "traces" else module.OTLPMetricExporter
    return made() if endpoint is None else made(endpoint=f"{endpoint.rstrip('/')}/v1/{signal}")


_MODULES = {"traces": "trace_exporter", "metrics": "metric_exporter"}


@dataclass(slots=True)
class Counts:
    queued: int = 0  # flows taken into the queue
    dropped: int = 0  # flows the full queue turned away
    exported: int = 0  # spans the collector accepted
    failed: int = 0  # spans whose export failed (collector down, erroring, too slow)
    metrics_failed: int = 0  # metric exports the collector did not take


class Reporting(ABC):
    """A live export as the recorder holds it: flows in, counts out, said when they go wrong."""

    counts: Counts

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._reported = (0, 0)  # (dropped, failed) as last reported by `trouble`
        self._reported_at = -TROUBLE_EVERY

    @abstractmethod
    def flow_saved(self, flow: Flow) -> None:
        """A flow the store committed; never waits (the writer thread calls it)."""

    @abstractmethod
    def close(self, timeout: float = 5.0) -> Counts:
        """Export what is queued, for at most `timeout` seconds, and stop."""

    def close_after(self, store) -> Counts:
        """`close` once all that `store` (a Store) was given is committed: its last flows reach the export."""
        from ..store import StoreError

        try:
            store.flush()
        except StoreError:
            pass  # the store reports it; the export sends what it has
        return self.close()

    def trouble(self, now: float | None = None) -> str | None:
        """The summary when flows were dropped or spans failed since the last report, at most once
        every TROUBLE_EVERY seconds (a down collector fails each batch); else None. For whoever shows
        it (`record`'s stderr, the TUI's header): called from their own thread, never the forwarder's."""
        now = time.monotonic() if now is None else now
        counts = self.counts
        seen = (counts.dropped, counts.failed)
        if seen == self._reported or now - self._reported_at < TROUBLE_EVERY:
            return None
        self._reported, self._reported_at = seen, now
        return self.summary()

    def summary(self) -> str:
        c = self.counts
        return (f"otlp: {c.exported} spans exported, {c.failed} failed, {c.dropped} flows dropped "
                f"(queue of {self._capacity} full or closing)")


class LiveExport(Reporting):
    def __init__(self, export: SpanExporter, opts: Options, *, get: Callable[[int], Flow | None],
                 session_started: Callable[[int], float | None], capacity: int = QUEUE_FLOWS,
                 metrics: GenAiMetrics | None = None,
                 analysed: Callable[[Flow], Analysis | None] = lambda _: None) -> None:
        super().__init__(capacity)
        self._exporter = export
        self._metrics = metrics
        self._builder = TraceBuilder(opts, get=get, session_started=session_started, analysed=analysed)
        self._queue: deque[Flow] = deque()
        self._ready = threading.Condition()
        self._closing = False
        self._in_flight = 0  # flows of the export under way
        self._abandoned = False  # the close stopped waiting for it: its flows were counted dropped
        self.counts = Counts()
        self._thread = threading.Thread(target=self._run, name="toolwire-otlp-export", daemon=True)
        self._thread.start()

    def flow_saved(self, flow: Flow) -> None:
        """A flow the store committed; never waits (the writer thread calls it)."""
        with self._ready:
            if self._closing or len(self._queue) >= self._capacity:
                self.counts.dropped += 1
                return
            self._queue.append(flow)
            self.counts.queued += 1
            if len(self._queue) == 1 or len(self._queue) >= BATCH_FLOWS:
                self._ready.notify()

    def _run(self) -> None:
        while True:
            with self._ready:
                self._ready.wait_for(lambda: self._queue or self._closing)
                if not self._queue:
                    return
                self._ready.wait_for(lambda: len(self._queue) >= BATCH_FLOWS or self._closing, BATCH_DELAY)
                batch = list(self._queue)
                self._queue.clear()
                self._in_flight = len(batch)
            spans = []
            for flow in batch:
                try:
                    spans.extend(self._builder.add(flow))
                except Exception as exc:
                    print(f"toolwire-inspect: otlp: flow #{flow.id} not exported: {exc!r}", file=sys.stderr)
            if not spans:
                with self._ready:
                    self._in_flight = 0
                continue
            try:
                result = self._exporter.export(spans)
            except Exception:
                result = SpanExportResult.FAILURE
            with self._ready:
                if self._abandoned:
                    return
                self._in_flight = 0
                if result is SpanExportResult.SUCCESS:
                    self.counts.exported += len(spans)
                else:
                    self.counts.failed += len(spans)
            if self._metrics is not None:
                self._metrics.record(spans)
                if not self._metrics.export():
                    self.counts.metrics_failed += 1

    def close(self, timeout: float = 5.0) -> Counts:
        """Export what is queued, for at most `timeout` seconds, and stop."""
        with self._ready:
            self._closing = True
            self._ready.notify()
        self._thread.join(timeout)
        with self._ready:
            self.counts.dropped += len(self._queue)  # left when the time ran out
            self._queue.clear()
            if self._thread.is_alive():  # still in an export: its flows will not be counted otherwise
                self._abandoned = True
                self.counts.dropped += self._in_flight
        self._exporter.shutdown()
        if self._metrics is not None:
            self._metrics.shutdown()
        return self.counts



def session_started(store) -> Callable[[int], float | None]:
    """A Store's session start times, as TraceBuilder reads them (its trace ids come from them)."""
    def started(session_id: int) -> float | None:
        session = store.session(session_id)
        return session.started_at if session is not None else None

    return started


def open_live(endpoint: str | None, *, content: bool, store, openinference: bool = False,
              capacity: int = QUEUE_FLOWS) -> LiveExport:
    """The live export of a recording into `store` (a Store), in this process: to `endpoint`, or
    with None where the standard variables say. An ExporterError when it cannot be made."""
    opts = options(content=content, openinference=openinference, store=str(Path(store.path).resolve()))
    return LiveExport(exporter(endpoint), opts,
                      get=store.get, session_started=session_started(store),
                      metrics=GenAiMetrics(metric_exporter(endpoint)) if wanted() else None,
                      # The writer committed the flow with its analysis before the export hears of it.
                      analysed=store.analysis, capacity=capacity)


def start_live(endpoint: str | None, *, content: bool, store, openinference: bool = False) -> ExportProcess:
    """The live export of a recording into `store` (a Store), in a process of its own (otlp/process.py)
    that reads each flow back from the store. An ExporterError, here and now, when the configuration
    cannot make an exporter."""
    from .process import ExportProcess

    exporter(endpoint).shutdown()  # the configuration's mistakes are this command's errors, not the process's
    if wanted():
        metric_exporter(endpoint).shutdown()
    return ExportProcess(endpoint, content=content, openinference=openinference, store=Path(store.path).resolve())
