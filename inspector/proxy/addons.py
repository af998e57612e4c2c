"""The forwarder's addons besides the transforms (proxy/transform.py): the credential vault,
replay marking, signing, the recorder (the store) and the notifier (a flow listener).

The first three are hooks of the exchange machine (proxy/exchange.py). The recorder and the notifier
observe: the driver hands them the flow when the machine says Record (started) or Finish
(final); both only queue work (a store write, an event), so nothing here can block the hot path."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

from ..flow import REPLAY_NOTES, Flow, ReplayKind
from ..redact import query_pairs, redact_url, secret_header, secret_values
from ..store import FlowRow, Store
from ..wire.dialect import Dialect, from_path
from ..wire.dialects import AuthError, Provider, homes, provider
from ..wire.dialects import Outgoing as ProviderRequest
from .access import TOKEN_HEADER
from .exchange import Addon, Hook, HookError, Outgoing

REPLAY_HEADER = "x-toolwire-replay-of"
REPLAY_AUTH_HEADER = "x-toolwire-replay-auth"  # proves REPLAY_HEADER comes from this process's replay
# Ours alone: consumed here, never forwarded, never kept as a credential.
CONTROL_HEADERS = frozenset({REPLAY_HEADER, REPLAY_AUTH_HEADER, TOKEN_HEADER})
# Known to no client: only replay_marker() in this process can sign a replay.
_REPLAY_KEY = secrets.token_bytes(32)
_CREDENTIALS_KEPT = 1024


def replay_marker(flow_id: int, *, kind: ReplayKind = ReplayKind.AS_RECORDED) -> list[tuple[str, str]]:
    """The headers that make a request through this process's forwarder a replay of `flow_id`;
    `kind` after the id says what it sends (signed with the id, so nobody else can say so)."""
    value = str(flow_id) if kind is ReplayKind.AS_RECORDED else f"{flow_id} {kind.value}"
    return [(REPLAY_HEADER, value), (REPLAY_AUTH_HEADER, _replay_tag(value))]


def _replay_tag(flow_id: str) -> str:
    return hmac.new(_REPLAY_KEY, flow_id.encode("latin-1"), hashlib.sha256).hexdigest()


class CredentialVault(Addon):
    """Hands each request's credential values to its flow, for the store to scrub wherever they
    show up, and keeps its secret headers in memory for replay (never on disk). Runs as the
    exchange begins: every path after it records the flow."""

    def __init__(self, upstream_secrets: tuple[str, ...] = ()) -> None:
        self.upstream_secrets = upstream_secrets  # the upstream URL's own, and the access token
        self._kept: OrderedDict[int, list[tuple[str, str]]] = OrderedDict()
        self._lock = threading.Lock()

    def hook(self, flow: Flow, headers: Sequence[tuple[str, str]], query: str) -> None:
        flow.secrets = secret_values(list(headers), query) + self.upstream_secrets
        kept = [(k, v) for k, v in headers if secret_header(k) and k.lower() not in CONTROL_HEADERS]
        if query:
            # Gemini's `?key=` becomes its header twin, so replay needs no secret in a URL.
            kept += [("x-goog-api-key", v) for k, v in query_pairs(query) if k == "key"]
        if not kept:
            return None
        with self._lock:
            self._kept[flow.id] = kept
            if len(self._kept) > _CREDENTIALS_KEPT:
                self._kept.popitem(last=False)
        return None

    def credentials(self, flow_id: int) -> list[tuple[str, str]]:
        """The secret headers the client sent with that flow."""
        with self._lock:
            return list(self._kept.get(flow_id, ()))


class ReplayMarking(Addon):
    """Marks a flow as a replay when its request carries this process's signed replay header."""

    def hook(self, flow: Flow, headers: Sequence[tuple[str, str]], query: str) -> Hook | None:
        value = tag = None
        for name, text in headers:
            lower = name.lower()
            if lower == REPLAY_HEADER:
                value = text
            elif lower == REPLAY_AUTH_HEADER:
                tag = text
        if value is None:
            return None
        return _ReplayHook(value, tag)


class _ReplayHook(Hook):
    __slots__ = ("value", "tag")

    def __init__(self, value: str, tag: str | None) -> None:
        self.value = value
        self.tag = tag

    def request(self, flow: Flow, outgoing: Outgoing) -> None:
        if self.tag is not None and hmac.compare_digest(self.tag.encode("latin-1"), _replay_tag(self.value).encode()):
            number, _, kind = self.value.partition(" ")
            flow.replay_of = int(number)
            if kind:
                flow.notes.append(REPLAY_NOTES[ReplayKind(kind)])
        else:
            flow.notes.append(f"ignored {REPLAY_HEADER}: {self.value!r} was not sent by this process's replay")


@cache
def _signers() -> tuple[Provider, ...]:
    """The providers that sign whole requests, and say so in the Authorization header they send."""
    return tuple(p for each in homes() for p in each.providers if p.signs and p.signature)


class Signing(Addon):
    """Signs a request again as it goes to `upstream`, when the provider of its dialect signs whole
    requests (`Provider.signs`: AWS SigV4 covers the host, path and body, which a base-URL route, a
    repair or a translation changed). Last in the chain, after every rewrite; a proxy-mode tunnel,
    relayed as it came, keeps the client's own signature and never gets this hook."""

    def __init__(self, upstream: str, translated_to: str | None = None) -> None:
        self.upstream = upstream.rstrip("/")
        # A translating route's requests go upstream in its target dialect, whatever path they came on.
        self.translated_to = translated_to

    def hook(self, flow: Flow, headers: Sequence[tuple[str, str]], query: str) -> Hook | None:
        dialect = Dialect(self.translated_to) if self.translated_to is not None else from_path(flow.path)
        found = None if dialect is None else provider(dialect)
        if found is not None and not found.signs and self.translated_to is not None:
            return None  # a translation goes to the target's own provider, whoever the client signed for
        if found is None or not found.signs:
            # Another provider serving this dialect (Claude on Bedrock speaks Anthropic's), or a path of no
            # dialect (an embedding, another maker's InvokeModel), when the client signed for it.
            sent = next((value for name, value in headers if name.lower() == "authorization"), "")
            found = next((p for p in _signers() if sent.startswith(p.signature)), None)
        if found is None or found.auth is None:
            return None  # the common case: nothing to sign, no hook on this exchange
        return _SigningHook(self.upstream, found)


class _SigningHook(Hook):
    __slots__ = ("upstream", "provider")

    def __init__(self, upstream: str, signer: Provider) -> None:
        self.upstream = upstream
        self.provider = signer

    def request(self, flow: Flow, outgoing: Outgoing) -> None:
        found = self.provider
        assert found.auth is not None  # Signing gives a hook only to a provider that signs
        key = next((value for name, value in outgoing.headers if name.lower() == "authorization"), "")
        url = self.upstream + outgoing.path + (f"?{outgoing.query}" if outgoing.query else "")
        try:
            signed = found.auth(ProviderRequest(outgoing.method, url, outgoing.headers, outgoing.body), key)
        except AuthError as exc:
            raise HookError(str(exc), "toolwire_no_credentials") from None
        if signed.headers != outgoing.headers:
            outgoing.headers = signed.headers
            flow.notes.append(f"signed again for {found.name} as it went to {redact_url(self.upstream)} (the "
                              "client's signature covers the host it sent to)")


@dataclass(slots=True)
class FlowEvent:
    """`started` comes from the forwarder thread as the request arrives; `completed` comes from
    the store's writer thread once the finished flow is analysed and committed, with its row;
    `turn` from there too, for a turn of a socket (a row of its own, written as the turn ends,
    while its socket may still be open)."""

    kind: Literal["started", "completed", "turn"]
    flow: Flow
    row: FlowRow | None = None


class Notifier:
    """Tells a listener what happened to each flow; a listener's bug fails no request."""

    def __init__(self, on_event: Callable[[FlowEvent], None]) -> None:
        self.on_event = on_event

    def started(self, flow: Flow) -> None:
        self._tell(FlowEvent("started", flow))

    def saved(self, flow: Flow, row: FlowRow) -> None:
        self._tell(FlowEvent("completed", flow, row))

    def turn_saved(self, turn: Flow, row: FlowRow) -> None:
        self._tell(FlowEvent("turn", turn, row))

    def _tell(self, event: FlowEvent) -> None:
        try:
            self.on_event(event)
        except Exception as exc:  # a listener's bug must not fail the request it watches
            print(f"toolwire-inspect: flow listener failed: {exc!r}", file=sys.stderr)


class Recorder:
    """Hands flows to the store (a queue put each), and to the notifier once saved."""

    def __init__(self, store: Store, notifier: Notifier | None = None) -> None:
        self.store = store
        self.notifier = notifier

    def started(self, flow: Flow) -> None:
        notifier = self.notifier
        self.store.submit(flow, on_turn=None if notifier is None else notifier.turn_saved)
        if notifier is not None:
            notifier.started(flow)

    def finished(self, flow: Flow) -> None:
        notifier = self.notifier
        if notifier is None:
            self.store.submit(flow)
        else:
            self.store.submit(flow, lambda row: notifier.saved(flow, row), notifier.turn_saved)
