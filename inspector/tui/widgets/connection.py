"""The top bar: what to give the agent (base URLs per SDK, with the access token when one is
needed), where traffic goes, the mode, how many requests the front door refused, whether the
store is failing or the OpenTelemetry export losing spans (under the TUI nobody sees stderr), and
the CONNECT tunnels relayed without being recorded (traffic that bypassed the inspector).

It takes two rows (three with a store problem, one more per config file ignored) at any width:
the mode and base URL, then as many whole settings as fit and the key that shows them all (`c`,
which wraps them over as many rows as they need). A forwarder launched with proxy mode's options (--intercept, --allow-connect,
--upstream-ca) adds a row: HTTPS_PROXY, how to trust the CA, the hosts intercepted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ...clients import agent_settings
from ...proxy.options import ProxyOptions
from ...textsafe import shown
from .. import format as fmt

if TYPE_CHECKING:
    from ...session import AccessState


@dataclass(frozen=True, slots=True)
class Proxying:
    """Proxy mode, for the clients that take no base URL (proxy/connect.py)."""

    url: str  # what HTTPS_PROXY is set to
    # (variable, file) a client sets to trust the CA (proxy/ca.py's trust_settings); () until
    # `toolwire-inspect ca` has written the bundle those variables name.
    trust: tuple[tuple[str, str], ...]
    hosts: tuple[str, ...]  # intercepted besides the known LLM API hosts (--intercept)
    known: int  # the known LLM API hosts, intercepted too

    @classmethod
    def launched(cls, base_url: str, options: ProxyOptions) -> Proxying | None:
        """None unless the forwarder was launched with a proxy-mode option: CONNECT is always
        answered, but the row is worth its height to those who asked for proxy mode."""
        if options == ProxyOptions():
            return None
        from ...proxy.ca import trust_settings  # cryptography's import, only for proxy mode's users
        from ...proxy.connect import DEFAULT_INTERCEPTS, InterceptList

        given = list(options.intercept)
        trust = trust_settings()
        made = trust[0][1].exists()  # a stat, once, when the app starts
        return cls(base_url, tuple((name, str(path)) for name, path in trust) if made else (),
                   tuple(InterceptList(given).hosts[:len(given)]), len(DEFAULT_INTERCEPTS))

    def entries(self) -> list[tuple[tuple[str, str], ...]]:
        """The row's entries by priority, each as its choices (label, value), widest first: what
        the client must set, then how to trust the CA, then what is intercepted."""
        run_ca = ("CA: ", "toolwire-inspect ca")  # the command that makes it and prints how to trust it
        found: list[tuple[tuple[str, str], ...]] = [(("HTTPS_PROXY=", self.url),)]
        if self.trust:
            name, path = self.trust[0]
            found.append(((f"{name}=", path), run_ca))
        else:
            found.append((run_ca,))
        known = f"{self.known} LLM API hosts"
        if self.hosts:
            found.append((("intercepts ", f"{', '.join(self.hosts)} + {known}"),
                          ("intercepts ", f"{len(self.hosts)} given + {known}")))
        else:
            found.append((("intercepts ", known),))
        found += [((f"{name}=", path),) for name, path in self.trust[1:]]
        return found


@dataclass(frozen=True, slots=True)
class Listening:
    base_url: str  # "http://127.0.0.1:8787", or "http://0.0.0.0:8787/t/<token>" beyond loopback
    upstream: str
    mode: str  # "passthrough" or "translate SRC → DST"
    access: AccessState | None = None  # its refusal count is shown once there is one
    accepts: str | None = None  # translate mode: the one dialect clients may speak (None: any)
    # Several upstreams (proxy/routes.py): (name, base URL, the dialects its clients speak, what set
    # it) per route, whose settings replace the single base URL's.
    routes: tuple[tuple[str, str, tuple[str, ...], str], ...] = ()
    proxy: Proxying | None = None  # proxy mode, when launched with its options
    # A config file found and not applied (proxy/routes.RouteTable.ignored), each a line.
    ignored: tuple[str, ...] = ()


class ConnectionBar(Widget):
    DEFAULT_CSS = """
    ConnectionBar { height: auto; background: $panel; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """
    COMPONENT_CLASSES = {"connection-bar--name", "connection-bar--key", "connection-bar--value", "connection-bar--mode",
                         "connection-bar--problem", "connection-bar--refused"}
    DEFAULT_CSS += """
    ConnectionBar > .connection-bar--name { color: $accent; text-style: bold; }
    ConnectionBar > .connection-bar--key { color: $text-muted; }
    ConnectionBar > .connection-bar--value { color: $text; text-style: bold; }
    ConnectionBar > .connection-bar--mode { color: $success; text-style: bold; }
    ConnectionBar > .connection-bar--problem { color: $error; text-style: bold; }
    ConnectionBar > .connection-bar--refused { color: $warning; text-style: bold; }
    """
    # The store's latest failure (Store.last_error), None while it writes fine.
    problem: reactive[str | None] = reactive(None, layout=True)
    # What the live OTLP export dropped or failed to send, None while it loses nothing.
    export_problem: reactive[str | None] = reactive(None, layout=True)
    # This session's tokens in/out as its responses report them (None, None: none reported).
    usage: reactive[tuple[int | None, int | None]] = reactive((None, None))
    # CONNECT tunnels relayed unrecorded (proxy mode, a host not intercepted): how many, and
    # (host:port, tunnels) per target, the most first.
    tunnelled: reactive[tuple[int, tuple[tuple[str, int], ...]]] = reactive((0, ()), layout=True)
    # Why the forwarder's process ended, when it ended on its own (None while it runs).
    stopped: reactive[str | None] = reactive(None, layout=True)
    # Every setting, wrapped over as many rows as needed; else the two-row summary.
    expanded: reactive[bool] = reactive(False, layout=True)
    HINT = "  c: all settings"

    def __init__(self, listening: Listening | None, *, store_path: str, id: str | None = None) -> None:
        super().__init__(id=id)
        self.listening = listening
        self.store_path = store_path
        self._refused_shown = 0

    def on_mount(self) -> None:
        if self.listening is not None and self.listening.access is not None:
            # The forwarder's loop only counts; the bar looks, at its own pace.
            self.set_interval(1.0, self._check_refusals)

    def _check_refusals(self) -> None:
        assert self.listening is not None and self.listening.access is not None
        if self.listening.access.refused != self._refused_shown:
            self.refresh(layout=True)

    def render(self) -> Text:
        text = self._connection()
        if self.listening is not None and self.listening.proxy is not None:
            self._proxy(text, self.listening.proxy)
        for notice in self.listening.ignored if self.listening is not None else ():
            text.append("\n")
            text.append(notice, self.get_component_rich_style("connection-bar--refused", partial=True))
        if self.stopped:
            text.append("\n")
            text.append(f"forwarder stopped ({shown(self.stopped)}): nothing more is recorded",
                        self.get_component_rich_style("connection-bar--problem", partial=True))
        if self.problem:
            text.append("\n")
            text.append(f"store: {shown(self.problem)}", self.get_component_rich_style("connection-bar--problem", partial=True))
        if self.export_problem:
            text.append("\n")
            text.append(self.export_problem, self.get_component_rich_style("connection-bar--refused", partial=True))
        count, hosts = self.tunnelled
        if count:
            # The hosts come from clients' CONNECT lines: shown safe like any wire text.
            targets = ", ".join(shown(host) + (f" ×{tunnels}" if tunnels > 1 else "") for host, tunnels in hosts)
            text.append("\n")
            text.append(f"tunnelled unrecorded {count}: {targets}  (--intercept HOST records them)",
                        self.get_component_rich_style("connection-bar--refused", partial=True))
        return text

    def _connection(self) -> Text:
        name = self.get_component_rich_style("connection-bar--name", partial=True)
        key = self.get_component_rich_style("connection-bar--key", partial=True)
        value = self.get_component_rich_style("connection-bar--value", partial=True)
        mode = self.get_component_rich_style("connection-bar--mode", partial=True)
        refused = self.get_component_rich_style("connection-bar--refused", partial=True)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("toolwire-inspect ", name)
        if self.listening is None:
            text.append("not forwarding (no --upstream): browsing ", key)
            text.append(shown(self.store_path), value)
            return text
        text.append(self.listening.mode, mode)
        if self.usage != (None, None):
            # Before the URLs, which the width may cut: the session's cost so far.
            text.append("  tokens ", key)
            text.append(fmt.usage(*self.usage), value)
        text.append("  listening ", key)
        text.append(shown(self.listening.base_url), value)
        text.append(" → ", key)
        text.append(shown(self.listening.upstream), value)
        # The settings wrap between whole entries, never inside a URL someone will copy.
        if self.listening.routes:
            entries = [(shown(f"{name or '(unnamed)'} {label}"), shown(url), value)
                       for name, base, accepts, _ in self.listening.routes for label, url in agent_settings(base, accepts)]
            sources = {source for *_, source in self.listening.routes}
            if len(sources) == 1:
                entries.append(("routes from ", shown(sources.pop()), key))
            else:
                entries += [(shown(f"{name or '(unnamed)'} from "), shown(source), key)
                            for name, *_, source in self.listening.routes]
        else:
            accepts = self.listening.accepts
            entries = [(label, shown(url), value) for label, url in (agent_settings(self.listening.base_url, (accepts,))
                                                              if accepts else agent_settings(self.listening.base_url))]
        entries.append(("store ", shown(self.store_path), key))
        access = self.listening.access
        if access is not None:
            self._refused_shown = access.refused
            if self._refused_shown:
                # First: the agent's requests are being turned away, which matters before any setting.
                entries.insert(0, (f"refused {self._refused_shown}: ", shown(access.last_refusal or ""), refused))
        room = max(40, self.content_region.width)
        if not self.expanded:
            # One row of the settings that fit whole, in order, and the key to the rest.
            text.append("\n")
            used = 0
            for number, (label, url, style) in enumerate(entries):
                entry = len(label) + len(url) + (2 if number else 0)
                if used + entry + (len(self.HINT) if number < len(entries) - 1 else 0) > room:
                    text.append(self.HINT, key)
                    break
                if number:
                    text.append("  ")
                text.append(label, key)
                text.append(url, style)
                used += entry
            return text
        used = room
        for label, url, style in entries:
            entry = len(label) + len(url) + 2
            if used + entry > room:
                text.append("\n")
                used = 0
            else:
                text.append("  ")
            text.append(label, key)
            text.append(url, style)
            used += entry
        return text

    def _proxy(self, text: Text, proxy: Proxying) -> None:
        """Proxy mode's row: the entries that fit whole, by priority (an entry too wide for what is
        left shows its shorter form), and the key to the rest; `c` wraps every entry in full."""
        key = self.get_component_rich_style("connection-bar--key", partial=True)
        value = self.get_component_rich_style("connection-bar--value", partial=True)
        room = max(40, self.content_region.width)
        entries = proxy.entries()
        if self.expanded:
            chosen = [(label, shown(brief)) for label, brief in (choices[0] for choices in entries)]
        else:
            chosen, taken = [], 0
            for number, choices in enumerate(entries):
                for label, brief in choices:
                    brief = shown(brief)
                    width = len(label) + len(brief) + (2 if chosen else 0)
                    # The hint's room is kept while something may still be left out.
                    hint = len(self.HINT) if number < len(entries) - 1 or len(chosen) < number else 0
                    if not chosen or taken + width + hint <= room:
                        chosen.append((label, brief))
                        taken += width
                        break
        used: int | None = None  # columns taken on the current row; None before the first entry
        for label, brief in chosen:
            width = len(label) + len(brief)
            if used is None or used + 2 + width > room:
                text.append("\n")
                used = width
            else:
                text.append("  ")
                used += 2 + width
            text.append(label, key)
            text.append(brief, value)
        if len(chosen) < len(entries):
            text.append(self.HINT, key)
