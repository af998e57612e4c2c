"""Where the wire layers find this dialect's parts."""

from ...dialect import Dialect
from .. import Home
from . import bridge, fix, mock, rules, stream, summary

HOME = Home(Dialect.OPENAI_CHAT, rules=rules, reassemble=stream.reassemble, fix=fix.fix, summary=summary,
            mock_response=mock.chat_completion, mock_events=mock.chat_stream, bridge=bridge)
