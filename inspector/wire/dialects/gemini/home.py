"""Where the wire layers find this dialect's parts."""

from ...dialect import Dialect
from .. import Home
from . import bridge, fix, rules, stream

HOME = Home(Dialect.GEMINI, rules=rules, reassemble=stream.reassemble, fix=fix.fix, bridge=bridge)
