"""Where the wire layers find this dialect's parts."""

from ...dialect import Dialect
from .. import Home
from ..openai_chat.mock import openai_error
from . import bridge, fix, mock, rules, shape, stream, summary

HOME = Home(Dialect.OPENAI_RESPONSES, rules=rules, reassemble=stream.reassemble, is_final=stream.is_final,
            is_response=shape.is_response, fix=fix.fix, summary=summary,
            mock_response=mock.responses_result, mock_events=mock.responses_stream, mock_error=openai_error,
            bridge=bridge,
            endpoint=shape.ENDPOINT, request_path=shape.request_path, history="input")
