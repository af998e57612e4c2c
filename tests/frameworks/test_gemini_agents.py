"""Agent frameworks that speak Gemini, through the real forwarder in `gemini:openai-chat` mode, to a
fake Chat Completions upstream (issue 8's acceptance): google-adk, pydantic-ai and LiteLLM each run
a whole tool-calling loop, JSON and streamed. Turn 1 answers with two parallel calls to the declared
tool, turn 2 (once the tool results are in the history) with a final text. Each framework builds its own Gemini
request (ADK and pydantic-ai through google-genai with `parameters_json_schema`; LiteLLM with its own
snake_case `function_declarations`, `function_call` and `function_response` parts), so the tool
receiving exactly the model's arguments proves the whole path: schema out, call back, result out.

Opt-in (`pip install -e '.[test,frameworks]'`, `pytest -m frameworks`): the frameworks are heavy
and not needed by the product."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, Literal

import pytest

from inspector.analysis import analyse
from inspector.flow import FlowState

from e2e.test_translate_e2e import Rig, _sse, rig  # noqa: F401  (rig is the fixture)

# LiteLLM fetches its model price list from GitHub when imported; its bundled copy is enough offline.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("google.adk")
pytest.importorskip("pydantic_ai.models.google")
pytest.importorskip("litellm")

from google.adk.agents import LlmAgent, RunConfig
from google.adk.agents.run_config import StreamingMode
from google.adk.models import Gemini
from google.adk.runners import InMemoryRunner
from google.genai import types
import litellm
from pydantic_ai import Agent
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.providers.google import GoogleProvider

pytestmark = pytest.mark.frameworks

MODEL = "gemini-2.5-flash"
# The model's two parallel calls (ids as the Chat upstream mints them) and the tool's answers.
CALLS = [("call_fw1", {"city": "Paris", "days": 3, "unit": "F"}),
         ("call_fw2", {"city": "Oslo", "days": 1, "unit": "C"})]
FINAL = "Sunny in Paris and in Oslo."


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


# --- the fake Chat upstream: two calls to the declared tool, then the final text ----------------

def tool_loop_upstream(payload: dict[str, Any]) -> tuple[str, Any]:
    name = payload["tools"][0]["function"]["name"]
    answered = any(message["role"] == "tool" for message in payload["messages"])
    if answered:
        message: dict[str, Any] = {"role": "assistant", "content": FINAL}
        finish = "stop"
    else:
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": _compact(arguments)}}
            for call_id, arguments in CALLS]}
        finish = "tool_calls"
    usage = {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}
    head = {"id": "chatcmpl-fw", "created": 1, "model": payload["model"]}
    if not payload.get("stream"):
        return "json", {**head, "object": "chat.completion", "usage": usage,
                        "choices": [{"index": 0, "finish_reason": finish, "message": message}]}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**head, "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

    if answered:  # the text in two pieces, as a model streams it
        deltas = [{"role": "assistant", "content": FINAL[:9]}, {"content": FINAL[9:]}]
    else:  # both calls open, then their arguments interleave, split mid-token
        deltas = [{"role": "assistant", "content": None}]
        deltas += [{"tool_calls": [{"index": i, "id": call_id, "type": "function",
                                    "function": {"name": name, "arguments": ""}}]}
                   for i, (call_id, _) in enumerate(CALLS)]
        for cut in (slice(None, 11), slice(11, None)):
            deltas += [{"tool_calls": [{"index": i, "function": {"arguments": _compact(arguments)[cut]}}]}
                       for i, (_, arguments) in enumerate(CALLS)]
    events = [chunk(d) for d in deltas] + [chunk({}, finish),
                                           {**head, "object": "chat.completion.chunk", "choices": [], "usage": usage}]
    return "sse", _sse(events, done=True)


LOOP = [("gemini:openai-chat", tool_loop_upstream)]

# The loss report lines every framework's loop earns.
STRUCTURED = ("converted /contents/2/parts/{}/{}/response: a structured function response is carried as its JSON "
              "text [XL-15]")
USAGE = "synthesised / -> /stream_options: usage is requested so the translated stream can report token counts"


def get_weather(city: str, days: int, unit: Literal["C", "F"] = "C") -> dict[str, str]:
    """Weather forecast for a city."""
    received.append({"city": city, "days": days, "unit": unit})
    return _forecast(city)


def _forecast(city: str) -> dict[str, str]:
    return {"forecast": f"sunny in {city}"}


received: list[dict[str, Any]] = []  # the arguments get_weather was called with


@pytest.fixture(autouse=True)
def _fresh_calls():
    received.clear()


def _assert_tool_got_the_models_arguments() -> None:
    # Frameworks run parallel calls concurrently: the order of the calls is theirs.
    assert sorted(received, key=lambda arguments: arguments["city"]) == sorted(
        (arguments for _, arguments in CALLS), key=lambda arguments: arguments["city"])


def _sent_tools(rig: Rig) -> list[Any]:
    return [payload["tools"] for _, payload in rig.upstream.received]


def _assert_clean_flows(rig: Rig, streamed: bool, key: str, notes: list[list[str]]) -> list[Any]:
    """Both turns recorded, complete, judged clean on both sides of the bridge, with exactly this loss
    report each; the client's Gemini key went upstream as Chat's bearer token."""
    assert [r.headers.get("authorization") for r in rig.upstream.requests] == [f"Bearer {key}"] * 2
    flows = rig.flows(2)
    assert [f.notes for f in flows] == notes
    assert [(f.state, f.error, f.status, f.streamed) for f in flows] == [(FlowState.COMPLETE, None, 200, streamed)] * 2
    assert [[(v.rule, v.pointer, v.severity) for v in analyse(f).violations] for f in flows] == [[], []]
    assert [(path, payload.get("stream", False)) for path, payload in rig.upstream.received] == [
        ("/v1/chat/completions", streamed)] * 2
    return flows


def _turn_two_messages(rig: Rig) -> list[dict[str, Any]]:
    """The second request's history from the assistant's calls on."""
    messages = rig.upstream.received[1][1]["messages"]
    start = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    return messages[start:]


def _loop_tail(call_ids: list[str]) -> list[dict[str, Any]]:
    """Turn 2's history as Chat must see it: both calls, then each result under its own call's id."""
    pairs = list(zip(call_ids, (arguments for _, arguments in CALLS), strict=True))
    return [{"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": _compact(arguments)}}
                for call_id, arguments in pairs]},
            *({"role": "tool", "tool_call_id": call_id, "content": _compact(_forecast(arguments["city"]))}
              for call_id, arguments in pairs)]


UPSTREAM_IDS = [call_id for call_id, _ in CALLS]


# --- google-adk: LlmAgent with a Python function tool ------------------------------------------

ADK_PARAMETERS = {"type": "object", "title": "get_weatherParams", "required": ["city", "days"], "properties": {
    "city": {"title": "City", "type": "string"},
    "days": {"title": "Days", "type": "integer"},
    "unit": {"default": "C", "enum": ["C", "F"], "title": "Unit", "type": "string"}}}


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("rig", LOOP, indirect=True)
def test_adk_agent_completes_a_tool_loop(rig: Rig, streamed: bool) -> None:
    model = Gemini(model=MODEL, base_url=rig.forwarder.base_url, client_kwargs={"api_key": "gm-test-adk"})
    agent = LlmAgent(name="weather", model=model, instruction="Use the tool.", tools=[get_weather])
    runner = InMemoryRunner(agent=agent, app_name="frameworks")
    config = RunConfig(streaming_mode=StreamingMode.SSE if streamed else StreamingMode.NONE)

    async def run() -> str:
        session = await runner.session_service.create_session(app_name="frameworks", user_id="u")
        final = ""
        async for event in runner.run_async(user_id="u", session_id=session.id, run_config=config,
                                            new_message=types.Content(role="user", parts=[types.Part(text="Paris?")])):
            if event.is_final_response() and event.content and event.content.parts:
                final += "".join(part.text or "" for part in event.content.parts)
        await runner.close()
        return final

    assert asyncio.run(run()) == FINAL
    _assert_tool_got_the_models_arguments()
    assert _sent_tools(rig) == [[{"type": "function", "function": {
        "name": "get_weather", "description": "Weather forecast for a city.", "parameters": ADK_PARAMETERS}}]] * 2
    assert _turn_two_messages(rig) == _loop_tail(UPSTREAM_IDS)
    usage = [USAGE] if streamed else []
    flows = _assert_clean_flows(rig, streamed, "gm-test-adk", [usage, [
        STRUCTURED.format(0, "functionResponse"), STRUCTURED.format(1, "functionResponse"), *usage]])
    declared = json.loads(flows[0].request_body)["tools"][0]["functionDeclarations"][0]
    assert declared["parameters_json_schema"] == ADK_PARAMETERS


# --- pydantic-ai: Agent with @agent.tool_plain on a GoogleModel ---------------------------------

PYDANTIC_AI_PARAMETERS = {"type": "object", "additionalProperties": False, "required": ["city", "days"],
                          "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                                         "unit": {"default": "C", "enum": ["C", "F"], "type": "string"}}}


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("rig", LOOP, indirect=True)
def test_pydantic_ai_agent_completes_a_tool_loop(rig: Rig, streamed: bool) -> None:
    provider = GoogleProvider(api_key="gm-test-pydantic-ai", base_url=rig.forwarder.base_url)
    agent = Agent(GoogleModel(MODEL, provider=provider))
    agent.tool_plain(get_weather)

    async def run() -> str:
        if not streamed:
            return (await agent.run("Paris?")).output
        async with agent.run_stream("Paris?") as result:
            return await result.get_output()

    assert asyncio.run(run()) == FINAL
    _assert_tool_got_the_models_arguments()
    assert _sent_tools(rig) == [[{"type": "function", "function": {
        "name": "get_weather", "description": "Weather forecast for a city.",
        "parameters": PYDANTIC_AI_PARAMETERS}}]] * 2
    assert _turn_two_messages(rig) == _loop_tail(UPSTREAM_IDS)
    usage = [USAGE] if streamed else []
    validated = ("converted /toolConfig/functionCallingConfig/mode: VALIDATED has no counterpart; written as auto "
                 "[XL-11]")
    text_only = ("dropped /generationConfig/responseModalities: only text is asked for, the target's default; "
                 "nothing to state")
    signature = "dropped /contents/1/parts/0: thoughtSignature of a gemini call cannot cross to openai-chat [XL-14]"
    flows = _assert_clean_flows(rig, streamed, "gm-test-pydantic-ai", [
        [validated, *usage, text_only],
        [STRUCTURED.format(0, "functionResponse"), STRUCTURED.format(1, "functionResponse"), validated, signature,
         *usage, text_only]])
    declared = json.loads(flows[0].request_body)["tools"][0]["functionDeclarations"][0]
    assert declared["parameters_json_schema"] == PYDANTIC_AI_PARAMETERS


# --- LiteLLM: completion(model="gemini/...") with OpenAI-shaped tools ----------------------------

# The ids the bridge mints for LiteLLM's id-less calls: derived from the request, so stable.
MINTED = ["call_e7609008427793fe8116e785", "call_eeb6495e26d6a8460ccae218"]
LITELLM_TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather forecast for a city.",
    "parameters": {"type": "object", "required": ["city", "days"], "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"type": "string", "enum": ["C", "F"]}}}}}]


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("rig", LOOP, indirect=True)
def test_litellm_gemini_client_completes_a_tool_loop(rig: Rig, streamed: bool) -> None:
    messages: list[Any] = [{"role": "user", "content": "Paris?"}]

    def complete() -> Any:
        answer = litellm.completion(model=f"gemini/{MODEL}", api_base=f"{rig.forwarder.base_url}/v1beta",
                                    api_key="gm-test-litellm", messages=messages, tools=LITELLM_TOOLS, stream=streamed)
        if streamed:
            answer = litellm.stream_chunk_builder(list(answer), messages=messages)
        return answer.choices[0].message

    calls = complete().tool_calls
    assert [call.function.name for call in calls] == ["get_weather", "get_weather"]
    messages.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": call.id, "type": "function",
         "function": {"name": call.function.name, "arguments": call.function.arguments}} for call in calls]})
    messages.extend({"role": "tool", "tool_call_id": call.id,
                     "content": _compact(get_weather(**json.loads(call.function.arguments)))} for call in calls)
    assert complete().content == FINAL
    assert received == [arguments for _, arguments in CALLS]  # the application runs them in order
    assert _sent_tools(rig) == [LITELLM_TOOLS] * 2
    # LiteLLM sends Gemini no call ids: the bridge mints one per call, deterministically, and pairs
    # each function_response with its call by name, first come first served (XL-05).
    assert _turn_two_messages(rig) == _loop_tail(MINTED)
    usage = [USAGE] if streamed else []
    flows = _assert_clean_flows(rig, streamed, "gm-test-litellm", [usage, [
        STRUCTURED.format(0, "function_response"), STRUCTURED.format(1, "function_response"),
        *(f"synthesised /contents/1/parts/{i}: the call to 'get_weather' had no id; '{call_id}' pairs it with its "
          "result [XL-04]" for i, call_id in enumerate(MINTED)), *usage]])
    assert json.loads(flows[1].request_body)["contents"][1:] == [
        {"role": "model", "parts": [{"function_call": {"name": "get_weather", "args": arguments}}
                                    for _, arguments in CALLS]},
        {"role": "user", "parts": [
            {"function_response": {"name": "get_weather", "response": _forecast(arguments["city"])}}
            for _, arguments in CALLS]}]
