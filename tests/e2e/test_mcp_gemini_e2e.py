"""MCP -> Gemini end to end (issue 18): the official mcp client calls a tool with structured output
through the real forwarder; `translate --from mcp --to gemini` (a real subprocess) turns the recorded
tools/list and tools/call into Gemini's declaration and functionResponse; google-genai sends them
through the forwarder to a fake Gemini upstream, which receives the result as an object and the
output schema as the declaration's responseJsonSchema."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import orjson
import pytest
from google import genai
from google.genai import types
from mcp import Client
from typing_extensions import TypedDict

from inspector.analysis import analyse
from inspector.proxy.server import ServerThread
from inspector.store import Store
from inspector.wire.dialect import Dialect
from inspector.wire.dialects.gemini.fields import normalise

from .test_mcp_e2e import forwarding_to
from .test_translate_e2e import FakeUpstream, Rig, _no_errors


class Weather(TypedDict):
    city: str
    celsius: float


def _server() -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("weather")

    @server.tool()
    def forecast(city: str) -> Weather:
        """Tomorrow's weather."""
        return {"city": city, "celsius": 21.5}

    return server


class WeatherServer:
    def __init__(self) -> None:
        self.server = _server()
        self.app = self.server.streamable_http_app(streamable_http_path="/mcp")
        self._context: Any = None
        self.thread = ServerThread(self.app, "127.0.0.1", 0, name="mcp-weather", setup=self._setup,
                                   teardown=self._teardown)

    async def _setup(self) -> None:
        self._context = self.server.session_manager.run()
        await self._context.__aenter__()

    async def _teardown(self) -> None:
        await self._context.__aexit__(None, None, None)


@pytest.fixture
def mcp_rig(tmp_path):
    with forwarding_to(WeatherServer(), tmp_path) as pair:
        yield pair


def gemini_upstream(payload: dict[str, Any]) -> tuple[str, Any]:
    return "json", {"candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model", "parts": [
        {"text": "Sunny, 21.5 degrees."}]}}], "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 5,
                                                              "totalTokenCount": 14}}


def _translate(document: Any) -> Any:
    done = subprocess.run([sys.executable, "-m", "inspector", "translate", "--from", "mcp", "--to", "gemini", "-"],
                          input=orjson.dumps(document), capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    return orjson.loads(done.stdout)


async def test_a_structured_mcp_result_reaches_gemini_as_an_object(mcp_rig, tmp_path) -> None:
    forwarder, store = mcp_rig
    async with Client(f"{forwarder.base_url}/mcp") as client:
        listed = await client.list_tools()
        called = await client.call_tool("forecast", {"city": "Paris"})
    assert called.structured_content == {"city": "Paris", "celsius": 21.5}
    store.flush()
    exchanges = {}
    for row in store.rows():
        analysis = analyse(store.get(row.id))
        if isinstance(analysis.request, dict) and analysis.request.get("method") in ("tools/list", "tools/call"):
            exchanges[analysis.request["method"]] = (analysis.request, analysis.response)
    declarations = _translate(exchanges["tools/list"][1])["tools"]
    item = _translate(list(exchanges["tools/call"]))
    output_schema = listed.tools[0].output_schema
    assert declarations[0]["functionDeclarations"][0]["responseJsonSchema"] == output_schema
    assert item["functionResponse"]["response"] == {"city": "Paris", "celsius": 21.5}

    gemini_store = Store(tmp_path / "gemini.sqlite3")
    with FakeUpstream(gemini_upstream) as upstream:
        rig = Rig(upstream, gemini_store, "")
        client = genai.Client(api_key="gm-test-mcp", http_options=types.HttpOptions(base_url=rig.forwarder.base_url))
        call = types.FunctionCall(id=item["functionResponse"]["id"], name="forecast", args={"city": "Paris"})
        answer = client.models.generate_content(
            model="gemini-2.5-flash",
            contents=[types.Content(role="user", parts=[types.Part(text="Weather in Paris?")]),
                      types.Content(role="model", parts=[types.Part(function_call=call)]),
                      types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse
                                                                   .model_validate(item["functionResponse"]))])],
            config=types.GenerateContentConfig(tools=[types.Tool(function_declarations=[
                types.FunctionDeclaration.model_validate(d) for d in declarations[0]["functionDeclarations"]])]))
        client.close()
        rig.forwarder.stop()
    gemini_store.close()
    assert answer.text == "Sunny, 21.5 degrees."
    (path, sent), = upstream.received
    assert sent["contents"][2]["parts"][0]["functionResponse"]["response"] == {"city": "Paris", "celsius": 21.5}
    # google-genai writes the declaration's fields in snake_case, which Gemini reads as camelCase (GM-16).
    assert normalise(sent)["tools"][0]["functionDeclarations"][0]["responseJsonSchema"] == output_schema
    _no_errors(sent, Dialect.GEMINI)
