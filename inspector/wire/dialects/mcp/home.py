"""Where the wire layers find this dialect's parts."""

from ...dialect import Dialect
from .. import Home
from . import fix, rules, shape, stream, summary

HOME = Home(Dialect.MCP, rules=rules, reassemble=stream.reassemble, is_final=stream.is_final,
            is_response=shape.is_response, fix=fix.fix, summary=summary)
