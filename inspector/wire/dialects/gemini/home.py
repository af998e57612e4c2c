"""Where the wire layers find this dialect's parts."""

from ...dialect import Dialect
from .. import Home
from . import bridge, fix, rules, stream, summary

HOME = Home(Dialect.GEMINI, rules=rules, reassemble=stream.reassemble, fix=fix.fix, summary=summary, bridge=bridge,
            model_in_path=bridge.model_of)
