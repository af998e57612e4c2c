"""The app wired to a real forwarder and a fake upstream: live flows, batching, replay."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator

import httpx
import orjson
import pytest
from textual.message import Message
from textual.notifications import Notify
from textual.widgets import TabbedContent

from inspector.flow import Flow, FlowState
from inspector.mock import MockUpstream
from inspector.proxy import Forwarder
from inspector.store import Store
from inspector.tui.bridge import EventBridge
from inspector.wire.fix import fix
from inspector.tui.messages import FlowsUpdated, ReplayFailed, ReplayFinished
from inspector.tui.widgets.connection import ConnectionBar
from inspector.tui.widgets.flow_list import FlowList
from inspector.proxy.options import Options

from .conftest import make_app, settle, workers_done
from .flows import clean_request, defective_request

SECRET = "sk-tui-test-0123456789"


class Seen:
    """A message hook that can be awaited: no sleeps, the test waits for the message itself."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._waiters: list[tuple[Callable[[Message], bool], asyncio.Future[Message]]] = []

    def __call__(self, message: Message) -> None:
        self.messages.append(message)
        for predicate, future in self._waiters:
            if not future.done() and predicate(message):
                future.set_result(message)

    async def wait_for(self, predicate: Callable[[Message], bool], timeout: float = 10.0) -> Message:
        for message in self.messages:
            if predicate(message):
                return message
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._waiters.append((predicate, future))
        return await asyncio.wait_for(future, timeout)


@pytest.fixture
def upstream() -> Iterator[MockUpstream]:
    with MockUpstream() as mock:
        yield mock


@pytest.fixture
def forwarding(store: Store, upstream: MockUpstream) -> Iterator[tuple[Forwarder, EventBridge]]:
    bridge = EventBridge()
    forwarder = Forwarder(Options(upstream.base_url, port=0), store=store, on_event=bridge)
    forwarder.start()
    yield forwarder, bridge
    forwarder.stop()


def completed(flow_id: int) -> Callable[[Message], bool]:
    return lambda m: isinstance(m, FlowsUpdated) and flow_id in m.completed


def post_chat(base_url: str) -> int:
    response = httpx.post(f"{base_url}/v1/chat/completions", json=clean_request(),
                          headers={"Authorization": f"Bearer {SECRET}"})
    assert response.status_code == 200
    return response.status_code


async def test_bridge_batches_a_burst_into_one_message(store: Store) -> None:
    bridge = EventBridge()
    seen = Seen()
    app = make_app(store, bridge=bridge)
    async with app.run_test(size=(120, 36), message_hook=seen) as pilot:
        # No await between pushes: the UI loop cannot deliver mid-burst, so exactly one batch.
        for flow_id in range(1, 501):
            bridge.push("started", flow_id)
        for flow_id in range(1, 501):
            bridge.push("completed", flow_id)
        message = await seen.wait_for(lambda m: isinstance(m, FlowsUpdated))
        await pilot.pause()
        batches = {id(m): m for m in seen.messages if isinstance(m, FlowsUpdated)}
        assert len(batches) == 1
        assert message.started == tuple(range(1, 501)) and message.completed == tuple(range(1, 501))


async def test_flows_appear_live_and_the_header_says_where_to_point_the_agent(
        store: Store, forwarding: tuple[Forwarder, EventBridge]) -> None:
    forwarder, bridge = forwarding
    seen = Seen()
    app = make_app(store, forwarder=forwarder, bridge=bridge, upstream="http://up.example")
    async with app.run_test(size=(120, 36), message_hook=seen) as pilot:
        flows = app.query_one(FlowList)
        assert flows.total == 0
        await asyncio.to_thread(post_chat, forwarder.base_url)
        await seen.wait_for(completed(1))
        await settle(app, pilot)
        row = flows.current
        assert (flows.total, row.id, row.method, row.path, row.status, row.dialect, row.model, row.tools) == (
            1, 1, "POST", "/v1/chat/completions", 200, "openai-chat", "gpt-4o-mini", 1)
        assert row.session_id == store.session_id
        base = forwarder.base_url  # an ephemeral port: always 5 digits on Linux, so the wrap is fixed
        # Two rows: the settings that fit whole, and the key to the rest.
        assert str(app.query_one(ConnectionBar).render()) == (
            f"toolwire-inspect passthrough  tokens 10/5  listening {base} → http://up.example\n"
            f"OPENAI_BASE_URL={base}/v1  ANTHROPIC_BASE_URL={base}  c: all settings")
        await pilot.press("c")
        assert str(app.query_one(ConnectionBar).render()) == (
            f"toolwire-inspect passthrough  tokens 10/5  listening {base} → http://up.example\n"
            f"OPENAI_BASE_URL={base}/v1  ANTHROPIC_BASE_URL={base}\n"
            f"GOOGLE_GEMINI_BASE_URL={base}  MCP {base}/mcp  store flows.sqlite3")
        await pilot.press("c")
        assert app.query_one(ConnectionBar).region.height == 2


async def test_r_replays_with_the_credentials_held_in_memory(
        store: Store, upstream: MockUpstream, forwarding: tuple[Forwarder, EventBridge]) -> None:
    forwarder, bridge = forwarding
    seen = Seen()
    app = make_app(store, forwarder=forwarder, bridge=bridge, clock=time.time)  # live flows: today
    async with app.run_test(size=(120, 36), message_hook=seen) as pilot:
        await asyncio.to_thread(post_chat, forwarder.base_url)
        await seen.wait_for(completed(1))
        await settle(app, pilot)
        await pilot.press("r")
        finished = await seen.wait_for(lambda m: isinstance(m, ReplayFinished))
        assert (finished.original_id, finished.new_id) == (1, 2)
        await seen.wait_for(completed(2))
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        assert (flows.total, flows.current.id, flows.current.replay_of) == (2, 2, 1)
        assert [r.header("authorization") for r in upstream.received] == [f"Bearer {SECRET}"] * 2
        assert upstream.received[1].body == upstream.received[0].body
        notes = [m.notification for m in seen.messages if isinstance(m, Notify)]
        assert [(n.title, n.message) for n in notes] == [("Replay", "#1 replayed as #2")]
        # At 120 columns the method column has given way; the mark leads the path (after the
        # session, the id and the time).
        assert flows.render_line(flows.cursor - int(flows.scroll_y)).text.split()[3:5] == [
            "↻#1", "/v1/chat/completions"]
        assert (flows.current.replay_fixed, store.get(2).notes) == (False, [])


@pytest.mark.parametrize("screen_keys", [("enter",), ("enter", "F")], ids=["flow view", "fixed diff"])
async def test_R_in_a_flow_replays_it_with_every_safe_repair_applied(
        store: Store, upstream: MockUpstream, forwarding: tuple[Forwarder, EventBridge], screen_keys) -> None:
    # From the flow view, and from its fixed diff, whose title says R replays it.
    forwarder, bridge = forwarding
    seen = Seen()
    app = make_app(store, forwarder=forwarder, bridge=bridge, clock=time.time)
    async with app.run_test(size=(80, 24), message_hook=seen) as pilot:
        response = await asyncio.to_thread(httpx.post, f"{forwarder.base_url}/v1/chat/completions",
                                           json=defective_request(), headers={"Authorization": f"Bearer {SECRET}"})
        assert response.status_code == 200
        await seen.wait_for(completed(1))
        await settle(app, pilot)
        for key in screen_keys:
            await pilot.press(key)
            await settle(app, pilot)
        assert type(app.screen).__name__ == ("DiffScreen" if "F" in screen_keys else "FlowScreen")
        await pilot.press("R")
        finished = await seen.wait_for(lambda m: isinstance(m, ReplayFinished))
        assert (finished.original_id, finished.new_id) == (1, 2)
        assert orjson.loads(upstream.received[1].body) == fix(defective_request(), "openai-chat").payload
        assert [r.header("authorization") for r in upstream.received] == [f"Bearer {SECRET}"] * 2


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_R_in_the_list_replays_fixed_and_the_list_marks_it_so(
        store: Store, upstream: MockUpstream, forwarding: tuple[Forwarder, EventBridge], size) -> None:
    forwarder, bridge = forwarding
    seen = Seen()
    app = make_app(store, forwarder=forwarder, bridge=bridge, clock=time.time)
    async with app.run_test(size=size, message_hook=seen) as pilot:
        await asyncio.to_thread(httpx.post, f"{forwarder.base_url}/v1/chat/completions",
                                json=defective_request(), headers={"Authorization": f"Bearer {SECRET}"})
        await seen.wait_for(completed(1))
        await settle(app, pilot)
        await pilot.press("R")
        finished = await seen.wait_for(lambda m: isinstance(m, ReplayFinished))
        await seen.wait_for(completed(finished.new_id))
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        assert (flows.current.id, flows.current.replay_of, flows.current.replay_fixed) == (2, 1, True)
        assert orjson.loads(upstream.received[1].body) == fix(defective_request(), "openai-chat").payload
        assert "↻F#1 /v1/chat/" in flows.render_line(flows.cursor - int(flows.scroll_y)).text
        await pilot.press("o")
        assert flows.current.id == 1


async def test_replay_without_a_forwarder_is_refused_clearly(store: Store, ids: dict[str, int]) -> None:
    seen = Seen()
    app = make_app(store)
    async with app.run_test(size=(120, 36), message_hook=seen) as pilot:
        await pilot.press("r")
        failed = await seen.wait_for(lambda m: isinstance(m, ReplayFailed))
        assert (failed.original_id, failed.reason) == (
            ids["replay"], "no forwarder running (start with --upstream)")
        await pilot.pause()
        notes = [m.notification for m in seen.messages if isinstance(m, Notify)]
        assert [(n.title, n.severity) for n in notes] == [("Replay failed", "error")]


async def test_translate_mode_shows_both_sides_and_the_loss_report(store: Store, upstream: MockUpstream) -> None:
    from inspector.tui.screens.flow import FlowScreen
    from inspector.tui.widgets.payload import PayloadView
    from inspector.tui.widgets.violations import ViolationPanel

    from .test_flow_view import open_flow

    bridge = EventBridge()
    forwarder = Forwarder(Options(upstream.base_url, port=0, translate="openai-chat:openai-responses"), store=store, on_event=bridge)
    forwarder.start()
    try:
        seen = Seen()
        app = make_app(store, forwarder=forwarder, bridge=bridge)
        async with app.run_test(size=(120, 36), message_hook=seen) as pilot:
            body = {**clean_request(), "stop": ["END"], "seed": 7}
            response = await asyncio.to_thread(
                httpx.post, f"{forwarder.base_url}/v1/chat/completions", json=body)
            assert response.status_code == 200
            await seen.wait_for(completed(1))
            # The list re-read after the flow was written, with the session's tokens: the header shows them.
            await seen.wait_for(lambda m: isinstance(m, FlowList.Reloaded) and m.usage == (10, 5))
            await pilot.pause()
            header = str(app.query_one(ConnectionBar).render()).split("\n")
            # Only the setting of the dialect this session accepts: an Anthropic client would be refused.
            assert header == [f"toolwire-inspect translate openai-chat → openai-responses  tokens 10/5  "
                              f"listening {forwarder.base_url} → {upstream.base_url}",
                              f"OPENAI_BASE_URL={forwarder.base_url}/v1  store flows.sqlite3"]
            screen = await open_flow(app, pilot, 1)
            assert isinstance(screen, FlowScreen)
            assert upstream.received[0].path == "/v1/responses"
            right = screen.query_one("#upstream", PayloadView)
            assert right.border_subtitle == "translated openai-chat → openai-responses"
            assert '"input": [' in "\n".join(right.viewer.lines)
            report = [i for i in screen.query_one(ViolationPanel).items if i.violation.where == "translation"]
            # The report is the bridge's own, item for item (the translation helper owns its content).
            from inspector.wire.translate import get_bridge

            losses = get_bridge("openai-chat", "openai-responses").request(body, "/v1/chat/completions").losses
            in_document_order = sorted(losses, key=lambda loss: screen.view.request.line_of(loss.source))
            assert [(i.violation.pointer, i.violation.message) for i in report] == [
                (loss.source, f"{loss.kind}: {loss.why}") for loss in in_document_order]  # as the lines read
            stop = next(i for i in report if i.violation.pointer == "/stop")
            assert (stop.violation.rule, stop.violation.message, stop.lines) == (
                "XL", "dropped: the Responses API has no stop sequences", {"request": 28})
            left = screen.query_one("#request", PayloadView)
            assert (left.viewer.marks[28], left.viewer.lines[28]) == ("warning", '  "stop": [')
            from inspector.tui.widgets.lines import LineViewer

            notes = store.get(1).notes
            headers = screen.query_one("#headers", LineViewer).lines
            assert notes and headers[-len(notes) - 1:] == ["notes:", *(f"  {note}" for note in notes)]
            # What the upstream itself answered (a Responses result), beside what the client got (Chat).
            tabs = screen.query_one("#response-tabs", TabbedContent)
            raw = screen.query_one("#upstream-response", PayloadView)
            assert (tabs.get_tab("tab-upstream-response").display, raw.border_subtitle) == (
                True, "what the upstream answered, before the translation back")
            assert orjson.loads("\n".join(raw.viewer.lines)) == orjson.loads(store.get(1).upstream_response_body)
            assert orjson.loads("\n".join(raw.viewer.lines))["object"] == "response"
    finally:
        forwarder.stop()


async def test_without_translation_there_is_no_upstream_response_tab(store: Store, ids: dict[str, int]) -> None:
    from inspector.tui.widgets.payload import PayloadView

    from .test_flow_view import open_flow

    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_flow(app, pilot, ids["clean"])
        tabs = screen.query_one("#response-tabs", TabbedContent)
        assert (tabs.get_tab("tab-upstream-response").display, screen.query_one("#upstream-response",
                                                                                  PayloadView).pane) == (False, None)


async def test_a_pending_flow_completes_in_place(store: Store, ids: dict[str, int]) -> None:
    """A flow opened while its response is still streaming is redrawn when it completes."""
    import orjson

    from inspector.flow import Flow, FlowState
    from inspector.wire.dialects.openai_chat.mock import chat_completion
    from inspector.tui.screens.flow import FlowScreen

    from .flows import T0
    from .test_flow_view import open_flow

    flow = Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=T0 + 30, method="POST",
                path="/v1/chat/completions", request_body=orjson.dumps(clean_request()))
    store.save(flow)
    bridge = EventBridge()
    seen = Seen()
    app = make_app(store, bridge=bridge)
    async with app.run_test(size=(120, 36), message_hook=seen) as pilot:
        flows = app.query_one(FlowList)
        assert [flows.current.id, *row_text(flows)[6:9]] == [flow.id, "…", "…", "-"]
        screen = await open_flow(app, pilot, flow.id)
        assert (screen.view.flow.state, screen.view.flow.status) == (FlowState.PENDING, None)
        flow.status, flow.response_body, flow.latency_ms = 200, orjson.dumps(chat_completion("done")), 12.0
        flow.state = FlowState.COMPLETE
        store.save(flow)
        bridge.push("completed", flow.id)
        await seen.wait_for(completed(flow.id))
        await workers_done(app)
        await pilot.pause()
        assert isinstance(app.screen, FlowScreen)
        assert (app.screen.view.flow.state, app.screen.view.flow.status) == (FlowState.COMPLETE, 200)
        assert row_text(flows)[6:8] == ["200", "12ms"]


def row_text(flows: FlowList) -> list[str]:
    from inspector.tui.widgets.flow_list import row_cells

    return row_cells(flows.current, flows.clock())


@pytest.mark.parametrize(("env", "key_hosts", "reason"), [
    ({}, (), "was sent with a key (authorization) and the store keeps none: set OPENAI_API_KEY to replay it"),
    ({"OPENAI_API_KEY": "sk-from-env-42"}, (),
     "was sent with a key (authorization) and the store keeps none: OPENAI_API_KEY goes only to api.openai.com, and "
     "this replay goes to 127.0.0.1 (--key-host 127.0.0.1 sends it there)"),
    ({"OPENAI_API_KEY": "sk-from-env-42"}, ("127.0.0.1",), None),
], ids=["no-key", "not-the-providers-host", "key-host-named"])
async def test_after_a_restart_replay_says_why_it_cannot_send_the_key(
        store: Store, upstream: MockUpstream, monkeypatch: pytest.MonkeyPatch, env, key_hosts, reason) -> None:
    """Credentials are never read from disk: a flow from an earlier launch, sent with a key, has none
    in memory; `r` takes OPENAI_API_KEY from the environment only for api.openai.com or a host named
    with --key-host, and otherwise says why it sends nothing (the `replay` command's words)."""
    from .flows import save_flow

    store.new_session(upstream.base_url, "http://127.0.0.1:8787")
    earlier = save_flow(store, clean_request(), upstream=upstream.base_url)  # Authorization is stored redacted
    store.session_id = None  # the next forwarder opens a new session, as a new launch does
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    bridge = EventBridge()
    forwarder = Forwarder(Options(upstream.base_url, port=0), store=store, on_event=bridge)
    forwarder.start()
    try:
        seen = Seen()
        app = make_app(store, forwarder=forwarder, bridge=bridge, **({"key_hosts": key_hosts} if key_hosts else {}))
        async with app.run_test(size=(120, 36), message_hook=seen) as pilot:
            await pilot.press("r")
            if reason is not None:
                failed = await seen.wait_for(lambda m: isinstance(m, ReplayFailed))
                await settle(app, pilot)
                assert (failed.original_id, failed.reason) == (earlier, f"flow #{earlier} {reason}")
                notes = [m.notification for m in seen.messages if isinstance(m, Notify)]
                assert [(n.title, n.message, n.severity) for n in notes] == [
                    ("Replay failed", f"#{earlier}: flow #{earlier} {reason}", "error")]
                assert upstream.received == []
                return
            finished = await seen.wait_for(lambda m: isinstance(m, ReplayFinished))
            await seen.wait_for(completed(finished.new_id))
            await settle(app, pilot)
            assert [r.header("authorization") for r in upstream.received] == ["Bearer sk-from-env-42"]
            flows = app.query_one(FlowList)
            assert (flows.current.id, flows.current.replay_of, flows.current.session_id) == (
                finished.new_id, earlier, store.session_id)
            assert store.session_id != 1
    finally:
        forwarder.stop()


async def test_beyond_loopback_the_header_gives_the_url_with_the_token_and_counts_refusals(
        store: Store, upstream: MockUpstream) -> None:
    forwarder = Forwarder(Options(upstream.base_url, host="0.0.0.0", allow_remote=True, port=0), store=store)
    forwarder.start()
    try:
        app = make_app(store, forwarder=forwarder, upstream="http://up.example")
        async with app.run_test(size=(200, 36)) as pilot:
            bar = app.query_one(ConnectionBar)
            bar.expanded = True
            base = f"http://0.0.0.0:{forwarder.port}/t/{forwarder.access.token}"
            assert str(bar.render()).replace("\n", "  ") == (  # where it wraps is the other test's business
                f"toolwire-inspect passthrough  listening {base} → http://up.example  OPENAI_BASE_URL={base}/v1  "
                f"ANTHROPIC_BASE_URL={base}  GOOGLE_GEMINI_BASE_URL={base}  MCP {base}/mcp  store flows.sqlite3")
            refused = await asyncio.to_thread(httpx.post, f"http://127.0.0.1:{forwarder.port}/v1/chat/completions")
            assert refused.status_code == 403
            deadline = time.monotonic() + 10
            while "refused 1: " not in str(bar.render()) and time.monotonic() < deadline:
                await pilot.pause(0.05)  # the bar looks at the count once a second
            assert str(bar.render()).replace("\n", "  ") == (
                f"toolwire-inspect passthrough  listening {base} → http://up.example  "
                f"refused 1: {forwarder.access.last_refusal}  OPENAI_BASE_URL={base}/v1  "
                f"ANTHROPIC_BASE_URL={base}  GOOGLE_GEMINI_BASE_URL={base}  MCP {base}/mcp  store flows.sqlite3")
            # Folded, the refusals still show: they come before any setting.
            bar.expanded = False
            assert str(bar.render()).split("\n")[1] == f"refused 1: {forwarder.access.last_refusal}  c: all settings"
    finally:
        forwarder.stop()


async def test_a_flow_recorded_against_another_upstream_is_not_replayed(
        store: Store, upstream: MockUpstream, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key from the environment goes only where the flow went when it was recorded."""
    from .flows import save_flow

    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    earlier = save_flow(store, clean_request())
    store.session_id = None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-42")
    forwarder = Forwarder(Options(upstream.base_url, port=0), store=store)
    forwarder.start()
    try:
        seen = Seen()
        app = make_app(store, forwarder=forwarder)
        async with app.run_test(size=(120, 36), message_hook=seen):
            app.replay_flow(earlier)
            failed = await seen.wait_for(lambda m: isinstance(m, ReplayFailed))
            assert (failed.original_id, failed.reason) == (earlier, (
                f"flow #{earlier} is not replayed: it went to http://127.0.0.1:9, not to this forwarder's upstream "
                f"{upstream.base_url}; its credentials are not sent anywhere else"))
        assert upstream.received == []
    finally:
        forwarder.stop()


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_header_sums_the_sessions_tokens(
        store: Store, forwarding: tuple[Forwarder, EventBridge], size) -> None:
    forwarder, bridge = forwarding
    seen = Seen()
    app = make_app(store, forwarder=forwarder, bridge=bridge, upstream="http://up.example")
    async with app.run_test(size=size, message_hook=seen) as pilot:
        bar = app.query_one(ConnectionBar)
        assert str(bar.render()).split("\n")[0] == (
            f"toolwire-inspect passthrough  listening {forwarder.base_url} → http://up.example")
        for n in (1, 2):
            await asyncio.to_thread(post_chat, forwarder.base_url)
            await seen.wait_for(completed(n))
        await settle(app, pilot)
        # The mock's completion reports 10 in and 5 out, each time.
        assert (store.session_usage(store.session_id), str(bar.render()).split("\n")[0]) == ((20, 10), (
            f"toolwire-inspect passthrough  tokens 20/10  listening {forwarder.base_url} → http://up.example"))


async def test_flows_another_process_writes_to_the_store_appear_in_the_list(store: Store, tmp_path) -> None:
    # `mcp-stdio` and a second `record` write to the same file through a connection of their own:
    # no bridge tells the app, the list follows the file.
    app = make_app(store)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        assert flows.total == 0
        with Store(store.path) as other:
            other.new_session("stdio://files", "stdio")
            flow = Flow(id=other.next_flow_id(), session_id=other.session_id, started_at=time.time(), method="STDIO",
                        path="stdio:files", request_body=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
                        state=FlowState.COMPLETE)
            other.save(flow)
        deadline = time.monotonic() + 10
        while flows.total != 1 and time.monotonic() < deadline:
            await pilot.pause(0.05)
        await settle(app, pilot)
        assert (flows.total, flows.current.path) == (1, "stdio:files")


async def test_routes_are_in_the_header_and_the_list(store: Store, upstream: MockUpstream, tmp_path) -> None:
    from inspector.proxy.routes import open_forwarder, resolve

    bridge = EventBridge()
    table = resolve(routes=[f"oa={upstream.base_url}", "an=https://api.anthropic.com"], cwd=tmp_path)
    with open_forwarder(table, Options(port=0), store=store, on_event=bridge) as router:
        seen = Seen()
        app = make_app(store, forwarder=router, bridge=bridge)
        async with app.run_test(size=(200, 36), message_hook=seen) as pilot:
            bar = app.query_one(ConnectionBar)
            bar.expanded = True
            base = router.base_url
            assert str(bar.render()).replace("\n", "  ") == (
                f"toolwire-inspect routes  listening {base} → 2 routes  "
                f"oa OPENAI_BASE_URL={base}/r/oa/v1  oa ANTHROPIC_BASE_URL={base}/r/oa  "
                f"oa GOOGLE_GEMINI_BASE_URL={base}/r/oa  oa MCP {base}/r/oa/mcp  "
                f"an ANTHROPIC_BASE_URL={base}/r/an  routes from --route  store flows.sqlite3")
            await asyncio.to_thread(post_chat, f"{base}/r/oa")
            await seen.wait_for(completed(1))
            await settle(app, pilot)
            flows = app.query_one(FlowList)
            assert flows.current.route == "oa"
            assert row_text(flows)[3] == "oa:/v1/chat/completions"
