"""The WebSocket exchange without sockets: the upgrade decisions (relay, 426, bad target, the
upstream's refusal), the frames recorded within the body limit, and how each side's close or
failure ends the flow."""

from __future__ import annotations

from inspector.flow import Flow, FlowState, Mode, frame_chunk, frames
from inspector.proxy.access import error_body
from inspector.proxy.exchange import (Accept, Close, Closed, ControlIn, Finish, FrameIn, OpenSocket, Policy, Record,
                                      SendControl, SendData, SendFrame, SendHead, SocketExchange, SocketOpened, SocketRefused, Stopped,
                                      UpstreamFailed)
from inspector.proxy.server import unsendable_head
from inspector.wire.frames import Direction, Frame

UPSTREAM = "http://upstream.test"
HEADERS = [("host", "127.0.0.1:8787"), ("connection", "Upgrade"), ("upgrade", "websocket"),
           ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="), ("sec-websocket-version", "13"),
           ("sec-websocket-protocol", "a.v1, b.v2"),
           ("sec-websocket-extensions", "permessage-deflate; client_max_window_bits"),
           ("authorization", "Bearer sk-test"), ("openai-beta", "responses_websockets=2026-02-06")]
POLICY = Policy(UPSTREAM, max_body=64, timeout=5.0, stall=10.0, unsendable=unsendable_head,
                not_forwarded=frozenset({"host", "connection", "upgrade"}))
CREATE = b'{"type":"response.create","generate":false}'


def _exchange(mode: Mode = Mode.PASSTHROUGH, path: str = "/v1/responses", translate: str | None = None) -> SocketExchange:
    flow = Flow(id=3, session_id=1, started_at=100.0, method="GET", path=path, mode=mode, translate=translate)
    return SocketExchange(POLICY, flow, list(HEADERS), "")


def _refusal(status: int, kind: str, message: str) -> list:
    body = error_body(kind, message, status)
    return [SendHead(status, [("content-type", "application/json"), ("content-length", str(len(body)))]),
            SendData(body, False), Finish(FlowState.ERROR, message)]


def _open(exchange: SocketExchange) -> None:
    assert exchange.upgrade() == [Record(), OpenSocket(
        "/v1/responses", "", [("authorization", "Bearer sk-test"), ("openai-beta", "responses_websockets=2026-02-06")],
        ("a.v1", "b.v2"), True)]
    head = [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", "x"),
            ("Sec-WebSocket-Protocol", "b.v2"), ("x-request-id", "req_1"), ("date", "today")]
    assert exchange.socket_event(SocketOpened(101, head, "b.v2", 0.010)) == [Accept("b.v2", [("x-request-id", "req_1")])]


def test_an_upgrade_goes_upstream_without_this_hops_handshake_fields_and_frames_pass_both_ways():
    exchange = _exchange()
    _open(exchange)
    assert exchange.socket_event(FrameIn(True, True, CREATE, 0.020)) == [SendFrame(False, True, CREATE)]
    assert exchange.socket_event(FrameIn(False, False, b"\x01", 0.030)) == [SendFrame(True, False, b"\x01")]
    assert exchange.socket_event(Closed(True, 1000, "bye", 0.040)) == [Close(False, 1000, "bye"),
                                                                      Finish(FlowState.COMPLETE)]
    assert exchange.socket_event(FrameIn(False, True, b"late", 0.050)) == []
    flow = exchange.flow
    assert (flow.websocket, flow.status, flow.ttfb_ms, flow.latency_ms, flow.notes, flow.upstream_url) == (
        True, 101, 10.0, 40.0, ["client closed the socket: 1000 'bye'"], f"{UPSTREAM}/v1/responses")
    assert frames(flow) == [Frame(Direction.CLIENT, 100.02, True, CREATE), Frame(Direction.SERVER, 100.03, False, b"\x01")]
    # The store joins the frames it wrote (it takes them out of the flow as they reach the disk).
    assert flow.response_body == b""


def test_pings_and_pongs_go_to_the_other_side_as_they_came_and_are_not_recorded():
    waiting = _exchange()
    waiting.upgrade()
    assert waiting.socket_event(ControlIn(True, True, b"early", 0.005)) == []  # no upstream socket yet
    exchange = _exchange()
    _open(exchange)
    assert exchange.socket_event(ControlIn(True, True, b"probe", 0.020)) == [SendControl(False, True, b"probe")]
    assert exchange.socket_event(ControlIn(False, False, b"probe", 0.030)) == [SendControl(True, False, b"probe")]
    assert exchange.socket_event(ControlIn(False, True, b"", 0.040)) == [SendControl(True, True, b"")]
    assert exchange.socket_event(ControlIn(True, False, b"", 0.050)) == [SendControl(False, False, b"")]
    assert exchange.flow.chunks == []
    assert exchange.socket_event(Closed(False, 1000, "", 0.060)) == [Close(True, 1000, ""), Finish(FlowState.COMPLETE)]
    assert exchange.socket_event(ControlIn(True, True, b"late", 0.070)) == []


def test_a_mode_that_rewrites_bodies_answers_426_and_sends_nothing_upstream():
    for mode, translate, what in ((Mode.TRANSLATE, "openai-responses:openai-chat", "translates openai-responses:openai-chat"),
                                  (Mode.REPAIR, None, "repairs requests")):
        exchange = _exchange(mode, translate=translate)
        message = f"WebSockets are not relayed here: this route {what}, which frames cannot go through; use HTTP"
        assert exchange.upgrade() == [Record(), *_refusal(426, "toolwire_websocket_refused", message)]
        assert (exchange.flow.status, exchange.flow.websocket, exchange.flow.error) == (426, True, message)


def test_a_target_that_leaves_the_base_path_is_refused():
    exchange = _exchange(path="/v1/../admin")
    message = "not forwarded: request target '/v1/../admin' has a dot segment, which would leave the upstream's base path"
    assert exchange.upgrade() == [Record(), *_refusal(400, "toolwire_bad_target", message)]


def test_an_upstream_that_takes_no_sockets_there_becomes_a_426_and_its_other_refusals_are_relayed():
    for status in (400, 404, 405, 426, 501):
        exchange = _exchange()
        exchange.upgrade()
        message = (f"upstream answered the WebSocket upgrade with {status}: it takes no sockets at /v1/responses "
                   f"({UPSTREAM}); use HTTP")
        assert exchange.socket_event(SocketRefused(status, [], 0.01)) == _refusal(426, "toolwire_websocket_refused",
                                                                                  message)
    for status in (401, 403, 429, 500, 503):
        exchange = _exchange()
        exchange.upgrade()
        message = f"upstream answered the WebSocket upgrade with {status} ({UPSTREAM})"
        assert exchange.socket_event(SocketRefused(status, [], 0.01)) == _refusal(
            status, "toolwire_upstream_refused_websocket", message)


def test_failures_before_the_upstream_answers_are_502():
    exchange = _exchange()
    exchange.upgrade()
    message = f"upstream unreachable: {UPSTREAM}: connection refused"
    assert exchange.socket_event(UpstreamFailed("unreachable", "connection refused", 0.01)) == _refusal(
        502, "toolwire_upstream_unreachable", message)


def test_a_lost_or_failed_side_ends_the_flow_in_error_and_closes_the_other():
    exchange = _exchange()
    _open(exchange)
    assert exchange.socket_event(Closed(False, 1006, "", 0.5)) == [Close(True, 1001, ""), Finish(
        FlowState.ERROR, "upstream lost the connection after 0 frames")]
    assert exchange.flow.notes == ["upstream lost the connection: 1006"]
    exchange = _exchange()
    _open(exchange)
    exchange.socket_event(FrameIn(True, True, CREATE, 0.1))
    assert exchange.socket_event(UpstreamFailed("failed", "message too big", 0.5)) == [
        Close(True, 1011, "upstream failed"), Finish(FlowState.ERROR, "upstream socket failed after 1 frames: message too big")]
    exchange = _exchange()
    _open(exchange)
    assert exchange.socket_event(Stopped(0.5)) == [Close(True, 1001, "forwarder stopped"),
                                                    Close(False, 1001, "forwarder stopped"),
                                                    Finish(FlowState.ERROR, "forwarder stopped after 0 frames")]


def test_frames_past_the_body_limit_are_relayed_and_counted_not_kept():
    exchange = _exchange()
    _open(exchange)
    big = b"x" * 40
    for at in (0.1, 0.2, 0.3):
        assert exchange.socket_event(FrameIn(False, True, big, at)) == [SendFrame(True, True, big)]
    small = b"y" * 10
    assert exchange.socket_event(FrameIn(True, True, small, 0.4)) == [SendFrame(False, True, small)]
    exchange.socket_event(Closed(True, 1000, "", 0.5))
    flow = exchange.flow
    # A prefix of whole frames: the second 40-byte frame would pass the 64-byte limit, and the small
    # one after it, which would fit, is not kept either.
    assert flow.chunks == [frame_chunk(0.1, Direction.SERVER, True, big)]
    assert flow.notes == ["client closed the socket: 1000",
                          "4 frames relayed, the first 1 recorded (64 bytes or 100000 frames at most)"]
