"""Rewrite the translation goldens from the inputs. Run after a deliberate change, then review
the diff line by line: a golden is only as good as its review.

    .venv/bin/python tests/wire/golden/regenerate.py [DIALECT ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent.parent.parent))

from inspector.wire.dialect import Dialect  # noqa: E402
from inspector.wire.translate import PAIRS, get_bridge  # noqa: E402
from tests.wire import translate_cases as cases  # noqa: E402

CREATED = 1_700_000_000
PATHS = {Dialect.OPENAI_CHAT: "/v1/chat/completions", Dialect.OPENAI_RESPONSES: "/v1/responses",
         Dialect.ANTHROPIC: "/v1/messages", Dialect.GEMINI: "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
         Dialect.BEDROCK: "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"}
UPSTREAM = {
    Dialect.OPENAI_CHAT: (cases.CHAT_RESPONSE, cases.CHAT_STREAM),
    Dialect.OPENAI_RESPONSES: (cases.RESPONSES_RESPONSE, cases.RESPONSES_STREAM),
    Dialect.ANTHROPIC: (cases.ANTHROPIC_RESPONSE, cases.ANTHROPIC_STREAM),
    Dialect.GEMINI: (cases.GEMINI_RESPONSE, cases.GEMINI_STREAM),
    Dialect.BEDROCK: (cases.BEDROCK_RESPONSE, cases.BEDROCK_STREAM),
}


def build(source: Dialect, target: Dialect) -> dict:
    bridge = get_bridge(source, target)
    request = orjson.loads((HERE / "inputs" / f"{source.value}.request.json").read_bytes())
    sent = bridge.request(request, PATHS[source])
    sent.state.created = CREATED
    body, stream = UPSTREAM[target]
    back = bridge.response(body, sent.state)
    relay = bridge.stream(sent.state)
    streamed, _ = cases.run_stream(relay, stream, 5)
    return {
        "request": {"path": PATHS[source], "translated_path": sent.path, "output": sent.payload,
                    "losses": [loss.to_dict() for loss in sent.losses]},
        "response": {"output": back.payload, "losses": [loss.to_dict() for loss in back.losses]},
        "stream": {"output": cases.events(streamed, source), "losses": [loss.to_dict() for loss in relay.losses]},
    }


def main() -> None:
    only = {Dialect(name) for name in sys.argv[1:]}  # e.g. `bedrock`: only the pairs it is in
    for source, target in PAIRS:
        if only and not only & {source, target}:
            continue
        path = HERE / f"{source.value}__{target.value}.json"
        path.write_bytes(orjson.dumps(build(source, target), option=orjson.OPT_INDENT_2) + b"\n")
        print(f"wrote {path.relative_to(HERE)}")


if __name__ == "__main__":
    main()
