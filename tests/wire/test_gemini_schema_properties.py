"""Properties of Gemini's schema dialect: a genai Schema crossing Gemini -> Chat -> Gemini comes back
the same, and any JSON Schema sent to Gemini passes the checker on both Google APIs."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import examples
from inspector.wire import check
from inspector.wire.dialect import Dialect
from inspector.wire.translate import get_bridge

CHAT, GEM = Dialect.OPENAI_CHAT, Dialect.GEMINI
GEM_PATH = "/v1beta/models/gemini-2.5-flash:generateContent"
SETTINGS = settings(max_examples=examples(80), deadline=None, suppress_health_check=list(HealthCheck))
NAMES = st.text("abcdefgh_", min_size=1, max_size=6)

# genai Schemas in the form the conversions write (nullable on anyOf branches, not beside anyOf).
_SCALAR = st.one_of(
    st.just({"type": "STRING"}), st.just({"type": "NUMBER"}), st.just({"type": "INTEGER"}),
    st.just({"type": "BOOLEAN"}), st.just({"type": "STRING", "format": "date-time"}),
    st.just({"type": "INTEGER", "format": "int64"}),
    st.lists(st.text("xyz-", min_size=1, max_size=3), min_size=1, max_size=3, unique=True).map(
        lambda values: {"type": "STRING", "enum": values}))


def _described(schema: dict[str, Any], nullable: bool, description: str | None) -> dict[str, Any]:
    out = dict(schema)
    if nullable:
        out["nullable"] = True
    if description:
        out["description"] = description
    return out


def _extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    objects = st.dictionaries(NAMES, children, min_size=1, max_size=3).flatmap(lambda props: st.fixed_dictionaries(
        {"type": st.just("OBJECT"), "properties": st.just(props)},
        optional={"required": st.lists(st.sampled_from(sorted(props)), unique=True, min_size=1)}))
    arrays = children.map(lambda items: {"type": "ARRAY", "items": items})
    unions = st.lists(st.one_of(_SCALAR, objects), min_size=2, max_size=3, unique_by=repr).flatmap(
        lambda branches: st.booleans().map(lambda nullable: {"anyOf": [
            {**b, "nullable": True} if nullable else b for b in branches]}))
    nodes = st.one_of(objects, arrays)
    return st.one_of(
        st.builds(_described, nodes, st.booleans(), st.none() | st.text("ab ", min_size=1, max_size=4)), unions)


GENAI = st.recursive(st.builds(_described, _SCALAR, st.booleans(), st.none() | st.just("d")), _extend,
                     max_leaves=12)
ROOTS = st.dictionaries(NAMES, GENAI, min_size=1, max_size=4).map(lambda props: {"type": "OBJECT",
                                                                                  "properties": props})


def _gemini(parameters: dict[str, Any]) -> dict[str, Any]:
    return {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "tools": [{"functionDeclarations": [{"name": "f", "parameters": parameters}]}]}


def _errors(payload: Any, dialect: Dialect, profile: str | None = None) -> list[tuple[str, str]]:
    return [(v.rule, v.pointer) for v in check.check_request(payload, dialect, profile)
            if v.severity.value == "error"]


@SETTINGS
@given(ROOTS)
def test_genai_schemas_cross_to_chat_and_back_unchanged(parameters: dict[str, Any]) -> None:
    assert _errors(_gemini(parameters), GEM, "vertex") == []
    to_chat = get_bridge(GEM, CHAT).request(_gemini(parameters), GEM_PATH)
    assert _errors(to_chat.payload, CHAT) == []
    back = get_bridge(CHAT, GEM).request(to_chat.payload, "/v1/chat/completions")
    assert _errors(back.payload, GEM, "vertex") == []
    assert back.payload["tools"][0]["functionDeclarations"][0]["parameters"] == parameters


# JSON Schemas as clients write them, including what Gemini's subset refuses.
_JSON_LEAF = st.one_of(
    st.sampled_from([{"type": t} for t in ("string", "number", "integer", "boolean", "null")]),
    st.sampled_from([{}, {"type": "array"}, {"type": "array", "items": {}}, {"const": "k"}, {"const": 3},
                     {"type": ["string", "null"]}, {"type": ["integer", "string"]}, {"enum": [1, "a", None]},
                     {"type": ["integer", "string", "null"], "maxLength": 2, "description": "t"},
                     {"type": "string", "format": "email"}, {"type": "string", "format": "date-time"},
                     {"type": "number", "format": "float"}, {"description": "anything"}, True]))


def _json_extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    props = st.dictionaries(NAMES, children, min_size=1, max_size=3)
    objects = st.builds(lambda p, extra: {"type": "object", "properties": p, **extra}, props, st.sampled_from([
        {}, {"additionalProperties": False}, {"additionalProperties": {"type": "string"}}, {"title": "T"}]))
    return st.one_of(
        objects,
        children.map(lambda items: {"type": "array", "items": items, "minItems": 1}),
        st.lists(children, min_size=1, max_size=3).map(lambda branches: {"anyOf": branches}),
        st.lists(children, min_size=1, max_size=3).map(lambda branches: {"oneOf": branches, "description": "u"}),
        st.lists(children, min_size=2, max_size=3).map(lambda branches: {"anyOf": branches, "maxLength": 4}),
        st.lists(children, min_size=1, max_size=2).map(lambda branches: {"anyOf": [*branches, {"type": "null"}]}),
        st.lists(children, min_size=1, max_size=2).map(lambda branches: {"allOf": branches}),
    )


JSON_SCHEMA = st.recursive(_JSON_LEAF, _json_extend, max_leaves=10)
JSON_ROOTS = st.one_of(
    st.dictionaries(NAMES, JSON_SCHEMA, min_size=1, max_size=4).map(lambda p: {"type": "object", "properties": p}),
    st.lists(st.dictionaries(NAMES, JSON_SCHEMA, min_size=1, max_size=3), min_size=2, max_size=3).map(
        lambda branches: {"anyOf": [{"type": "object", "properties": p} for p in branches]}),
    st.dictionaries(NAMES, JSON_SCHEMA, min_size=1, max_size=3).map(lambda p: {
        "type": "object", "properties": p, "anyOf": [{"required": [sorted(p)[0]]}, {"required": [sorted(p)[-1]]}]}),
)


@SETTINGS
@given(JSON_ROOTS)
def test_any_json_schema_reaches_gemini_in_its_subset(parameters: dict[str, Any]) -> None:
    request = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}],
               "tools": [{"type": "function", "function": {"name": "f", "parameters": parameters}}]}
    sent = get_bridge(CHAT, GEM).request(request, "/v1/chat/completions")
    declaration = sent.payload["tools"][0]["functionDeclarations"][0]
    assert set(declaration) == {"name", "parameters"}
    assert declaration["parameters"]["type"] == "OBJECT"
    assert _errors(sent.payload, GEM) == []
    assert _errors(sent.payload, GEM, "vertex") == []
    # Every rewrite is reported, each under a rule id.
    assert all(loss.rule for loss in sent.losses if loss.source.startswith("/tools/"))
