"""A real OTLP/HTTP trace receiver on loopback: it decodes every POST /v1/traces with
opentelemetry-proto's ExportTraceServiceRequest and keeps what arrived. It can answer 200, answer 500,
or hold each request until the test releases it (a collector too slow to answer)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (ExportTraceServiceRequest,
                                                                      ExportTraceServiceResponse)

from inspector.formats.otlp_json import attributes

HOLD_LIMIT = 30.0  # seconds a held request waits for release at most, so a failed test still ends


class Receiver:
    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode  # "ok", "error" (500) or "hold"
        self.requests: list[ExportTraceServiceRequest] = []
        self.arrived = threading.Condition()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                with receiver.arrived:
                    receiver.requests.append(ExportTraceServiceRequest.FromString(body))
                    receiver.arrived.notify_all()
                if receiver.mode == "hold":
                    receiver.release.wait(HOLD_LIMIT)
                if receiver.mode == "error" or self.path != "/v1/traces":
                    self.send_response(500)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def wait(self, count: int, timeout: float = 30.0) -> None:
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.requests) >= count, timeout), len(self.requests)

    def spans(self) -> list[Any]:
        with self.arrived:
            return [span for request in self.requests for rs in request.resource_spans
                    for ss in rs.scope_spans for span in ss.spans]


def span_attributes(span: Any) -> dict[str, Any]:
    return attributes(span.attributes)
