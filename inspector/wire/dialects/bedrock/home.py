"""Where the wire layers find this dialect's parts."""

from ...dialect import Dialect
from ...rules.spec import Spec
from ...violations import Severity
from .. import Home, Paths
from . import SHORT
from . import bridge, fix, invoke, mock, providers, records, rules, shape, spec, stream, summary, tolerances

HOME = Home(Dialect.BEDROCK, rules=rules, reassemble=stream.reassemble, is_final=stream.is_final,
            is_response=shape.is_response, fix=fix.fix, summary=summary,
            mock_response=mock.converse_response, mock_events=mock.converse_stream, mock_error=mock.converse_error,
            bridge=bridge, endpoint=shape.ENDPOINT, request_path=shape.request_path, history="messages",
            short=SHORT, framing=stream.FRAMING, framing_for=None,
            paths=Paths(shape.claims, stream=shape.stream_path, model=shape.model_of), names=shape.NAMES,
            ids=shape.IDS, judged=shape.JUDGED, stream_event=shape.stream_event, marks=shape.marks, describe=shape.describe,
            records=records.RULES, references=records.REFERENCE, declared=rules.declared,
            profiles=providers.PROFILES, providers=(providers.BEDROCK,),
            spec=Spec("", "converse", "BR-13", "BR-13", Severity.WARNING, document=spec.document),
            tool_declaration=bridge.emit_tools, tool_result=bridge.emit_tool_result, tolerances=tolerances.TOLERANCES,
            variants=(invoke.VARIANT,))
