"""Where the wire layers find this dialect's parts."""

from ...dialect import Dialect
from .. import Home
from . import rules, stream

HOME = Home(Dialect.MCP, rules=rules, reassemble=stream.reassemble)
