"""Pixel-level guards for the main views. Refresh on purpose: `pytest tests/tui --snapshot-update`.

Fixed clock, fixed flow ids and times (tests/tui/flows.py), UTC, a relative store path, and no
blinking cursor (read-only panes), so the same code renders the same SVG on every run."""

from inspector.store import Store

from .conftest import make_app

SIZE = (120, 36)


def test_flow_list(snap_compare, store: Store, ids: dict[str, int]) -> None:
    async def select_defective(pilot) -> None:
        await pilot.press("k", "k", "k")

    assert snap_compare(make_app(store), terminal_size=SIZE, run_before=select_defective)


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
