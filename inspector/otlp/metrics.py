"""The GenAI client metrics of the semantic conventions (the version in the package docstring),
recorded from the LLM spans a TraceBuilder made: `gen_ai.client.operation.duration` (seconds) and
`gen_ai.client.token.usage` (tokens, one point per `gen_ai.token.type`), histograms with the bucket
boundaries the conventions advise and the attributes they name.

The SDK aggregates; the points are read on the caller's thread (`export`), never by a thread of the
SDK's own, so the live export's one thread does all the waiting on a collector. Cumulative, as the
OTLP exporters prefer by default; a histogram has no per-point time, so `otlp push` of an old session
gives its points the push's time."""

from __future__ import annotations

import os
from collections.abc import Sequence

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricExporter, MetricExportResult
from opentelemetry.sdk.trace import ReadableSpan

from . import INSTRUMENTATION, SCHEMA_URL
from .spans import OPERATIONS, resource

DURATION = "gen_ai.client.operation.duration"
TOKENS = "gen_ai.client.token.usage"
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)
# The attributes the conventions give both metrics (gen_ai.token.type is added to the token points).
KEYS = ("gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.response.model",
        "server.address", "server.port", "error.type")
USAGE = (("input", "gen_ai.usage.input_tokens"), ("output", "gen_ai.usage.output_tokens"))
_LLM = frozenset(OPERATIONS.values())


def wanted() -> bool:
    """Metrics go with the spans unless OTEL_METRICS_EXPORTER says none (the standard switch)."""
    return os.environ.get("OTEL_METRICS_EXPORTER", "otlp").strip().lower() != "none"


class GenAiMetrics:
    def __init__(self, exporter: MetricExporter) -> None:
        self._exporter = exporter
        self._reader = InMemoryMetricReader()
        self._provider = MeterProvider(resource=resource(), metric_readers=[self._reader])
        meter = self._provider.get_meter(INSTRUMENTATION, schema_url=SCHEMA_URL)
        self._duration = meter.create_histogram(DURATION, unit="s", description="GenAI operation duration",
                                                explicit_bucket_boundaries_advisory=DURATION_BUCKETS)
        self._tokens = meter.create_histogram(TOKENS, unit="{token}",
                                              description="Number of input and output tokens used",
                                              explicit_bucket_boundaries_advisory=TOKEN_BUCKETS)

    def record(self, spans: Sequence[ReadableSpan]) -> None:
        """A point per LLM call span (an execute_tool or MCP span is no client operation of a model)."""
        for span in spans:
            attributes = span.attributes or {}
            if attributes.get("gen_ai.operation.name") not in _LLM or span.end_time is None or span.start_time is None:
                continue
            common = {key: attributes[key] for key in KEYS if key in attributes}
            self._duration.record((span.end_time - span.start_time) / 1e9, common)
            for kind, key in USAGE:
                count = attributes.get(key)
                if isinstance(count, int):
                    self._tokens.record(count, {**common, "gen_ai.token.type": kind})

    def export(self) -> bool:
        """Send what was recorded so far; False when the collector did not take it."""
        data = self._reader.get_metrics_data()
        if data is None or not data.resource_metrics:
            return True
        try:
            return self._exporter.export(data) is MetricExportResult.SUCCESS
        except Exception:
            return False

    def shutdown(self) -> None:
        self._provider.shutdown()
        self._exporter.shutdown()
