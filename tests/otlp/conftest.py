"""A store recorded through a real forwarder by the openai and anthropic SDKs: the demo's failing
turn (an upper-case genai schema) in a tool-calling loop, and a Claude call."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anthropic
import openai
import pytest

from inspector.demo_script import GENAI_SCHEMA_TOOL
from inspector.mock import MockUpstream, json_response
from inspector.proxy import Forwarder
from inspector.store import Store
from inspector.wire.canned import Call
from inspector.wire.dialects.openai_chat.mock import chat_completion
from inspector.proxy.options import Options
from tests.e2e.conftest import Completed

QUESTION = [{"role": "user", "content": "Summarise https://example.org"}]
CALL = Call("scrape_webpage", '{"url": "https://example.org"}', "call_scrape_1")
OPENAI_KEY = "sk-otlp-files-test-5678"
ANTHROPIC_KEY = "sk-ant-otlp-files-test"


@dataclass
class Recorded:
    path: Path
    mock: MockUpstream


def tool_loop(client: openai.OpenAI) -> None:
    first = client.chat.completions.create(model="gpt-4o-mini", messages=QUESTION, tools=[GENAI_SCHEMA_TOOL])
    (call,) = first.choices[0].message.tool_calls
    history = [*QUESTION, first.choices[0].message.model_dump(exclude_none=True),
               {"role": "tool", "tool_call_id": call.id, "content": "Example Domain"}]
    client.chat.completions.create(model="gpt-4o-mini", messages=history, tools=[GENAI_SCHEMA_TOOL])


@pytest.fixture
def recorded(tmp_path) -> Recorded:
    """A closed store: flows #1 and #2 the openai tool loop, #3 a Claude call (upstream: one mock)."""
    path = tmp_path / "flows.sqlite3"
    with MockUpstream() as mock:
        mock.push(json_response(chat_completion(None, [CALL])), json_response(chat_completion("It is a test page.")))
        with Store(path) as store:
            store.new_session(mock.base_url, "127.0.0.1:0")
            completed = Completed()
            forwarder = Forwarder(Options(mock.base_url, port=0), store=store, on_event=completed)
            forwarder.start()
            try:
                with openai.OpenAI(api_key=OPENAI_KEY, base_url=f"{forwarder.base_url}/v1", max_retries=0) as client:
                    tool_loop(client)
                claude = anthropic.Anthropic(api_key=ANTHROPIC_KEY, base_url=forwarder.base_url, max_retries=0)
                claude.messages.create(model="claude-sonnet-4-6", max_tokens=16,
                                       messages=[{"role": "user", "content": "hi"}])
                completed.wait(3)
            finally:
                forwarder.stop()
        yield Recorded(path, mock)
