"""Agent frameworks that speak Gemini, through the real forwarder in `gemini:openai-chat` mode, to a
fake Chat Completions upstream (issue 8's acceptance): google-adk, pydantic-ai and LiteLLM each run
a whole tool-calling loop, JSON and streamed. Turn 1 answers with a call to the declared tool, turn 2
(once a tool result is in the history) with a final text. Each framework builds its own Gemini
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

from e2e.test_translate_e2e import FakeUpstream, Rig, _sse, rig  # noqa: F401  (rig is the fixture)

# LiteLLM fetches its model price list from GitHub when imported; its bundled copy is enough offline.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("google.adk")
pytest.importorskip("pydantic_ai.models.google")
pytest.importorskip("litellm")

from google.adk.agents import LlmAgent, RunConfig  # noqa: E402
from google.adk.agents.run_config import StreamingMode  # noqa: E402
from google.adk.models import Gemini  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.genai import types  # noqa: E402
import litellm  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.models.google import GoogleModel  # noqa: E402
from pydantic_ai.providers.google import GoogleProvider  # noqa: E402

pytestmark = pytest.mark.frameworks

MODEL = "gemini-2.5-flash"
ARGUMENTS = {"city": "Paris", "days": 3, "unit": "F"}
FINAL = "Sunny in Paris for three days."
FORECAST = {"forecast": "sunny"}


# --- the fake Chat upstream: a call to the declared tool, then the final text ------------------

def tool_loop_upstream(payload: dict[str, Any]) -> tuple[str, Any]:
    name = payload["tools"][0]["function"]["name"]
    answered = any(message["role"] == "tool" for message in payload["messages"])
    arguments = json.dumps(ARGUMENTS, separators=(",", ":"))
    if answered:
        message: dict[str, Any] = {"role": "assistant", "content": FINAL}
        finish = "stop"
    else:
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_fw1", "type": "function", "function": {"name": name, "arguments": arguments}}]}
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
    else:  # the call's arguments split mid-token, as a model streams them
        deltas = [{"role": "assistant", "content": None, "tool_calls": [
                       {"index": 0, "id": "call_fw1", "type": "function",
                        "function": {"name": name, "arguments": arguments[:11]}}]},
                  {"tool_calls": [{"index": 0, "function": {"arguments": arguments[11:]}}]}]
    events = [chunk(d) for d in deltas] + [chunk({}, finish),
                                           {**head, "object": "chat.completion.chunk", "choices": [], "usage": usage}]
    return "sse", _sse(events, done=True)


LOOP = [("gemini:openai-chat", tool_loop_upstream)]

# The loss report lines every framework's loop earns.
STRUCTURED = ("converted /contents/2/parts/0/{}/response: a structured function response is carried as its JSON "
              "text [XL-15]")
USAGE = "synthesised / -> /stream_options: usage is requested so the translated stream can report token counts"


def get_weather(city: str, days: int, unit: Literal["C", "F"] = "C") -> dict[str, str]:
    """Weather forecast for a city."""
    received.append({"city": city, "days": days, "unit": unit})
    return FORECAST


received: list[dict[str, Any]] = []  # the arguments get_weather was called with, in order


@pytest.fixture(autouse=True)
def _fresh_calls():
    received.clear()


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
    """The second request's history from the assistant's call on, with the framework's call id."""
    messages = rig.upstream.received[1][1]["messages"]
    start = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    return messages[start:]


def _loop_tail(call_id: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": "get_weather", "arguments": json.dumps(ARGUMENTS, separators=(",", ":"))}}]},
            {"role": "tool", "tool_call_id": call_id, "content": json.dumps(FORECAST, separators=(",", ":"))}]


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
    assert received == [ARGUMENTS]
    assert _sent_tools(rig) == [[{"type": "function", "function": {
        "name": "get_weather", "description": "Weather forecast for a city.", "parameters": ADK_PARAMETERS}}]] * 2
    assert _turn_two_messages(rig) == _loop_tail("call_fw1")
    usage = [USAGE] if streamed else []
    flows = _assert_clean_flows(rig, streamed, "gm-test-adk",
                                [usage, [STRUCTURED.format("functionResponse"), *usage]])
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
    assert received == [ARGUMENTS]
    assert _sent_tools(rig) == [[{"type": "function", "function": {
        "name": "get_weather", "description": "Weather forecast for a city.",
        "parameters": PYDANTIC_AI_PARAMETERS}}]] * 2
    assert _turn_two_messages(rig) == _loop_tail("call_fw1")
    usage = [USAGE] if streamed else []
    validated = "converted /toolConfig/functionCallingConfig/mode: VALIDATED has no counterpart; written as auto [XL-11]"
    text_only = ("dropped /generationConfig/responseModalities: only text is asked for, the target's default; "
                 "nothing to state")
    signature = "dropped /contents/1/parts/0: thoughtSignature of a gemini call cannot cross to openai-chat [XL-14]"
    flows = _assert_clean_flows(rig, streamed, "gm-test-pydantic-ai", [
        [validated, *usage, text_only],
        [STRUCTURED.format("functionResponse"), validated, signature, *usage, text_only]])
    declared = json.loads(flows[0].request_body)["tools"][0]["functionDeclarations"][0]
    assert declared["parameters_json_schema"] == PYDANTIC_AI_PARAMETERS


# --- LiteLLM: completion(model="gemini/...") with OpenAI-shaped tools ----------------------------

LITELLM_TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather forecast for a city.",
    "parameters": {"type": "object", "required": ["city", "days"], "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"type": "string", "enum": ["C", "F"]}}}}}]


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("rig", LOOP, indirect=True)
def test_litellm_gemini_client_completes_a_tool_loop(rig: Rig, streamed: bool) -> None:
    messages: list[Any] = [{"role": "user", "content": "Paris?"}]

    def complete() -> Any:
        answer = litellm.completion(model=f"gemini/{MODEL}", api_base=rig.forwarder.base_url, api_key="gm-test-litellm",
                                    messages=messages, tools=LITELLM_TOOLS, stream=streamed)
        if streamed:
            answer = litellm.stream_chunk_builder(list(answer), messages=messages)
        return answer.choices[0].message

    call = complete().tool_calls[0]
    assert call.function.name == "get_weather"
    result = get_weather(**json.loads(call.function.arguments))
    messages += [{"role": "assistant", "content": None, "tool_calls": [
                     {"id": call.id, "type": "function",
                      "function": {"name": call.function.name, "arguments": call.function.arguments}}]},
                 {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result, separators=(",", ":"))}]
    assert complete().content == FINAL
    assert received == [ARGUMENTS]
    assert _sent_tools(rig) == [LITELLM_TOOLS] * 2
    # LiteLLM keeps no call id across Gemini turns: the bridge mints one for the call and its result.
    minted = "call_e4b53355ecbcf6add1118d46"
    assert _turn_two_messages(rig) == _loop_tail(minted)
    usage = [USAGE] if streamed else []
    flows = _assert_clean_flows(rig, streamed, "gm-test-litellm", [usage, [
        STRUCTURED.format("function_response"),
        f"synthesised /contents/1/parts/0: the call to 'get_weather' had no id; '{minted}' pairs it with its result "
        "[XL-04]", *usage]])
    assert json.loads(flows[1].request_body)["contents"][1:] == [
        {"role": "model", "parts": [{"function_call": {"name": "get_weather", "args": ARGUMENTS}}]},
        {"role": "user", "parts": [{"function_response": {"name": "get_weather", "response": FORECAST}}]}]
