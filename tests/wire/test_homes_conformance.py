"""Every `Dialect` member has a whole home (wire/dialects/<name>/home.py), and every table keyed by
dialect is the one its home declares: adding a dialect is its folder, its enum member and its
translation pairs. A home missing a part, or a shared table that forgot a dialect, fails here."""

from __future__ import annotations

import orjson
import pytest

from inspector.clients import SETTINGS
from inspector.proxy.connect import DEFAULT_INTERCEPTS
from inspector.proxy.routes import DEFAULT_ROUTES
from inspector.textsafe import shown
from inspector.tui.format import DIALECT_SHORT
from inspector.tui.view import describe_event
from inspector.wire import profiles
from inspector.wire.canned import Call
from inspector.wire.dialect import Dialect, from_path, is_stream_path
from inspector.wire.dialects import Outgoing, Variant, home, homes
from inspector.wire.naming import ID_RULES, NAME_RULES
from inspector.wire.rules.catalogue import RULES
from inspector.wire.rules.reference import dialects, reference
from inspector.wire.rules.spec import SPECS
from inspector.wire.streams import ends_complete, is_stream_type

ALL = list(Dialect)


def test_every_member_has_its_own_home_and_the_homes_are_in_enum_order() -> None:
    assert [each.dialect for each in homes()] == ALL
    assert [home(d).dialect for d in ALL] == ALL


@pytest.mark.parametrize("dialect", ALL, ids=lambda d: d.value)
def test_a_home_has_every_part(dialect: Dialect) -> None:
    parts = home(dialect)
    for name in ("rules", "reassemble", "is_final", "is_response", "fix", "summary", "framing", "paths", "names",
                 "judged", "stream_event", "marks", "describe", "records", "references", "profiles", "providers"):
        assert getattr(parts, name) is not None, name
    assert parts.short and parts.short == parts.short.strip()
    assert set(parts.judged) == {"request", "response"} and all(parts.judged.values())
    assert parts.framing.content_types and callable(parts.framing.parse) and callable(parts.framing.encode)
    assert parts.profiles and parts.providers
    if parts.bridge is None:
        # Translated document by document (MCP): no model to play, no request path, no HTTP bridge.
        assert (parts.mock_response, parts.mock_events, parts.mock_error, parts.request_path, parts.declared) == (
            None, None, None, None, None)
        return
    # A model dialect: the mock plays it, requests have a path, the MCP bridge writes into it.
    for name in ("mock_response", "mock_events", "mock_error", "request_path", "declared", "tool_declaration",
                 "tool_result", "spec", "ids"):
        assert getattr(parts, name) is not None, name
    assert parts.history


@pytest.mark.parametrize("dialect", ALL, ids=lambda d: d.value)
def test_the_shared_tables_are_the_homes(dialect: Dialect) -> None:
    parts = home(dialect)
    assert NAME_RULES[dialect] is parts.names
    assert (ID_RULES.get(dialect), SPECS.get(dialect)) == (parts.ids, parts.spec)
    assert profiles.DEFAULTS[dialect] == parts.profiles[0].name
    assert profiles.get(None, dialect) is parts.profiles[0]
    assert all(profiles.PROFILES[p.name] is p for p in parts.profiles)
    assert DIALECT_SHORT[dialect.value] == parts.short
    for provider in parts.providers:
        assert set(provider.intercepts) <= set(DEFAULT_INTERCEPTS)
        assert [s.name for s in provider.settings] == [
            s.name for s in SETTINGS if dialect.value in s.dialects and s.name in {x.name for x in provider.settings}]
        if provider.route:
            assert (provider.name, provider.route) in {(r.name, r.upstream) for r in DEFAULT_ROUTES}
        if provider.host:
            assert profiles.is_provider_host(provider.host, dialect) is (provider is parts.providers[0])
        if provider.auth is not None:
            # A provider that signs takes a key only in its API key's shape (Bedrock's ABSK…), and signs otherwise.
            key = "ABSK-k" if provider.signs else "k"
            signed = provider.auth(Outgoing("POST", f"https://{provider.host}/", [("accept", "*/*")], b"{}"), key)
            assert signed.headers[0] == ("accept", "*/*") and len(signed.headers) == 2
            assert signed.headers[1][0].lower() in provider.auth_headers


VARIANTS = [(each.dialect, variant) for each in homes() for variant in each.variants]


def test_some_folder_contributes_a_variant() -> None:
    assert [(by, v.profile.name) for by, v in VARIANTS] == [
        (Dialect.GEMINI, "vertex-anthropic"), (Dialect.BEDROCK, "bedrock-anthropic")]


@pytest.mark.parametrize(("by", "variant"), VARIANTS, ids=lambda x: getattr(getattr(x, "profile", None), "name", ""))
def test_a_variant_is_read_as_part_of_the_dialect_it_serves(by: Dialect, variant: Variant) -> None:
    # Another dialect's: a home's own profiles are its `profiles`.
    assert variant.dialect is not by
    served = home(variant.dialect)
    assert served.profiles.count(variant.profile) == 1 and served.profiles[0] is not variant.profile
    assert profiles.PROFILES[variant.profile.name] is variant.profile
    assert variant.profile.hosts or variant.profile.paths  # chosen by where the request goes
    assert all(served.providers.count(p) == 1 and p in home(by).providers for p in variant.providers)
    if variant.framing is not None:
        assert set(variant.framing.content_types) <= set(served.framing.content_types)
        assert served.framing.content_types[0] not in variant.framing.content_types  # written in the dialect's own
        assert variant.framing.parse(b"") is None and variant.framing.tail(b"") is None


@pytest.mark.parametrize("dialect", ALL, ids=lambda d: d.value)
def test_its_rules_have_records_and_references(dialect: Dialect) -> None:
    parts = home(dialect)
    ids = [rule.id for rule in parts.records]
    # A home may keep the rules of a protocol beside its own under a prefix of their own (the
    # Responses home: OpenAI Realtime's RT- socket rules); each prefix is in id order, and is one home's.
    prefixes = list(dict.fromkeys(rule_id.rsplit("-", 1)[0] for rule_id in ids))
    for prefix in prefixes:
        numbers = [int(i.rsplit("-", 1)[1]) for i in ids if i.rsplit("-", 1)[0] == prefix]
        assert sorted(numbers) == numbers
        assert {other.dialect for other in homes()
                if any(rule.id.rsplit("-", 1)[0] == prefix for rule in other.records)} == {dialect}
    assert set(parts.references) == set(ids)
    for rule in parts.records:
        assert RULES[rule.id] is rule
        entry = reference(rule.id)
        assert entry is not None and entry.title and entry.evidence
        assert dialects(rule.id) == (dialect.value,)


@pytest.mark.parametrize("dialect", [d for d in ALL if home(d).bridge is not None], ids=lambda d: d.value)
@pytest.mark.parametrize("stream", [False, True])
def test_its_paths_claim_the_requests_it_sends(dialect: Dialect, stream: bool) -> None:
    parts = home(dialect)
    assert parts.request_path is not None
    path = parts.request_path("/v1", "some-model", stream)
    assert from_path(path) is dialect
    if parts.paths.stream(path):
        assert stream and is_stream_path(path)
    if parts.paths.model is not None:
        # A dialect whose own path names the model reads it back; one whose body names it reads it
        # only from a provider's path (Claude on Vertex, an Azure deployment), not from its own.
        assert parts.paths.model(path) == ("" if parts.endpoint else "some-model")


@pytest.mark.parametrize("dialect", [d for d in ALL if home(d).mock_events is not None], ids=lambda d: d.value)
@pytest.mark.parametrize("query", ["", "alt=sse"])
def test_its_framing_round_trips_its_mock_stream_and_describes_each_event(dialect: Dialect, query: str) -> None:
    parts = home(dialect)
    assert parts.mock_events is not None
    events = parts.mock_events("Hi there", [Call("get_weather", '{"city":"Paris"}')])
    framing = parts.framing_for(query) if parts.framing_for is not None else parts.framing
    body = b"".join(framing.encode(events))
    expected = [event[1] if isinstance(event, tuple) else event for event in events]
    assert framing.parse(body) == expected
    assert parts.framing.parse(body) == expected  # the dialect's reader takes whatever form it answers in
    assert ends_complete(body, dialect) is True
    assert ends_complete(body[:len(body) // 2], dialect) is False  # cut mid-answer
    assert any(parts.stream_event(e) for e in expected if isinstance(e, dict))
    if framing.content_types[0] != "application/json":
        assert is_stream_type(framing.content_types[0])
    for event in expected:
        if isinstance(event, dict):
            said = parts.describe(event)
            gist = describe_event(orjson.dumps(event).decode(), dialect)
            assert gist == shown(gist) and gist
            assert said is None or said == gist
