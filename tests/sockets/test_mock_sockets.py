"""`mock` serves recorded sockets over real WebSockets: a whole socket frame by frame, and one turn's
fixture answering its response.create with the recorded events, at the recorded pacing."""

from __future__ import annotations

import json
import time

import orjson
from websockets.sync.client import connect

from inspector.formats import fixture, registry
from inspector.mock import FixtureRoute, MockUpstream
from inspector.store import Store
from tests.sockets.recorded import record_socket, seeded


def export(store: Store, flow_id: int, path) -> list[FixtureRoute]:
    path.write_bytes(registry.render("json", [fixture.from_store(store, store.get(flow_id))]))
    return FixtureRoute.load(path)


def test_a_turn_s_fixture_answers_its_response_create_over_a_socket(tmp_path):
    with Store(tmp_path / "s.db") as store:
        socket = record_socket(store, seeded(), gap=0.05)
        turn = store.get(socket.id + 3)
        recorded = [orjson.loads(frame.payload) for frame in store.frames(socket.id)[10:]]
        routes = export(store, turn.id, tmp_path / "turn.json")
    with MockUpstream(fixtures=routes) as mock, connect(mock.base_url.replace("http", "ws") + "/v1/responses") as ws:
        started = time.monotonic()
        ws.send(json.dumps({"type": "response.create", **orjson.loads(turn.request_body)}))
        got = [json.loads(ws.recv(timeout=10)) for _ in recorded]
        spent = time.monotonic() - started
    assert got == recorded
    assert spent >= 0.05 * (len(recorded) - 1)  # the events came at their recorded pacing, not at once


def test_a_whole_socket_is_served_frame_by_frame(tmp_path):
    with Store(tmp_path / "s.db") as store:
        socket = record_socket(store, seeded(), gap=0.01)
        frames = store.frames(socket.id)
        routes = export(store, socket.id, tmp_path / "socket.json")
    with MockUpstream(fixtures=routes, realtime=False) as mock, \
            connect(mock.base_url.replace("http", "ws") + "/v1/responses") as ws:
        got = []
        for frame in frames:
            if frame.direction.value == "client":
                ws.send(frame.payload.decode())
            else:
                got.append(ws.recv(timeout=10).encode())
    assert got == [frame.payload for frame in frames if frame.direction.value == "server"]


def test_a_turn_exported_as_pytest_passes_on_its_own(tmp_path):
    """The seeded turn (an output for a call no turn made) as a pytest file: its recorded findings,
    its fixed request free of errors (repaired with its history), and the mock answering its
    response.create over a socket, run by pytest in a process of its own."""
    import subprocess
    import sys

    with Store(tmp_path / "s.db") as store:
        socket = record_socket(store, seeded())
        turn = store.get(socket.id + 3)
        exported = fixture.from_store(store, turn)
        (tmp_path / "test_turn.py").write_bytes(registry.render("pytest", [exported]))
    assert [(v["rule"], v["pointer"]) for v in exported.data["violations"]] == [
        ("OR-08", "/input/0/call_id"), ("OR-08", "/previous_response_id")]
    assert exported.data["history"] == orjson.loads(turn.history)
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                          str(tmp_path / "test_turn.py")], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.splitlines()[-1].startswith("3 passed")
