"""Where the wire layers find this dialect's parts."""

from ...dialect import Dialect
from ...rules.spec import Spec
from ...violations import Severity
from .. import Home, Paths
from . import SHORT
from . import bridge, fields, fix, mock, opaque, providers, raw_predict, records, rules, shape, stream, summary, tolerances

HOME = Home(Dialect.GEMINI, rules=rules, reassemble=stream.reassemble, is_final=stream.is_final,
            is_response=shape.is_response, fix=fix.fix, summary=summary,
            mock_response=mock.gemini_response, mock_events=mock.gemini_stream, mock_error=mock.gemini_error, bridge=bridge,
            endpoint=shape.ENDPOINT, request_path=shape.request_path,
            history="contents",
            short=SHORT, framing=stream.FRAMING, framing_for=stream.framing_for,
            paths=Paths(shape.claims, stream=shape.stream_path, model=bridge.model_of, version=shape.api_version), names=shape.NAMES,
            ids=shape.IDS, judged=shape.JUDGED, stream_event=shape.stream_event, marks=shape.marks, describe=shape.describe,
            records=records.RULES, references=records.REFERENCE, declared=rules.declared, profiles=providers.PROFILES, providers=(providers.GEMINI, providers.VERTEX, providers.CODE_ASSIST),
            normalise=fields.normalise, spelled=fields.spelled,
            spec=Spec("gemini.json", "gemini", "GM-20", "GM-19", Severity.INFO, owned=("Schema",), api=shape.api),
            tool_declaration=bridge.emit_tools, tool_result=bridge.emit_tool_result, tolerances=tolerances.TOLERANCES, opaque=opaque.carried,
            variants=(raw_predict.VARIANT,))
