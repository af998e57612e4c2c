"""The Realtime and Gemini Live rules on sockets the forwarder relayed and recorded: each rule case of
tests/wire/test_rules_sockets.py (a recorded-shape session, its trip and its near miss) played by a
real client through a real forwarder against the mock upstream serving the session's server side
frame by frame; the socket's row carries the findings the checker gives those frames, and the near
miss none of the rule's."""

from __future__ import annotations

import orjson
import pytest
from websockets.sync.client import connect

from inspector.formats import fixture, registry
from inspector.mock import FixtureRoute, MockUpstream
from inspector.proxy import Forwarder
from inspector.proxy.options import Options
from inspector.store import Store
from tests.proxy.conftest import Events
from tests.sockets.recorded import record_socket
from tests.wire.rule_cases import found, same
from tests.wire.test_rules_sockets import CASES

PATHS = {"realtime": "/v1/realtime",
         "live": "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"}


def relayed(case, mutation, tmp_path) -> tuple[int, set[tuple[str, str, str]]]:
    """The session `mutation` makes of the case's, played through a forwarder: the socket row's error
    count and its findings."""
    document = mutation(case.base())
    path = PATHS[case.kind]
    with Store(tmp_path / "played.db") as played:
        socket = record_socket(played, [list(frame) for frame in document["frames"]], path=path, gap=0.0)
        (tmp_path / "socket.json").write_bytes(registry.render("json", [fixture.from_store(played, played.get(socket.id))]))
    headers = {name: value for name, value in document["headers"].items() if value}
    events = Events()
    with (Store(tmp_path / "relayed.db") as store, MockUpstream(fixtures=FixtureRoute.load(tmp_path / "socket.json"),
                                                                realtime=False) as mock,
          Forwarder(Options(mock.base_url, port=0), store=store, on_event=events) as forwarder):
        url = forwarder.base_url.replace("http://", "ws://", 1) + path
        with connect(url, additional_headers=headers) as ws:
            for direction, event in document["frames"]:
                if direction == "client":
                    ws.send(fixture_text(event))
                else:
                    assert ws.recv(timeout=10) == fixture_text(event)
        events.completed(1)  # the close went through both ways: every frame is in
        store.flush()
        (row,) = store.rows()
        flow = store.get(row.id)
        assert (flow.websocket, flow.status, flow.path, flow.state.value, flow.error) == (True, 101, path, "complete",
                                                                                          None)
        return row.errors, found(store.analysis(flow).violations)


def fixture_text(event) -> str:
    return orjson.dumps(event).decode()


SOCKET_CASES = [case for case in CASES if case.kind in PATHS]


def test_every_socket_rule_has_a_relayed_case():
    assert sorted({case.rule for case in SOCKET_CASES}) == ["GM-22", "GM-23", "GM-24", "RT-01", "RT-02", "RT-03",
                                                             "RT-04", "RT-05"]


@pytest.mark.parametrize("case", SOCKET_CASES, ids=lambda case: case.name)
def test_a_relayed_session_trips_the_rule_and_its_near_miss_does_not(case, tmp_path):
    assert relayed(case, same, tmp_path / "base") == (0, set())
    expected = {(case.rule, case.pointer, case.severity), *case.also}
    errors, findings = relayed(case, case.trip, tmp_path / "trip")
    assert findings == expected
    assert errors == sum(1 for _, _, severity in expected if severity == "error")
    _, near = relayed(case, case.near, tmp_path / "near")
    assert case.rule not in {rule for rule, _, _ in near}
