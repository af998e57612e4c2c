"""Pixel-level guards for the main views. Refresh on purpose: `pytest tests/tui --snapshot-update`.

Fixed clock, fixed flow ids and times (tests/tui/flows.py), UTC, a relative store path, and no
blinking cursor (read-only panes), so the same code renders the same SVG on every run."""

import pytest

from inspector.flow import FIXED_REPLAY_NOTE
from inspector.store import Store

from .conftest import make_app, workers_done
from .flows import defective_request, save_flow

SIZE = (120, 36)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_flow_list(snap_compare, store: Store, ids: dict[str, int], size: tuple[int, int]) -> None:
    # Both kinds of replay: ↻#3 as recorded, ↻F#3 with the safe repairs.
    save_flow(store, defective_request(), offset=11, replay_of=ids["defective"], notes=[FIXED_REPLAY_NOTE])

    async def select_defective(pilot) -> None:
        await workers_done(pilot.app)
        await pilot.press("k", "k", "k", "k")

    assert snap_compare(make_app(store), terminal_size=size, run_before=select_defective)


def test_flow_view_with_a_highlighted_violation(snap_compare, store: Store, ids: dict[str, int]) -> None:
    async def open_and_choose(pilot) -> None:
        pilot.app.open_flow(ids["defective"])
        await pilot.pause()
        await workers_done(pilot.app)
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()

    assert snap_compare(make_app(store), terminal_size=SIZE, run_before=open_and_choose)


def test_help(snap_compare, store: Store, ids: dict[str, int]) -> None:
    assert snap_compare(make_app(store), terminal_size=SIZE, press=["question_mark"])


async def open_defective(pilot) -> None:
    pilot.app.open_flow(3)  # the defective flow (tests/tui/flows.py fixes the ids)
    await pilot.pause()
    await workers_done(pilot.app)
    await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_flow_view_at(snap_compare, store: Store, ids: dict[str, int], size: tuple[int, int]) -> None:
    """Stacked with the findings in full at 80 columns; side by side at 160."""
    assert ids["defective"] == 3
    assert snap_compare(make_app(store), terminal_size=size, run_before=open_defective)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_stream_chunks_at(snap_compare, store: Store, ids: dict[str, int], size: tuple[int, int]) -> None:
    """Each chunk's events parsed beside its bytes, wrapped rather than cut."""
    async def open_chunks(pilot) -> None:
        pilot.app.open_flow(ids["streamed"])
        await pilot.pause()
        await workers_done(pilot.app)
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()

    assert snap_compare(make_app(store), terminal_size=size, run_before=open_chunks)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
@pytest.mark.parametrize(("flow", "key"), [("defective", "t"), ("defective", "F"), ("replay", "v")],
                         ids=["conversation", "fixed-diff", "replay-comparison"])
def test_view_at(snap_compare, store: Store, ids: dict[str, int], size: tuple[int, int], flow: str,
                 key: str) -> None:
    """The views that explain a failing turn, stacked at 80 columns and side by side at 160."""
    async def open_view(pilot) -> None:
        pilot.app.open_flow(ids[flow])
        await pilot.pause()
        await workers_done(pilot.app)
        await pilot.pause()
        await pilot.press(key)
        await pilot.pause()
        await workers_done(pilot.app)
        await pilot.pause()

    assert snap_compare(make_app(store), terminal_size=size, run_before=open_view)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_upstream_answer_diff_at(snap_compare, store: Store, size: tuple[int, int]) -> None:
    """`D`: Anthropic's own answer against the Chat completion the client got, the dropped thinking
    block's loss on its line. The flow is written as the forwarder writes one, by the real bridge."""
    import orjson

    from inspector.flow import Mode
    from inspector.wire.dialects.anthropic.mock import anthropic_message
    from inspector.wire.translate import get_bridge

    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    request = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Weather in Paris?"}]}
    bridge = get_bridge("openai-chat", "anthropic")
    sent = bridge.request(request, "/v1/chat/completions")
    answer = anthropic_message("Sunny.")
    answer["content"].insert(0, {"type": "thinking", "thinking": "Paris, then.", "signature": "sig"})
    got = {**bridge.response(answer, sent.state).payload, "created": 1700000000}  # the bridge stamps the hour
    flow = store.get(save_flow(store, request, response=got))
    assert flow is not None
    flow.mode, flow.translate = Mode.TRANSLATE, "openai-chat:anthropic"
    flow.upstream_request_body, flow.upstream_response_body = orjson.dumps(sent.payload), orjson.dumps(answer)
    store.save(flow)

    async def open_view(pilot) -> None:
        pilot.app.open_flow(flow.id)
        await pilot.pause()
        await workers_done(pilot.app)
        await pilot.pause()
        await pilot.press("D")
        await pilot.pause()
        await workers_done(pilot.app)
        await pilot.pause()

    assert snap_compare(make_app(store), terminal_size=size, run_before=open_view)
