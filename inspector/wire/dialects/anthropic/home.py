"""Where the wire layers find this dialect's parts."""

from ...dialect import Dialect
from .. import Home
from . import bridge, fix, mock, rules, shape, stream, summary

HOME = Home(Dialect.ANTHROPIC, rules=rules, reassemble=stream.reassemble, is_final=stream.is_final,
            is_response=shape.is_response, fix=fix.fix, summary=summary,
            mock_response=mock.anthropic_message, mock_events=mock.anthropic_stream, mock_error=mock.anthropic_error, bridge=bridge,
            endpoint=shape.ENDPOINT, request_path=shape.request_path, history="messages")
