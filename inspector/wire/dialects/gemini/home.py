"""Where the wire layers find this dialect's parts."""

from ...dialect import Dialect
from .. import Home
from . import bridge, fix, mock, rules, shape, stream, summary

HOME = Home(Dialect.GEMINI, rules=rules, reassemble=stream.reassemble, is_final=stream.is_final,
            is_response=shape.is_response, fix=fix.fix, summary=summary,
            mock_response=mock.gemini_response, mock_events=mock.gemini_stream, mock_error=mock.gemini_error, bridge=bridge,
            endpoint=shape.ENDPOINT, request_path=shape.request_path,
            model_in_path=bridge.model_of, history="contents")
