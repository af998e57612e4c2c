"""`E` in a real terminal: the app suspends, runs $EDITOR (a real program that rewrites the file, as
a user saving in vim would), and sends what it saved as an edited replay of the flow."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx

from inspector.flow import EDITED_REPLAY_NOTE
from inspector.mock import MockUpstream
from inspector.store import Store

from .flows import clean_request
from .test_terminal import Terminal

EDITOR = """\
import pathlib, sys
path = pathlib.Path(sys.argv[1])
path.write_text(path.read_text().replace("Weather in Paris?", "Weather in Lyon?"))
"""


def test_E_edits_in_the_users_editor_and_sends_the_edit(tmp_path: Path) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text(EDITOR)
    with MockUpstream() as upstream:
        terminal = Terminal([sys.executable, "-m", "inspector", "--upstream", upstream.base_url, "--port", "0",
                             "--store", "flows.sqlite3"], tmp_path,
                            env={"EDITOR": f"{sys.executable} {editor}", "VISUAL": ""})
        port = terminal.expect(r"OPENAI_BASE_URL=http://127\.0\.0\.1:(\d+)/v1").group(1)
        response = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=clean_request())
        assert response.status_code == 200
        terminal.expect(r"/v1/chat/completions\s+chat\s+gpt-4o-mini\s+200")
        terminal.send(b"E")
        assert upstream.wait_answered(2, timeout=20), terminal.output[-3000:]
        terminal.expect(r"↻E#1")
        terminal.send(b"\x11")  # ctrl+q
        assert terminal.wait() == 0
    sent = [r.body for r in upstream.received]
    assert len(sent) == 2 and b"Weather in Lyon?" in sent[1] and b"Weather in Paris?" not in sent[1]
    with Store(tmp_path / "flows.sqlite3") as store:
        assert [(r.id, r.replay_of, r.replay_edited) for r in store.rows()] == [(1, None, False), (2, 1, True)]
        assert store.get(2).notes == [EDITED_REPLAY_NOTE]
        assert store.get(2).request_body == sent[1]
