"""One package per wire dialect, holding everything that is that dialect's own: its rules, its
bridge, its stream reassembly, its fixers, its value ranges, its field spellings and schema
dialect where it has them.

Each package declares its parts once, in its `home` module (`HOME`); the checker, the bridges, the
stream reader, the fixer, the forwarder's provider tables, the mock and the UI find a dialect's parts
through `home(dialect)`, and every table keyed by dialect (name and id rules, profiles, provider
hosts, judged fields, client settings, default routes, intercepts) is derived from the homes
(`homes()`). Adding a dialect means adding its folder, its member of `Dialect`, and its translation
pairs (`translate/bridge.py`); tests/wire/test_homes_conformance.py fails while a home is incomplete.
A provider that serves another dialect on paths of its own (Claude on a cloud's model-invocation
API) is a `Variant` its own folder contributes (`Home.variants`): `home(dialect)` holds the dialect's
own parts with every variant folded in, so the dialect's folder never names that provider's.
Package `__init__` modules stay empty, so reading one part (say `gemini.fields`) does not load the
rest."""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, replace
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import orjson

from ..dialect import Dialect

if TYPE_CHECKING:
    from ..canned import Call
    from ..fix import Fixer
    from ..naming import NameRule
    from ..opaque import Carried
    from ..profiles import Profile
    from ..rules.catalogue import Rule
    from ..rules.spec import Spec
    from ..rules.tolerance import Tolerance
    from ..rules.base import DialectRules, Report
    from ..translate.bridge import DialectBridge
    from ..translate.common import Emit
    from ..translate.model import Result, Tool


class DialectSummary(Protocol):
    """What the flow list shows of a dialect's exchange (dialects/<name>/summary.py)."""

    # Where a response's usage object is, the counts that make the input, those that make the
    # output; None where the dialect reports no usage.
    USAGE: tuple[str, tuple[str, ...], tuple[str, ...]] | None

    def tools(self, payload: dict[str, Any], path: str) -> int: ...

    def tool_calls(self, payload: dict[str, Any]) -> int: ...


class Framing(Protocol):
    """How a dialect's stream travels: the relayed bytes as events and back."""

    # The content types a streamed answer in this framing is sent with (the first is the one written).
    content_types: tuple[str, ...]

    def parse(self, body: bytes) -> list[Any]:
        """The events of a streamed body; a body cut short gives the whole events before the cut."""
        ...

    def encode(self, events: list[Any]) -> list[bytes]:
        """The chunks that stream `events`, one per event (and any closing bytes the framing needs)."""
        ...

    def tail(self, body: bytes) -> list[Any] | bool:
        """The events a hang-up is judged on (the stream's last few), or True/False where the
        framing alone says whether the stream was whole (a closed JSON array; an unclosed event)."""
        ...


class Carrier(Protocol):
    """A framing a variant's streams travel in instead of its dialect's own (each event wrapped in a
    provider's frames): read wherever a body is in it, never written (a mock or translated stream of
    the dialect is written in the dialect's own framing)."""

    content_types: tuple[str, ...]

    def parse(self, body: bytes) -> list[Any] | None:
        """The events of `body`, as `Framing.parse`; None where `body` is not in this framing."""
        ...

    def tail(self, body: bytes) -> list[Any] | bool | None:
        """As `Framing.tail`; None where `body` is not in this framing."""
        ...


class _Carried:
    """A dialect's own framing with the carriers its variants' streams come in: a body is read by the
    first carrier it is in (in the variants' order), else by the dialect's framing, and written in
    the dialect's framing."""

    def __init__(self, own: Framing, carriers: tuple[Carrier, ...]) -> None:
        self._own = own
        self._carriers = carriers
        self.content_types: tuple[str, ...] = (*own.content_types, *(t for c in carriers for t in c.content_types))

    def parse(self, body: bytes) -> list[Any]:
        found = next((events for c in self._carriers if (events := c.parse(body)) is not None), None)
        return self._own.parse(body) if found is None else found

    def encode(self, events: list[Any]) -> list[bytes]:
        return self._own.encode(events)

    def tail(self, body: bytes) -> list[Any] | bool:
        found = next((events for c in self._carriers if (events := c.tail(body)) is not None), None)
        return self._own.tail(body) if found is None else found


@dataclass(frozen=True, slots=True)
class Paths:
    """Which request paths speak the dialect (query string and trailing slash removed)."""

    claims: Callable[[str], bool]
    # Whether the path itself asks for a stream (Gemini's `:streamGenerateContent`); else the body does.
    stream: Callable[[str], bool] = lambda path: False
    # The model a request's URL names, for a dialect whose body does not (Gemini).
    model: Callable[[str], str] | None = None
    # The API version a request's path names, for a dialect whose versions take different fields.
    version: Callable[[str], str] | None = None
    # Paths of the provider's APIs that are not this dialect though their bodies look like it (another
    # maker's InvokeModel on Bedrock): a flow there is not read as any dialect's by its shape.
    elsewhere: Callable[[str], bool] = lambda path: False


def _either(own: Paths, other: Paths) -> Paths:
    """The paths of a dialect and of one of its variants: a path either claims, the stream either
    reads from a path, the model or version the first that finds one names."""
    def first(readers: list[Callable[[str], str]]) -> Callable[[str], str] | None:
        return (lambda path: next((found for read in readers if (found := read(path))), "")) if readers else None

    return Paths(lambda path: own.claims(path) or other.claims(path),
                 stream=lambda path: own.stream(path) or other.stream(path),
                 model=first([read for read in (own.model, other.model) if read is not None]),
                 version=first([read for read in (own.version, other.version) if read is not None]),
                 elsewhere=lambda path: own.elsewhere(path) or other.elsewhere(path))


@dataclass(frozen=True, slots=True)
class Variant:
    """A dialect as one provider serves it on paths of its own, contributed by the folder that holds
    that provider's record (`Home.variants`), which keeps everything it knows of the variant: the
    profile its requests are judged under, the paths that speak it, the framing its streams come in
    where not the dialect's own, and the provider records the dialect's home is to name as well.
    The dialect's home is read with it folded in (`home`)."""

    profile: Profile  # its `dialect` is the dialect served; chosen by its `hosts` and `paths`
    paths: Paths
    framing: Carrier | None = None
    # Records of the contributing folder the served dialect's home names after its own (one record
    # for a provider, whichever dialects it serves).
    providers: tuple[Provider, ...] = ()

    @property
    def dialect(self) -> Dialect:
        return self.profile.dialect


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A request on its way to a provider, as an auth callable sees it: a key placed in a header
    is a change of `headers`; a signer (AWS SigV4) reads the method, URL and body as well."""

    method: str
    url: str
    headers: list[tuple[str, str]]
    body: bytes = b""


@dataclass(frozen=True, slots=True)
class SDKSetting:
    """How a client of one provider is pointed at the forwarder (`clients.SETTINGS`, docs/clients.md)."""

    name: str  # an environment variable, or "MCP" for the URL an MCP client is given in its config
    suffix: str  # appended to the forwarder's base URL
    readers: str  # who reads it
    header: bool = True  # one per dialect fits the TUI's header; `record` prints them all


@dataclass(frozen=True, slots=True)
class Provider:
    """One provider that speaks a dialect: where it answers and how it is authenticated. A provider
    that serves several dialects (OpenAI: Chat and Responses) is one record named by each home."""

    name: str  # the default route's name, and the provider a `--translate` target is sent to
    # Its own API host: the one its published definitions describe and replay sends keys to; "" for
    # a protocol served by anyone (MCP).
    host: str
    # The environment variables its SDK reads a key from, in the order it reads them.
    key_variables: tuple[str, ...]
    # The request with `key` put where the provider wants it (or signed with it); `key` as the
    # client's SDK sent it, without a scheme. None where no key is sent.
    auth: Callable[[Outgoing, str], Outgoing] | None
    # The headers that carry its key or signature, lower case (redacted, dropped when a request moves
    # to another provider).
    auth_headers: frozenset[str] = frozenset()
    # Headers the provider needs on every request, added when a request is translated to it; and the
    # prefix of the provider's own headers, dropped when a request goes to another provider.
    version_headers: tuple[tuple[str, str], ...] = ()
    own_header_prefix: str = ""
    settings: tuple[SDKSetting, ...] = ()
    route: str = ""  # the default route's upstream (the forwarder's `/<name>/...`)
    intercepts: tuple[str, ...] = ()  # proxy mode's host list ("*." for any subdomain, "a.*.b" for one label)
    # Its auth signs the whole request (method, URL, body: AWS SigV4), so a request whose host, path
    # or body changed on its way is signed again, as it goes upstream (proxy/addons.Signing); a
    # request relayed as it came (proxy mode) keeps the client's own signature.
    signs: bool = False
    # How its signature starts in the Authorization header ("AWS4-HMAC-SHA256 "): a request its client
    # signed so is for this provider, whichever dialect it speaks (Claude on Bedrock speaks Anthropic's).
    signature: str = ""


class AuthError(Exception):
    """A provider's auth cannot be applied (a signer that finds no credentials); the message says
    why and what to do."""


def header_auth(header: str, prefix: str = "") -> Callable[[Outgoing, str], Outgoing]:
    """The common case: the key in one header, after `prefix` ("Bearer ")."""
    def put(request: Outgoing, key: str) -> Outgoing:
        kept = [(name, value) for name, value in request.headers if name.lower() != header.lower()]
        return Outgoing(request.method, request.url, [*kept, (header, prefix + key)], request.body)
    return put


@dataclass(frozen=True, slots=True)
class Home:
    dialect: Dialect
    _: KW_ONLY
    rules: DialectRules
    # Stream events (`streams.parse_events`) -> the response a client would hold (None if none),
    # reporting what is wrong with the stream on the way.
    reassemble: Callable[[list[Any], Profile, Report], Any]
    # What a stream event says of the answer a client that read it holds: True when it is whole (the
    # last content event, or the stream's end marker), False when more content was due, None for an
    # event that carries no content (a ping, a usage chunk): the event before it decides.
    is_final: Callable[[Any], bool | None]
    # Whether a parsed document (a JSON object) is a response rather than a request.
    is_response: Callable[[dict[str, Any]], bool]
    # Repairs a parsed payload in place, noting each repair on the fixer (`wire.fix`).
    fix: Callable[[Fixer, dict[str, Any]], None]
    summary: DialectSummary
    # The request bridge; None for a dialect translated document by document (MCP).
    bridge: DialectBridge | None = None
    # What a fake model answers in this dialect (the mock upstream, `inspector.mock`): text and
    # calls as a response body, and as stream events; None where the mock has no model to play (MCP).
    mock_response: Callable[[str | None, list[Call]], dict[str, Any]] | None = None
    mock_events: Callable[..., list[Any]] | None = None
    # The body of the 400 the provider sends for a request it refuses: (message, JSON pointer of the
    # place) -> body; None where the mock plays no provider (MCP).
    mock_error: Callable[[str, str], dict[str, Any]] | None = None
    # Where a request goes: the endpoint under an API prefix ("" where the path names the model),
    # and the whole path for a prefix, model and stream flag; None where there is no HTTP bridge (MCP).
    endpoint: str = ""
    request_path: Callable[[str, str, bool], str] | None = None
    # The request's field holding the conversation's turns (messages, input, contents); "" for MCP.
    history: str = ""
    # The parts every dialect has (the conformance test holds each home to them).
    short: str  # its name in the flow list
    framing: Framing
    paths: Paths
    names: NameRule  # the tool names it accepts (a profile may widen them)
    ids: tuple[re.Pattern[str], int] | None  # the call ids it accepts and their length; None: no calls
    # The framing a request with this query string is answered in, where it is not always `framing`
    # (Gemini streams one JSON array unless the query asks `alt=sse`).
    framing_for: Callable[[str], Framing] | None
    # The top-level fields its rules read, by kind ("request", "response"): a document with none of
    # them is not judged at all (`check` says so rather than calling it clean).
    judged: dict[str, tuple[str, ...]]
    # Whether one parsed stream event is of this dialect (telling a stream's dialect from its events).
    stream_event: Callable[[dict[str, Any]], bool]
    # How surely a parsed document (a request or an answer) is this dialect's by its fields alone: 2
    # for marks no other dialect's documents bear, 1 for a fit that others share (messages), 0 for
    # none. `dialect.from_shape` takes the surest (the first home on a tie).
    marks: Callable[[dict[str, Any]], int]
    # One stream event's gist for the chunk view (type, the text it adds, its index), None for an
    # event that is not this dialect's; the UI sanitises it.
    describe: Callable[[dict[str, Any]], str | None]
    # The tool names a request declares (where MCP toolsets meet, `session.py`); None for MCP.
    declared: Callable[[dict[str, Any]], set[str]] | None
    # Its rule records (records.py): each rule's catalogue entry, and its reference (title, evidence).
    records: Sequence[Rule]
    references: Mapping[str, tuple[str, tuple[str, ...]]]
    profiles: tuple[Profile, ...]  # the first is the dialect's default
    providers: tuple[Provider, ...]  # none for a protocol no provider hosts (MCP)
    # The provider's published definition the spec layer checks a request against; None if none.
    spec: Spec | None = None
    # The opaque state its tool calls carry from a response into the next requests, read from a
    # response (True) or a request's history (False); None where calls carry none (`wire/opaque.py`).
    opaque: Callable[[dict[str, Any], bool], list[Carried]] | None = None
    # Field spellings: a payload in the one spelling the rules read, and the client's own spelling of a
    # pointer into it (Gemini takes camelCase and snake_case); None where a field has one spelling.
    normalise: Callable[[Any], Any] | None = None
    spelled: Callable[[Any, str], str] | None = None
    # What the MCP bridge writes in this dialect (the neutral model's tools and tool results, through
    # the bridge's `Emit`): its tool declarations, and one tool result; None where MCP is not
    # translated into it (MCP itself).
    tool_declaration: Callable[[list[Tool], Emit], Any] | None = None
    tool_result: Callable[[Result, Emit], dict[str, Any]] | None = None
    # Where its endpoints accept what its published definition refuses (tolerances.py): the spec
    # layer and the rules judging the same fields read them (`rules.tolerance`).
    tolerances: tuple[Tolerance, ...] = ()
    # What its folder contributes to other dialects: their variants as its providers serve them
    # (bedrock/invoke.py: Claude on Bedrock's InvokeModel); folded into those dialects' homes by `home`.
    variants: tuple[Variant, ...] = ()


def _folded(own: Home, variants: list[Variant]) -> Home:
    """`own` as the shared layers read it, with the variants of its dialect folded in: their profiles
    and provider records after the dialect's own, their paths claimed, their carriers read."""
    carriers = tuple(v.framing for v in variants if v.framing is not None)
    return replace(own, profiles=(*own.profiles, *(v.profile for v in variants)),
                   providers=(*own.providers, *(p for v in variants for p in v.providers)),
                   paths=functools.reduce(_either, (v.paths for v in variants), own.paths),
                   framing=_Carried(own.framing, carriers) if carriers else own.framing)


def gist(kind: str, index: Any, delta: Any) -> str:
    """The one way a stream event's gist reads (`Home.describe`): its kind ("event" when it names
    none), its index, and the text it adds, quoted so spaces show."""
    out = kind or "event"
    if index is not None:
        out += f" #{index}"
    if isinstance(delta, str):
        out += " " + orjson.dumps(delta).decode()
    return out


def describe_event(event: dict[str, Any], dialect: Dialect | None = None) -> str:
    """One parsed stream event's gist: `dialect`'s reading first, then any dialect's (a stream of
    unknown dialect), else its type and index."""
    first = [home(dialect)] if dialect is not None else []
    for each in [*first, *homes()]:
        said = each.describe(event)
        if said is not None:
            return said
    return gist(str(event.get("type") or ""), event.get("index", event.get("output_index")), None)


def provider(dialect: Dialect | None) -> Provider | None:
    """The provider whose own host answers `dialect` (the first its home names), None for MCP or an
    unknown dialect."""
    if dialect is None:
        return None
    first = home(dialect).providers[:1]
    return first[0] if first and first[0].host else None


def auth_headers() -> frozenset[str]:
    """Every header that carries a provider's key or signature, lower case."""
    return frozenset(name for each in homes() for p in each.providers for name in p.auth_headers)


_HOMES: dict[Dialect, Home] = {}

K = TypeVar("K")
V = TypeVar("V")


def home(dialect: Dialect) -> Home:
    """The parts of `dialect`, with the variants other folders contribute to it folded in (in
    `Dialect` order of their folders). The homes load on first use (they import the shared layers,
    which import this package)."""
    global _HOMES
    if not _HOMES:
        found: dict[Dialect, Home] = {}
        for module in pkgutil.iter_modules(__path__):
            if module.ispkg:
                declared: Home = importlib.import_module(f"{__name__}.{module.name}.home").HOME
                found[declared.dialect] = declared
        contributed = [v for d in Dialect if d in found for v in found[d].variants]
        for served, own in list(found.items()):
            variants = [v for v in contributed if v.dialect is served]
            if variants:
                found[served] = _folded(own, variants)
        _HOMES = found  # whole or not at all: another thread may be reading
    return _HOMES[dialect]


def short_names() -> dict[str, str]:
    """Each dialect's name in the flow list (its `Home.short`), read from its folder's package alone:
    a home imports every layer of its dialect (bridges, fixers, the spec and jsonschema), which the
    list's first frame would otherwise wait for. A folder is named after its dialect's value."""
    return {dialect.value: importlib.import_module(f"{__name__}.{dialect.value.replace('-', '_')}").SHORT
            for dialect in Dialect}


def homes() -> Iterator[Home]:
    """Every dialect's home, in `Dialect` order."""
    home(next(iter(Dialect)))
    return (_HOMES[dialect] for dialect in Dialect)


class Derived(Mapping[K, V], Generic[K, V]):
    """A table derived from the homes, built on first read (the homes import the layers that hold
    these tables, so a table cannot be built when its module loads)."""

    def __init__(self, build: Callable[[], dict[K, V]]) -> None:
        self._build = build
        self._table: dict[K, V] | None = None

    def _get(self) -> dict[K, V]:
        if self._table is None:
            self._table = self._build()
        return self._table

    def __getitem__(self, key: K) -> V:
        return self._get()[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


class DerivedList(Sequence[V], Generic[V]):
    """A list derived from the homes, built on first read (as `Derived`)."""

    def __init__(self, build: Callable[[], list[V]]) -> None:
        self._build = build
        self._items: list[V] | None = None

    def _get(self) -> list[V]:
        if self._items is None:
            self._items = self._build()
        return self._items

    def __getitem__(self, index: Any) -> Any:
        return self._get()[index]

    def __len__(self) -> int:
        return len(self._get())
