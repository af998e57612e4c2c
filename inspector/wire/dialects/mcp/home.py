"""Where the wire layers find this dialect's parts."""

from ...dialect import Dialect
from .. import Home
from . import fix, rules, stream, summary

HOME = Home(Dialect.MCP, rules=rules, reassemble=stream.reassemble, fix=fix.fix, summary=summary)
