"""Pixel-level guards for the main views. Refresh on purpose: `pytest tests/tui --snapshot-update`.

Fixed clock, fixed flow ids and times (tests/tui/flows.py), UTC, a relative store path, and no
blinking cursor (read-only panes), so the same code renders the same SVG on every run."""

import pytest

from inspector.flow import FIXED_REPLAY_NOTE
from inspector.store import Store

from .conftest import make_app
from .flows import defective_request, save_flow

SIZE = (120, 36)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_flow_list(snap_compare, store: Store, ids: dict[str, int], size: tuple[int, int]) -> None:
    # Both kinds of replay: ↻#3 as recorded, ↻F#3 with the safe repairs.
    save_flow(store, defective_request(), offset=11, replay_of=ids["defective"], notes=[FIXED_REPLAY_NOTE])

    async def select_defective(pilot) -> None:
        await pilot.app.workers.wait_for_complete()
        await pilot.press("k", "k", "k", "k")

    assert snap_compare(make_app(store), terminal_size=size, run_before=select_defective)


def test_flow_view_with_a_highlighted_violation(snap_compare, store: Store, ids: dict[str, int]) -> None:
    async def open_and_choose(pilot) -> None:
        pilot.app.open_flow(ids["defective"])
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()

    assert snap_compare(make_app(store), terminal_size=SIZE, run_before=open_and_choose)


def test_help(snap_compare, store: Store, ids: dict[str, int]) -> None:
    assert snap_compare(make_app(store), terminal_size=SIZE, press=["question_mark"])


async def open_defective(pilot) -> None:
    pilot.app.open_flow(3)  # the defective flow (tests/tui/flows.py fixes the ids)
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
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
        await pilot.app.workers.wait_for_complete()
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
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press(key)
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(make_app(store), terminal_size=size, run_before=open_view)
