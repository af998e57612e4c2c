"""Where the wire layers find this dialect's parts."""

from ...dialect import Dialect
from ...sse import SSE
from .. import Home, Paths
from . import SHORT
from . import fix, providers, records, rules, shape, stream, summary

HOME = Home(Dialect.MCP, rules=rules, reassemble=stream.reassemble, is_final=stream.is_final,
            is_response=shape.is_response, fix=fix.fix, summary=summary,
            short=SHORT, framing=SSE, framing_for=None, paths=Paths(shape.claims), names=shape.NAMES, ids=None,
            judged=shape.JUDGED, stream_event=shape.stream_event, marks=shape.marks, describe=shape.describe,
            records=records.RULES, references=records.REFERENCE, declared=None, profiles=providers.PROFILES, providers=(providers.MCP,))
