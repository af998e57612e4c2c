"""Hostile payloads through a real forwarder (loopback) in front of a real mock upstream, in the two
modes that rewrite bodies. What cannot be rewritten faithfully is relayed untouched (repair) or
refused with a clear 400 (translate), and every flow ends recorded, complete or error, never pending."""

from __future__ import annotations

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.flow import FlowState
from inspector.mock import Canned, json_response
from inspector.wire.dialects.openai_chat.mock import chat_completion

CHAT = "/v1/chat/completions"
JSON = {"content-type": "application/json"}
DEEP = "[" * 300 + "]" * 300  # orjson reads it, cannot write it back
WIDE = "18446744073709551616"  # 2**64: orjson reads it as 1.8446744073709552e+19


def chat_request(raw_extra: str | None = None, arguments: str = '{"city": "Oslo"}') -> bytes:
    """A Chat request with a defect repair mode fixes (a dotted tool name), optionally one more
    top-level member written exactly as given."""
    payload = {"model": "gpt-test", "tools": [{"type": "function", "function": {
        "name": "weather.get", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
        "messages": [{"role": "user", "content": "Oslo?"},
                     {"role": "assistant", "content": None, "tool_calls": [
                         {"id": "call_1", "type": "function", "function": {"name": "weather.get",
                                                                           "arguments": arguments}}]},
                     {"role": "tool", "tool_call_id": "call_1", "content": "4°C"}]}
    body = orjson.dumps(payload)
    return body if raw_extra is None else body[:-1] + b',"x_extra":' + raw_extra.encode() + b"}"


def _flow(rig, store):
    (event,) = rig.events.completed()
    store.flush()
    return store.get(event.flow.id)


REPAIR_CASES = {
    "nested-300": (chat_request(DEEP),
                   "repair: cannot repair the request faithfully (nested more than 254 levels deep, deeper than can "
                   "be written back); forwarded unchanged"),
    "wide-integer": (chat_request(WIDE),
                     f"repair: cannot repair the request faithfully (the integer {WIDE} does not fit in 64 bits and "
                     "would be rounded); forwarded unchanged"),
    "double-encoded-arguments-with-a-wide-integer": (
        chat_request(arguments=orjson.dumps('{"n": ' + WIDE + "}").decode()),
        f"repair: cannot repair the request faithfully (arguments: the integer {WIDE} does not fit in 64 bits and "
        "would be rounded); forwarded unchanged"),
    "arguments-nested-5000": (
        chat_request(arguments="[" * 5000 + "]" * 5000),
        "repair: cannot repair the request faithfully (arguments: nested more than 1024 levels deep, deeper than "
        "can be read); forwarded unchanged"),
    "infinite-number": (chat_request("1e400"), "repair: the request is not JSON; forwarded unchanged"),
    "lone-surrogate": (chat_request('"\\ud800"'), "repair: the request is not JSON; forwarded unchanged"),
}


@pytest.mark.parametrize("case", sorted(REPAIR_CASES))
def test_repair_relays_untouched_what_it_cannot_rewrite_faithfully(make_rig, mock, store, case):
    body, note = REPAIR_CASES[case]
    rig = make_rig(repair=True)
    mock.push(json_response(chat_completion("fine")))
    response = rig.client.post(CHAT, content=body, headers=JSON)
    assert response.status_code == 200
    assert [r.body for r in mock.received] == [body]
    flow = _flow(rig, store)
    assert (flow.state, flow.error, flow.notes, flow.upstream_request_body) == (FlowState.COMPLETE, None, [note], None)


TRANSLATE_CASES = {
    "nested-300": (chat_request(DEEP), "cannot translate request: /: cannot translate faithfully: nested more than 254 "
                                       "levels deep, deeper than can be written back"),
    "wide-integer": (chat_request(WIDE), f"cannot translate the request faithfully: the integer {WIDE} does not fit "
                                         "in 64 bits and would be rounded"),
    "arguments-with-a-wide-integer": (
        chat_request(arguments='{"n": ' + WIDE + "}"),
        f"cannot translate request: /: cannot translate faithfully: arguments: the integer {WIDE} does not fit in 64 "
        "bits and would be rounded"),
    # Arguments that read fine but, as Anthropic's `input` object two levels down, are too deep to write.
    "arguments-nested-253": (
        chat_request(arguments='{"a": ' + "[" * 253 + "]" * 253 + "}"),
        "cannot translate the request faithfully: nested more than 254 levels deep, deeper than can be written back"),
    "arguments-nested-5000": (
        chat_request(arguments="[" * 5000 + "]" * 5000),
        "cannot translate request: /: cannot translate faithfully: arguments: nested more than 1024 levels deep, "
        "deeper than can be read"),
}


@pytest.mark.parametrize("case", sorted(TRANSLATE_CASES))
def test_translate_refuses_with_a_recorded_400_what_it_cannot_rewrite_faithfully(make_rig, mock, store, case):
    body, message = TRANSLATE_CASES[case]
    rig = make_rig(translate="openai-chat:anthropic")
    response = rig.client.post(CHAT, content=body, headers=JSON)
    assert (response.status_code, response.json()) == (
        400, {"error": {"type": "toolwire_translate_error", "message": message, "param": None, "code": 400}})
    assert mock.received == []
    flow = _flow(rig, store)
    assert (flow.state, flow.error, flow.request_body) == (FlowState.ERROR, message, body)


def anthropic_call(raw_input: str) -> bytes:
    """An Anthropic message whose one tool_use input is written exactly as given."""
    return (b'{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"tool_use",'
            b'"id":"toolu_1","name":"weather_get","input":' + raw_input.encode() + b'}],"stop_reason":"tool_use",'
            b'"usage":{"input_tokens":1,"output_tokens":1}}')


@pytest.mark.parametrize(("upstream_body", "message"), [
    (anthropic_call('{"a": ' + DEEP + "}"),
     "cannot translate response: /: cannot translate faithfully: nested more than 254 levels deep, deeper than can "
     "be written back"),
    (anthropic_call('{"n": ' + WIDE + "}"),
     f"cannot translate response: the integer {WIDE} does not fit in 64 bits and would be rounded"),
], ids=["nested-300", "wide-integer"])
def test_an_upstream_answer_that_cannot_be_translated_faithfully_ends_the_flow_as_an_error(
        make_rig, mock, store, upstream_body, message):
    rig = make_rig(translate="openai-chat:anthropic")
    mock.push(Canned(status=200, headers=[("content-type", "application/json")], body=upstream_body))
    response = rig.client.post(CHAT, content=chat_request(), headers=JSON)
    assert (response.status_code, response.json()) == (
        502, {"error": {"type": "toolwire_translate_error", "message": message, "param": None, "code": 502}})
    flow = _flow(rig, store)
    assert (flow.state, flow.error, flow.upstream_response_body) == (FlowState.ERROR, message, upstream_body)


# --- the property: whatever hostile value a request carries, the client gets an answer and the flow
# is recorded finished -----------------------------------------------------------------------------

HOSTILE_VALUES = st.one_of(
    st.integers(1, 1024).map(lambda depth: "[" * depth + "]" * depth),
    st.integers(1, 1024).map(lambda depth: '{"a":' * depth + "0" + "}" * depth),
    st.sampled_from([WIDE, "-9223372036854775809", "9" * 500, "1e400", "-1e400", "NaN", "Infinity", '"\\ud800"',
                     '"\\udc00\\ud800"', '{"k": 1, "k": 2}', "1.00000000000000000000001"]),
)


MODES = ["repair", "openai-chat:anthropic", "openai-chat:openai-responses", "openai-chat:gemini"]


@pytest.fixture
def rigs(make_rig):
    """One forwarder per mode, made on first use and shared by the examples (the mock upstream
    answers each in the dialect of the path it is sent to)."""
    made = {}

    def rig_for(mode):
        if mode not in made:
            made[mode] = make_rig(repair=True) if mode == "repair" else make_rig(translate=mode)
        return made[mode]

    return rig_for


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(MODES), HOSTILE_VALUES, st.booleans())
def test_hostile_requests_always_get_an_answer_and_a_finished_flow(rigs, mode, raw, in_arguments):
    rig = rigs(mode)
    done = sum(1 for e in rig.events.all if e.kind == "completed")
    body = chat_request(arguments=raw) if in_arguments else chat_request(raw)
    response = rig.client.post(CHAT, content=body, headers=JSON)
    event = rig.events.completed(done + 1)[-1]
    assert event.row.state in ("complete", "error")
    assert event.row.status == response.status_code
    if event.row.state == "error":
        assert response.json()["error"]["message"] == event.row.error


UPSTREAM_ANSWERS = {  # per mode, an upstream answer with one value written exactly as given
    "repair": '{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,'
              '"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"x_extra":%s}',
    "openai-chat:anthropic": anthropic_call('{"a": %s}').decode(),
    "openai-chat:gemini": '{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"weather_get",'
                          '"args":{"a":%s}}}]},"finishReason":"STOP"}]}',
    "openai-chat:openai-responses": '{"id":"resp_1","object":"response","model":"m","status":"completed","output":'
                                    '[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"weather_get",'
                                    '"arguments":"{}","status":"completed","x_extra":%s}]}',
}


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(MODES), HOSTILE_VALUES, st.booleans())
def test_hostile_upstream_answers_always_reach_the_client_and_a_finished_flow(rigs, mock, mode, raw, streamed):
    rig = rigs(mode)
    done = sum(1 for e in rig.events.all if e.kind == "completed")
    answer = (UPSTREAM_ANSWERS[mode] % raw).encode()
    if streamed:
        mock.push(Canned(status=200, headers=[("content-type", "text/event-stream")],
                         body=b"data: " + answer + b"\n\ndata: [DONE]\n\n"))
    else:
        mock.push(Canned(status=200, headers=[("content-type", "application/json")], body=answer))
    body = chat_request()[:-1] + (b',"stream":true}' if streamed else b"}")
    try:
        response = rig.client.post(CHAT, content=body, headers=JSON)
        status = response.status_code
    except httpx.RemoteProtocolError:  # a stream cut when it could not go on: the flow says why
        status = None
    event = rig.events.completed(done + 1)[-1]
    assert event.row.state in ("complete", "error")
    if status is None:
        assert (event.row.state, event.row.status) == ("error", 200)
    else:
        assert event.row.status == status
        if status == 502:
            assert (event.row.state, response.json()["error"]["message"]) == ("error", event.row.error)


WIDE_MESSAGE = (f"cannot translate the request faithfully: the integer {WIDE} does not fit in 64 bits and would "
                "be rounded")


@pytest.mark.parametrize(("spec", "path", "answer"), [
    ("openai-chat:anthropic", CHAT,
     {"error": {"type": "toolwire_translate_error", "message": WIDE_MESSAGE, "param": None, "code": 400}}),
    ("openai-responses:openai-chat", "/v1/responses",
     {"error": {"type": "toolwire_translate_error", "message": WIDE_MESSAGE, "param": None, "code": 400}}),
    ("anthropic:openai-chat", "/v1/messages",
     {"type": "error", "error": {"type": "toolwire_translate_error", "message": WIDE_MESSAGE}}),
    ("gemini:openai-chat", "/v1beta/models/gemini-x:generateContent",
     {"error": {"code": 400, "message": WIDE_MESSAGE, "status": "INVALID_ARGUMENT"}}),
], ids=["chat", "responses", "anthropic", "gemini"])
def test_a_translate_refusal_is_answered_in_the_clients_own_error_shape(make_rig, mock, store, spec, path, answer):
    rig = make_rig(translate=spec)
    body = b'{"model": "m", "n": ' + WIDE.encode() + b"}"
    response = rig.client.post(path, content=body, headers=JSON)
    assert (response.status_code, response.json()) == (400, answer)
    assert mock.received == []
    flow = _flow(rig, store)
    assert (flow.state, flow.error, flow.response_body) == (FlowState.ERROR, WIDE_MESSAGE, response.content)


def test_an_untranslatable_answer_reaches_a_gemini_client_as_a_gemini_error(make_rig, mock, store):
    rig = make_rig(translate="gemini:openai-chat")
    mock.push(Canned(status=200, headers=[("content-type", "application/json")],
                     body=b'{"id":"c1","object":"chat.completion","choices":[],"usage":{"prompt_tokens":' +
                     WIDE.encode() + b"}}"))
    response = rig.client.post("/v1beta/models/gemini-x:generateContent", headers=JSON,
                               content=b'{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}')
    message = f"cannot translate response: the integer {WIDE} does not fit in 64 bits and would be rounded"
    assert (response.status_code, response.json()) == (
        502, {"error": {"code": 502, "message": message, "status": "UNAVAILABLE"}})
    flow = _flow(rig, store)
    assert (flow.state, flow.error) == (FlowState.ERROR, message)


def test_an_answer_cut_before_its_translation_gets_a_clear_502_not_a_bare_500(make_rig, mock, store):
    rig = make_rig(translate="openai-chat:anthropic")
    answer = anthropic_call('{"city": "Oslo"}')
    mock.push(Canned(status=200, headers=[("content-type", "application/json")],
                     chunks=[(0.0, answer[:40]), (0.0, answer[40:])], cut_after=1))
    response = rig.client.post(CHAT, content=chat_request(), headers=JSON)
    message = "upstream broke off after 0 chunks: the response body was cut short"
    assert (response.status_code, response.json()) == (
        502, {"error": {"type": "toolwire_upstream_error", "message": message, "param": None, "code": 502}})
    flow = _flow(rig, store)
    assert (flow.state, flow.error, flow.upstream_response_body) == (FlowState.ERROR, message, answer[:40])


def test_an_answer_gone_silent_before_its_translation_gets_a_clear_504(make_rig, mock, store):
    rig = make_rig(translate="openai-chat:anthropic", timeout=0.2)
    answer = anthropic_call('{"city": "Oslo"}')
    mock.push(Canned(status=200, headers=[("content-type", "application/json")],
                     chunks=[(0.0, answer[:40]), (1.0, answer[40:])]))
    response = rig.client.post(CHAT, content=chat_request(), headers=JSON)
    message = "upstream went silent for 0.2 s after 0 chunks"
    assert (response.status_code, response.json()) == (
        504, {"error": {"type": "toolwire_upstream_timeout", "message": message, "param": None, "code": 504}})
    flow = _flow(rig, store)
    assert (flow.state, flow.error, flow.upstream_response_body) == (FlowState.ERROR, message, answer[:40])
