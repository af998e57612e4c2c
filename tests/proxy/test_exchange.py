"""The exchange machine without sockets: scripted events in, the exact commands out, and the flow
as it would be recorded. One playbook per failure the end-to-end suite (test_forwarder.py,
test_relay.py) covers through a real forwarder, plus the hook chain's order."""

from __future__ import annotations

import orjson
import pytest

from inspector.flow import Chunk, Flow, FlowState, Mode
from inspector.proxy.access import error_body
from inspector.proxy.exchange import (Abort, BodyRead, BodyRefused, ClientGone, Exchange, Finish, Hook, Outgoing,
                                      Policy, Record, SendData, SendHead, SendUpstream, Stopped, UpstreamData,
                                      UpstreamEnd, UpstreamFailed, UpstreamHead, UpstreamSilent)
from inspector.proxy.server import unsendable_head
from inspector.proxy.transform import TransformFactory

UPSTREAM = "http://upstream.test"
CHAT = "/v1/chat/completions"
BODY = b'{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}'
HEADERS = [("host", "127.0.0.1:8787"), ("content-type", "application/json"), ("content-length", str(len(BODY))),
           ("authorization", "Bearer sk-test")]
SENT = [("content-type", "application/json"), ("authorization", "Bearer sk-test")]
SSE = [("content-type", "text/event-stream"), ("transfer-encoding", "chunked")]
EVENT = b'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n'
DONE = b"data: [DONE]\n\n"
POLICY = Policy(UPSTREAM, max_body=1 << 20, timeout=5.0, stall=10.0, unsendable=unsendable_head,
                not_forwarded=frozenset({"host", "content-length", "transfer-encoding"}))


def _exchange(*hooks: Hook, path: str = CHAT) -> Exchange:
    flow = Flow(id=7, session_id=1, started_at=0.0, method="POST", path=path)
    return Exchange(POLICY, flow, list(HEADERS), "", hooks)


def _sent(exchange: Exchange) -> list:
    """Body read and sent upstream: what every playbook past the request starts with."""
    assert exchange.handle(BodyRead(BODY)) == [SendUpstream("POST", CHAT, "", SENT, BODY), Record()]
    return []


def _streaming(exchange: Exchange) -> None:
    _sent(exchange)
    assert exchange.handle(UpstreamHead(200, SSE, 0.010)) == [SendHead(200, [SSE[0]])]
    assert exchange.handle(UpstreamData(EVENT, 0.020)) == [SendData(EVENT, True)]


def _refusal(status: int, kind: str, message: str) -> list:
    body = error_body(kind, message, status)
    return [SendHead(status, [("content-type", "application/json"), ("content-length", str(len(body)))]),
            SendData(body, False), Finish(FlowState.ERROR, message)]


def test_a_streamed_exchange_relays_every_event_and_records_it_whole():
    exchange = _exchange()
    _streaming(exchange)
    assert exchange.handle(UpstreamData(DONE, 0.030)) == [SendData(DONE, True)]
    assert exchange.handle(UpstreamEnd(0.040)) == [SendData(b"", False), Finish(FlowState.COMPLETE)]
    flow = exchange.flow
    assert (flow.status, flow.streamed, flow.response_headers, flow.response_body, flow.chunks, flow.ttfb_ms,
            flow.latency_ms, flow.upstream_url, flow.upstream_request_headers, flow.upstream_request_body,
            flow.error, flow.notes) == (
        200, True, [SSE[0]], EVENT + DONE, [Chunk(0.020, EVENT), Chunk(0.030, DONE)], 20.0, 40.0,
        UPSTREAM + CHAT, [("content-type", "application/json"), ("authorization", "[redacted]")], None, None, [])
    assert exchange.handle(UpstreamData(b"late", 0.050)) == []  # after the Finish nothing happens


def test_refused_connection_answers_502_with_the_reason():
    exchange = _exchange()
    _sent(exchange)
    assert exchange.handle(UpstreamFailed("unreachable", "connection refused", 0.003)) == _refusal(
        502, "toolwire_upstream_unreachable", f"upstream unreachable: {UPSTREAM}: connection refused")
    assert (exchange.flow.status, exchange.flow.ttfb_ms, exchange.flow.latency_ms) == (502, 3.0, 3.0)


def test_connection_reset_before_the_head_answers_502():
    exchange = _exchange()
    _sent(exchange)
    assert exchange.handle(UpstreamFailed("failed", "ServerDisconnectedError: Server disconnected", 0.004)) == (
        _refusal(502, "toolwire_upstream_error",
                 "upstream failed before answering: ServerDisconnectedError: Server disconnected"))


def test_a_slow_connect_answers_504():
    exchange = _exchange()
    _sent(exchange)
    assert exchange.handle(UpstreamFailed("connect_timeout", "5 s", 5.0)) == _refusal(
        504, "toolwire_upstream_timeout", f"upstream did not accept a connection within 5 s ({UPSTREAM})")


@pytest.mark.parametrize("reason", ["the upstream closed the connection", "the response body was cut short"],
                         ids=["reset", "truncated"])
def test_an_upstream_breaking_off_mid_stream_cuts_the_client_off(reason):
    exchange = _exchange()
    _streaming(exchange)
    assert exchange.handle(UpstreamFailed("failed", reason, 0.030)) == [
        Finish(FlowState.ERROR, f"upstream broke off after 1 chunks: {reason}"), Abort()]
    assert (exchange.flow.response_body, exchange.flow.state) == (EVENT, FlowState.PENDING)  # the driver sets it


def test_an_upstream_silent_before_its_head_answers_504():
    exchange = _exchange()
    _sent(exchange)
    assert exchange.handle(UpstreamSilent(10.0)) == _refusal(
        504, "toolwire_upstream_timeout", f"upstream sent nothing for 5 s ({UPSTREAM})")


def test_an_upstream_stalled_mid_stream_cuts_the_client_off():
    exchange = _exchange()
    _streaming(exchange)
    assert exchange.handle(UpstreamSilent(5.02)) == [
        Finish(FlowState.ERROR, "upstream went silent for 5 s after 1 chunks"), Abort()]


def test_a_client_that_stops_reading_is_recorded_as_stalled():
    exchange = _exchange()
    _streaming(exchange)
    assert exchange.handle(Stopped(10.03, stalled=True)) == [
        Finish(FlowState.ERROR, "client stopped reading for 10 s after 1 chunks")]
    assert exchange.flow.response_body == EVENT


def test_stopping_while_the_upstream_thinks_answers_503_and_mid_stream_records_the_cut():
    waiting = _exchange()
    _sent(waiting)
    assert waiting.handle(Stopped(1.0)) == _refusal(503, "toolwire_forwarder_stopped",
                                                    "forwarder stopped before the upstream answered")
    relaying = _exchange()
    _streaming(relaying)
    assert relaying.handle(Stopped(1.0)) == [Finish(FlowState.ERROR, "forwarder stopped after 1 chunks")]


def test_a_5xx_is_relayed_as_the_upstream_sent_it():
    exchange = _exchange()
    _sent(exchange)
    error = b'{"error":{"message":"overloaded"}}'
    head = [("content-type", "application/json"), ("content-length", str(len(error)))]
    assert exchange.handle(UpstreamHead(503, head, 0.010)) == [SendHead(503, head)]
    assert exchange.handle(UpstreamData(error, 0.011)) == [SendData(error, True)]
    assert exchange.handle(UpstreamEnd(0.012)) == [SendData(b"", False), Finish(FlowState.COMPLETE)]
    assert (exchange.flow.status, exchange.flow.streamed, exchange.flow.chunks, exchange.flow.response_body) == (
        503, False, [], error)


def test_a_translated_5xx_is_rewritten_whole_into_the_clients_error_shape():
    flow = Flow(id=7, session_id=1, started_at=0.0, method="POST", path=CHAT, mode=Mode.TRANSLATE)
    addon = TransformFactory("openai-chat:anthropic")
    exchange = Exchange(POLICY, flow, list(HEADERS), "", [addon.hook(flow, HEADERS, "")])
    [send, record] = exchange.handle(BodyRead(BODY))
    assert (type(send), send.path, record) == (SendUpstream, "/v1/messages", Record())
    error = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    assert exchange.handle(UpstreamHead(529, [("content-type", "application/json"),
                                              ("content-length", str(len(error)))], 0.010)) == []
    assert exchange.handle(UpstreamData(error, 0.011)) == []  # held: rewritten whole at the end
    [head, data, finish] = exchange.handle(UpstreamEnd(0.012))
    assert (head, finish) == (SendHead(529, [("content-type", "application/json"),
                                             ("content-length", str(len(data.data)))]), Finish(FlowState.COMPLETE))
    assert (orjson.loads(data.data)["error"]["message"], data.more, flow.upstream_response_body) == (
        "Overloaded", False, error)


def test_a_client_gone_before_the_head_is_recorded():
    exchange = _exchange()
    _sent(exchange)
    assert exchange.handle(ClientGone(0.5)) == [
        Finish(FlowState.ERROR, "client disconnected before the upstream answered")]


def test_a_client_gone_before_the_final_event_is_an_error():
    exchange = _exchange()
    _streaming(exchange)
    assert exchange.handle(ClientGone(0.030)) == [Finish(FlowState.ERROR, "client disconnected after 1 chunks")]


def test_a_client_gone_after_the_final_event_is_complete():
    exchange = _exchange()
    _streaming(exchange)
    assert exchange.handle(UpstreamData(DONE, 0.030)) == [SendData(DONE, True)]
    assert exchange.handle(ClientGone(0.031)) == [Finish(FlowState.COMPLETE)]
    assert exchange.flow.response_body == EVENT + DONE


def test_a_client_gone_while_sending_its_body_is_recorded_with_nothing_sent():
    exchange = _exchange()
    assert exchange.handle(BodyRefused(None, "client disconnected before the request body was complete "
                                             "(3 bytes read)", b'{"m')) == [
        Record(), Finish(FlowState.ERROR, "client disconnected before the request body was complete (3 bytes read)")]
    assert exchange.flow.request_body == b'{"m'


def test_a_body_too_large_is_answered_413_and_closes_the_connection():
    exchange = _exchange()
    message = "request body larger than 1048576 bytes; not forwarded"
    body = error_body("toolwire_bad_request", message, 413)
    assert exchange.handle(BodyRefused(413, message)) == [
        Record(), SendHead(413, [("content-type", "application/json"), ("content-length", str(len(body))),
                                 ("connection", "close")]),
        SendData(body, False), Finish(FlowState.ERROR, message)]


def test_an_unsendable_upstream_head_answers_502_instead():
    exchange = _exchange()
    _sent(exchange)
    assert exchange.handle(UpstreamHead(200, [("x-bad", "a\x01b")], 0.01)) == _refusal(
        502, "toolwire_upstream_error", "upstream sent a response the forwarder cannot relay: header 'x-bad' "
                                        "holds control byte 0x01")


class _Tagging(Hook):
    """A hook that marks what passes through it, to show the chain's order."""

    def __init__(self, tag: bytes, log: list[str]) -> None:
        self.tag = tag
        self.log = log

    def request(self, flow: Flow, outgoing: Outgoing) -> None:
        outgoing.body += self.tag
        outgoing.rewritten = True
        self.log.append(f"request {self.tag.decode()}")

    @property
    def rewrites_response(self) -> bool:
        return True

    def response_chunk(self, data: bytes) -> bytes:
        return data + self.tag

    def response_end(self) -> bytes:
        return b"end" + self.tag


def test_hooks_rewrite_the_request_in_chain_order_and_the_response_in_reverse():
    log: list[str] = []
    exchange = _exchange(_Tagging(b"1", log), _Tagging(b"2", log))
    [send, record] = exchange.handle(BodyRead(BODY))
    assert (send.body, record, log) == (BODY + b"12", Record(), ["request 1", "request 2"])
    assert exchange.handle(UpstreamHead(200, SSE, 0.01)) == [SendHead(200, [SSE[0]])]
    assert exchange.handle(UpstreamData(b"x", 0.02)) == [SendData(b"x21", True)]
    # The inner hook's tail passes through the outer one before the outer one's own end.
    assert exchange.handle(UpstreamEnd(0.03)) == [SendData(b"end21end1", False), Finish(FlowState.COMPLETE)]
    assert (exchange.flow.upstream_request_body, exchange.flow.upstream_response_body, exchange.flow.response_body) == (
        BODY + b"12", b"x", b"x21end21end1")
