"""Agent frameworks pointed at the forwarder the way the README's *Pointing clients at it* says, each
running a whole tool loop through a real passthrough forwarder to the fake upstream of its dialect:
openai-agents (Responses API), LangGraph's prebuilt agent over LangChain's ChatOpenAI, LangChain's
ChatAnthropic, and LiteLLM's Gemini client through GEMINI_API_BASE. The tool gets the model's
arguments, the final text comes back, and every flow is recorded complete with no error.

Opt-in with the other framework tests (`pytest -m frameworks`)."""

from __future__ import annotations

import os

import pytest

from e2e.conftest import passthrough  # noqa: F401  (the fixture)
from inspector.mock import json_response
from inspector.wire.canned import Call
from inspector.wire.dialects.anthropic.mock import anthropic_message
from inspector.wire.dialects.gemini.mock import gemini_response
from inspector.wire.dialects.openai_chat.mock import chat_completion
from inspector.wire.dialects.openai_responses.mock import responses_result

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price list from the network
pytest.importorskip("agents")
pytest.importorskip("langgraph.prebuilt")
pytest.importorskip("langchain_openai")
pytest.importorskip("langchain_anthropic")
pytest.importorskip("litellm")

pytestmark = pytest.mark.frameworks

CALL = Call("get_weather", '{"city":"Paris"}', "call_fw_1")
FINAL = "Sunny in Paris."


@pytest.fixture
def env(passthrough, monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_URL",
                 "GEMINI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-frameworks-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-frameworks-test")
    return passthrough, monkeypatch


def get_weather(city: str) -> str:
    """Weather forecast for a city."""
    asked.append(city)
    return f"sunny in {city}"


asked: list[str] = []


@pytest.fixture(autouse=True)
def _fresh_tool():
    asked.clear()


def _recorded(completed, count: int) -> list[tuple[str, int, str, int]]:
    return [(row.path, row.status, row.state, row.errors) for row in completed.wait(count)]


def test_openai_agents_runs_a_tool_loop_through_openai_base_url(env):
    (mock, store, forwarder, completed), monkeypatch = env
    monkeypatch.setenv("OPENAI_BASE_URL", f"{forwarder.base_url}/v1")
    from agents import Agent, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)  # traces would go to api.openai.com
    mock.push(json_response(responses_result(calls=[CALL])), json_response(responses_result(FINAL)))
    agent = Agent(name="weather", instructions="Answer with the tool.", tools=[function_tool(get_weather)],
                  model="gpt-4o-mini")
    result = Runner.run_sync(agent, "Weather in Paris?")
    assert (result.final_output, asked) == (FINAL, ["Paris"])
    assert _recorded(completed, 2) == [("/v1/responses", 200, "complete", 0)] * 2


def test_langgraph_agent_over_chatopenai_runs_a_tool_loop(env):
    (mock, store, forwarder, completed), monkeypatch = env
    monkeypatch.setenv("OPENAI_BASE_URL", f"{forwarder.base_url}/v1")
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    mock.push(json_response(chat_completion(calls=[CALL])), json_response(chat_completion(FINAL)))
    agent = create_react_agent(ChatOpenAI(model="gpt-4o-mini", max_retries=0), [get_weather])
    result = agent.invoke({"messages": [("user", "Weather in Paris?")]})
    assert (result["messages"][-1].content, asked) == (FINAL, ["Paris"])
    assert _recorded(completed, 2) == [("/v1/chat/completions", 200, "complete", 0)] * 2


def test_langchain_chatanthropic_reads_anthropic_base_url(env):
    (mock, store, forwarder, completed), monkeypatch = env
    monkeypatch.setenv("ANTHROPIC_BASE_URL", forwarder.base_url)
    from langchain_anthropic import ChatAnthropic

    mock.push(json_response(anthropic_message(calls=[CALL])))
    model = ChatAnthropic(model="claude-sonnet-4-6", max_retries=0).bind_tools([get_weather])
    answer = model.invoke("Weather in Paris?")
    assert answer.tool_calls == [{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_fw_1",
                                  "type": "tool_call"}]
    assert _recorded(completed, 1) == [("/v1/messages", 200, "complete", 0)]


def test_litellm_gemini_client_reads_gemini_api_base_with_its_version(env):
    (mock, store, forwarder, completed), monkeypatch = env
    monkeypatch.setenv("GEMINI_API_BASE", f"{forwarder.base_url}/v1beta")
    import litellm

    mock.push(json_response(gemini_response(FINAL)))
    answer = litellm.completion(model="gemini/gemini-2.5-flash", api_key="AIza-frameworks-test",
                                messages=[{"role": "user", "content": "Weather in Paris?"}])
    assert answer.choices[0].message.content == FINAL
    # The path Google serves: without /v1beta in the base, LiteLLM asks for /models/… (a 404 upstream).
    assert _recorded(completed, 1) == [("/v1beta/models/gemini-2.5-flash:generateContent", 200, "complete", 0)]


def test_litellm_openai_models_and_pydantic_ai_read_openai_base_url(env):
    (mock, store, forwarder, completed), monkeypatch = env
    monkeypatch.setenv("OPENAI_BASE_URL", f"{forwarder.base_url}/v1")
    import litellm
    from pydantic_ai import Agent

    mock.push(json_response(chat_completion(FINAL)), json_response(chat_completion(calls=[CALL])),
              json_response(chat_completion(FINAL)))
    answer = litellm.completion(model="openai/gpt-4o-mini", messages=[{"role": "user", "content": "Paris?"}])
    assert answer.choices[0].message.content == FINAL
    agent = Agent("openai-chat:gpt-4o-mini", tools=[get_weather])
    assert (agent.run_sync("Weather in Paris?").output, asked) == (FINAL, ["Paris"])
    assert _recorded(completed, 3) == [("/v1/chat/completions", 200, "complete", 0)] * 3
