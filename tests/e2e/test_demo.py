"""The built-in demo really runs: scripted agent → forwarder → fake upstream, every turn recorded
and the seeded defects caught with their rule ids."""

import subprocess
import sys

from inspector.analysis import analyse
from inspector.demo import demo_upstream, run_agent
from inspector.demo_script import DEMO_API_KEY, TURNS
from inspector.proxy import Forwarder
from inspector.store import Store


def test_demo_turns_are_recorded_with_their_violations(tmp_path):
    store = Store(tmp_path / "demo.sqlite3")
    with demo_upstream(interval=0.0) as upstream, Forwarder(upstream.base_url, store=store, port=0) as forwarder:
        statuses = run_agent(forwarder.base_url)
        store.flush()
    assert statuses == [turn.status for turn in TURNS]
    found = {row.id: sorted((v.rule, v.severity.value, v.pointer) for v in analyse(store.get(row.id)).violations)
             for row in store.rows()}
    store.close()
    params = "/tools/0/function/parameters"
    assert found == {
        1: [],
        2: [],
        3: [  # seed 000: a genai Schema sent as-is
            ("OC-05", "error", params + "/properties/render_js/type"),
            ("OC-05", "error", params + "/properties/url/type"),
            ("OC-05", "error", params + "/type"),
            ("OC-05", "warning", params + "/properties/render_js/nullable"),
            ("OC-05", "warning", params + "/propertyOrdering"),
        ],
        4: [  # seed 003: double-encoded arguments, tool message without content
            ("OC-15", "warning", "/messages/1/tool_calls/0/function/arguments"),
            ("OC-17", "error", "/messages/2/content"),
        ],
        5: [("OC-02", "error", "/tools/2/function/name"), ("XL-03", "error", "/tools/1/function/name")],
        6: [("OC-18", "error", "/messages/3/tool_call_id"), ("OC-19", "error", "/messages/1/tool_calls/0/id")],
        7: [],
        8: [("AN-09", "error", "/messages/2/content/0")],
        9: [],
    }
    for path in tmp_path.iterdir():
        assert DEMO_API_KEY.encode() not in path.read_bytes(), path.name


def test_demo_headless_command_prints_every_flow(tmp_path):
    done = subprocess.run([sys.executable, "-m", "inspector", "demo", "--headless", "--store", str(tmp_path / "d.db")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [f"#{i}" for i in range(1, len(TURNS) + 1)]
