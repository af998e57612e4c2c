"""A real OTLP/HTTP receiver on loopback: it decodes every POST /v1/traces with opentelemetry-proto's
ExportTraceServiceRequest (and /v1/metrics with ExportMetricsServiceRequest) and keeps what arrived. It can answer 200, answer 500,
hold each request until the test releases it (a collector that does not answer), or answer each
after `delay` seconds (a slow collector).

And its OTLP/gRPC twin, a real grpcio server serving opentelemetry-proto's generated TraceService
and MetricsService (the otel-grpc extra brings grpcio), which keeps what arrives the same way."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (ExportMetricsServiceRequest,
                                                                          ExportMetricsServiceResponse)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (ExportTraceServiceRequest,
                                                                      ExportTraceServiceResponse)

from inspector.formats.otlp_json import attributes

HOLD_LIMIT = 30.0  # seconds a held request waits for release at most, so a failed test still ends


class Received:
    """What a receiver decoded, in arrival order, and the waits on it."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.metric_requests: list[ExportMetricsServiceRequest] = []
        self.arrived = threading.Condition()

    def wait(self, count: int, timeout: float = 30.0) -> None:
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.requests) >= count, timeout), len(self.requests)

    def wait_metrics(self, count: int, timeout: float = 30.0) -> None:
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.metric_requests) >= count, timeout), len(self.metric_requests)

    def metrics(self) -> list[Any]:
        """Every metric that arrived, in order (each export carries the cumulative histograms)."""
        with self.arrived:
            return [metric for request in self.metric_requests for rm in request.resource_metrics
                    for sm in rm.scope_metrics for metric in sm.metrics]

    def spans(self) -> list[Any]:
        with self.arrived:
            return [span for request in self.requests for rs in request.resource_spans
                    for ss in rs.scope_spans for span in ss.spans]

    def _keep(self, request: ExportTraceServiceRequest | ExportMetricsServiceRequest) -> None:
        with self.arrived:
            if isinstance(request, ExportMetricsServiceRequest):
                self.metric_requests.append(request)
            else:
                self.requests.append(request)
            self.arrived.notify_all()


class Receiver(Received):
    def __init__(self, mode: str = "ok", delay: float = 10.0) -> None:
        super().__init__()
        self.mode = mode  # "ok", "error" (500), "hold" or "slow" (200 after `delay` seconds)
        self.delay = delay
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                metrics = self.path == "/v1/metrics"
                receiver._keep((ExportMetricsServiceRequest if metrics else ExportTraceServiceRequest).FromString(body))
                if receiver.mode == "hold":
                    receiver.release.wait(HOLD_LIMIT)
                elif receiver.mode == "slow":
                    receiver.release.wait(receiver.delay)  # released early only when the receiver closes
                if receiver.mode == "error" or self.path not in ("/v1/traces", "/v1/metrics"):
                    self.send_response(500)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                answer = (ExportMetricsServiceResponse() if metrics else ExportTraceServiceResponse()).SerializeToString()
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



class GrpcReceiver(Received):
    """OTLP/gRPC on loopback: `url` is what OTEL_EXPORTER_OTLP_ENDPOINT takes (http://, so no TLS)."""

    def __init__(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        import grpc
        from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

        super().__init__()
        receiver = self

        class Traces(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request: ExportTraceServiceRequest, context: Any) -> ExportTraceServiceResponse:
                receiver._keep(request)
                return ExportTraceServiceResponse()

        class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
            def Export(self, request: ExportMetricsServiceRequest, context: Any) -> ExportMetricsServiceResponse:
                receiver._keep(request)
                return ExportMetricsServiceResponse()

        self.server = grpc.server(ThreadPoolExecutor(max_workers=4))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), self.server)
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.url = f"http://127.0.0.1:{port}"

    def __enter__(self) -> GrpcReceiver:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop(grace=None).wait()


def span_attributes(span: Any) -> dict[str, Any]:
    return attributes(span.attributes)
