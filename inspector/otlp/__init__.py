"""Stored flows as OpenTelemetry spans in the GenAI semantic conventions (OTLP trace files, written
and read back as flows, are a recording format: inspector.formats.otlp). The OpenTelemetry SDK builds the spans and its OTLP exporters and encoders put them
on the wire: nothing of our own on the wire format. Needs the `[otel]` extra.

Modules: `spans` (flows -> spans: the mapping, one trace per recorded session), `live` (the exporter
fed by the store's writer after each flow is written). OTLP/JSON files, written and read, are a
recording format: inspector.formats.otlp and its codec inspector.formats.otlp_json.

Semantic conventions followed: the GenAI conventions of OpenTelemetry semantic-conventions v1.41.0,
the last release before they moved to their own repository (`gen_ai.provider.name` from 1.37,
`gen_ai.input.messages` / `gen_ai.output.messages` as span attributes, `gen_ai.response.
time_to_first_chunk`). OTEL_SEMCONV_STABILITY_OPT_IN holding `gen_ai_latest_experimental` emits those
names alone; without it the deprecated `gen_ai.system` (the name up to 1.36) is sent beside
`gen_ai.provider.name` for backends that read only the older name."""

from __future__ import annotations

INSTRUMENTATION = "toolwire-inspect"
SEMCONV_VERSION = "1.41.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"


class OtelMissing(RuntimeError):
    """The `[otel]` extra is not installed."""

    def __init__(self) -> None:
        super().__init__("OpenTelemetry export needs the otel extra: pip install 'toolwire-inspect[otel]'")


def require() -> None:
    """Raise OtelMissing unless the SDK and the OTLP exporter can be imported."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError as exc:
        raise OtelMissing() from exc
