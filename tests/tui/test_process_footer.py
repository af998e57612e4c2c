"""The key bar rebuilds only when the keys it shows change (widgets/footer.py): Textual's rebuilt
them at every bindings update, half the UI thread's work while a flow opens."""

from __future__ import annotations

from textual.widgets._footer import FooterKey

from inspector.store import Store
from inspector.tui.widgets.footer import SteadyFooter

from .conftest import make_app, settle


def shown(footer: SteadyFooter) -> list[str]:
    return [key.description for key in footer.query(FooterKey)]


async def test_the_footer_follows_the_keys_and_keeps_its_widgets_when_they_stay(
        store: Store, ids: dict[str, int]) -> None:
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        footer = app.screen.query_one(SteadyFooter)
        assert shown(footer) == ["Open", "Sort", "Quit", "Filter", "Replay", "Export", "Edit", "Keys", "palette"]
        keys = list(footer.query(FooterKey))
        app.screen.refresh_bindings()  # a bindings update that changes no key
        await pilot.pause()
        assert list(footer.query(FooterKey)) == keys and all(key.is_attached for key in keys)
        await pilot.press("slash")  # the filter field takes the focus: the list's own keys go
        await pilot.pause()
        assert shown(footer) == ["palette"]
