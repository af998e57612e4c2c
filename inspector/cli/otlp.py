"""`toolwire-inspect otlp push --session N --endpoint URL`: a recorded session as OpenTelemetry GenAI
spans to an OTLP collector; and `--otlp-endpoint`, the live export `record` offers (otlp/live.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .common import CommandError, add_capture_content_argument, add_store_argument, complain, open_store

if TYPE_CHECKING:
    from ..otlp.live import Reporting
    from ..store import Store


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("otlp", help="send recorded sessions to an OpenTelemetry collector")
    commands = parser.add_subparsers(dest="otlp_command", metavar="COMMAND", required=True)
    push = commands.add_parser("push", help="send a recorded session as OpenTelemetry GenAI spans over OTLP",
                               description="Send every flow of a session as spans (the same spans the live "
                                           "export sends, with the same ids) to an OTLP endpoint.")
    push.add_argument("--session", default="latest", metavar="ID", help="the session to send (default: the latest)")
    push.add_argument("--endpoint", metavar="URL",
                      help="the collector's base URL, e.g. http://127.0.0.1:4318 (default: OTEL_EXPORTER_OTLP_ENDPOINT)")
    add_capture_content_argument(push)
    add_store_argument(push)
    push.set_defaults(handler=run_push)


def add_live_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--otlp-endpoint", nargs="?", const="", metavar="URL",
                        help="export each finished flow as OpenTelemetry GenAI spans to this OTLP collector (its "
                             "base URL; without one, OTEL_EXPORTER_OTLP_ENDPOINT), off the forwarding path: a "
                             "slow or down collector drops spans, counted, and never slows forwarding")
    add_capture_content_argument(parser)


def live_export(args: argparse.Namespace, store: Store) -> Reporting | None:
    """The live export `--otlp-endpoint` asks for (in a process of its own), or None; a CommandError when
    it cannot be made."""
    if args.otlp_endpoint is None:
        return None
    from ..otlp import OtelMissing, require

    try:
        require()
    except OtelMissing as exc:
        raise CommandError(str(exc)) from exc
    from ..otlp.live import ExporterError, start_live

    try:
        return start_live(args.otlp_endpoint or None, content=args.capture_content, openinference=args.openinference,
                         store=store)
    except ExporterError as exc:
        raise CommandError(str(exc)) from exc


def run_push(args: argparse.Namespace) -> int:
    from ..otlp import OtelMissing, require

    try:
        require()
    except OtelMissing as exc:
        raise CommandError(str(exc)) from exc
    from opentelemetry.sdk.trace.export import SpanExportResult

    from ..otlp.live import ExporterError, exporter, metric_exporter, session_started
    from ..otlp.metrics import GenAiMetrics, wanted
    from ..otlp.spans import TraceBuilder, options
    from .export import _session

    store = open_store(args.store, read_only=True)
    with store:
        session_id = _session(store, args.session)
        flows = [flow for flow in map(store.get, (row.id for row in store.rows() if row.session_id == session_id))
                 if flow is not None]
        if not flows:
            raise CommandError(f"session {session_id} has no flow to send")
        builder = TraceBuilder(options(content=args.capture_content, openinference=args.openinference,
                                       store=str(Path(store.path).resolve())),
                               get=store.get, session_started=session_started(store), analysed=store.analysis)
        spans = builder.spans(flows)
    try:
        export = exporter(args.endpoint)
        metrics = GenAiMetrics(metric_exporter(args.endpoint)) if wanted() else None
    except ExporterError as exc:
        raise CommandError(str(exc)) from exc
    try:
        result = export.export(spans)
        if metrics is not None and result is SpanExportResult.SUCCESS:
            metrics.record(spans)
            if not metrics.export():
                complain(f"the collector did not take the GenAI metrics of session {session_id}")
    finally:
        export.shutdown()
        if metrics is not None:
            metrics.shutdown()
    if result is not SpanExportResult.SUCCESS:
        print(f"toolwire-inspect: the collector did not take the {len(spans)} spans of session {session_id} "
              "(see the exporter's message above)", file=sys.stderr)
        return 1
    print(f"sent {len(spans)} spans for {len(flows)} flows of session {session_id}", file=sys.stderr)
    return 0
