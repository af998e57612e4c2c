"""The README screenshots: the built-in demo's turns recorded through a real forwarder into a
fresh store, one failing turn replayed fixed (R), then every view saved as SVG at 80x24 and 160x48.

    .venv/bin/python -m tests.tui.make_screenshots [OUT_DIR]     (default: screenshots/)

Only Flow data is displayed, and Flow headers are redacted by the forwarder: the demo key sent
with every request must not appear in any SVG, which this script checks before it exits."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path


from inspector.demo import demo_forwarder, demo_upstream, run_agent
from inspector.demo_script import DEMO_API_KEY, TURNS
from inspector.flow import ReplayKind
from inspector.mock import MockUpstream
from inspector.proxy import Forwarder, ForwarderError
from inspector.proxy.routes import Router
from inspector.store import Store
from inspector.tui.app import InspectorApp
from inspector.tui.bridge import EventBridge
from inspector.tui.screens.flow import FlowScreen
from inspector.session import LocalSession
from tests.tui.conftest import workers_done

# Designed at 80x24 first (a laptop terminal), then using the room at 160x48.
SIZES = [(80, 24), (160, 48)]
# The ports the README's commands use, so the header reads as it will for a user; an ephemeral
# port when they are taken (the text changes, nothing else).
FORWARDER_PORT, UPSTREAM_PORT = 8787, 8788



def start(make, port: int):
    try:
        return make(port)
    except (ForwarderError, OSError):
        return make(0)


def record(store: Store, bridge: EventBridge) -> tuple[MockUpstream, Forwarder | Router]:
    def make_upstream(port: int) -> MockUpstream:
        # 20 ms between events, as a model streams: each event arrives as its own chunk.
        return demo_upstream(interval=0.02, port=port).start()

    upstream = start(make_upstream, UPSTREAM_PORT)

    def make_forwarder(port: int) -> Forwarder | Router:
        forwarder = demo_forwarder(upstream.base_url, store, port=port, on_event=bridge)
        forwarder.start()
        return forwarder

    forwarder = start(make_forwarder, FORWARDER_PORT)
    run_agent(forwarder.client_url)
    upstream.wait_answered(len(TURNS))
    store.flush()
    return upstream, forwarder


async def settle(app: InspectorApp, pilot) -> None:
    await pilot.pause()
    await workers_done(app)
    await pilot.pause()


async def replay_fixed(app: InspectorApp, pilot, flow_id: int) -> None:
    """`R` on a failing turn, as a user would, then wait (with a deadline) until the forwarder has
    recorded the replay: the replay comparison needs it in the store."""
    app.replay_flow(flow_id, ReplayKind.FIXED)
    await settle(app, pilot)
    deadline = time.monotonic() + 10
    while not any(row.replay_of == flow_id for row in app.store.rows()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the replay of #{flow_id} was not recorded")
        await pilot.pause(0.05)


def keep_spaces(svg: str) -> str:
    """A terminal's columns are spaces: without xml:space="preserve", rsvg-convert (and so every
    tool built on librsvg) drops a line's leading ones and the indentation is gone."""
    return svg.replace("<svg ", '<svg xml:space="preserve" ', 1)


async def shoot(app: InspectorApp, out: Path, size: tuple[int, int]) -> list[Path]:
    """Every view at one terminal size; the file names carry it (flow-list-80x24.svg)."""
    saved = []

    def save(name: str) -> None:
        path = out / f"{name}-{size[0]}x{size[1]}.svg"
        path.write_text(keep_spaces(app.export_screenshot()), encoding="utf-8")
        saved.append(path)

    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        rows = app.store.rows()
        defective = next(r for r in rows if r.errors and r.path.endswith("/chat/completions") and r.replay_of is None)
        if not any(row.replay_of == defective.id for row in rows):
            await replay_fixed(app, pilot, defective.id)
        app.flows_screen.flow_list.select_id(defective.id)
        await pilot.pause()
        save("flow-list")

        app.open_flow(defective.id)
        await settle(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        save("flow-view")

        await pilot.press("z")  # the findings pane has the focus: each finding in full
        await pilot.pause()
        save("findings")
        await pilot.press("z")

        for key, name in (("t", "conversation"), ("F", "fixed-diff"), ("v", "replay-comparison")):
            await pilot.press(key)
            await settle(app, pilot)
            save(name)
            await pilot.press("escape")
            await pilot.pause()

        await pilot.press("escape")
        streamed = next(r for r in rows if r.streamed)
        app.open_flow(streamed.id)
        await settle(app, pilot)
        assert isinstance(app.screen, FlowScreen)
        await pilot.press("s")
        await pilot.pause()
        save("stream-chunks")

        await pilot.press("escape", "question_mark")
        await pilot.pause()
        save("help")
    return saved


def main(argv: list[str]) -> int:
    out = Path(argv[1] if len(argv) > 1 else "screenshots").resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.environ["TZ"] = "UTC"
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)  # the header shows the store path: keep it short and free of user names
        bridge = EventBridge()
        store = Store("flows.sqlite3")
        upstream, forwarder = record(store, bridge)
        try:
            saved = []
            for size in SIZES:
                app = InspectorApp(store=store, forwarder=LocalSession(forwarder, store), bridge=bridge)
                saved += asyncio.run(shoot(app, out, size))
        finally:
            forwarder.stop()
            upstream.stop()
            store.close()
    leaked = [p for p in saved if DEMO_API_KEY in p.read_text()]
    for path in saved:
        print(path)
    if leaked:
        print(f"secret found in {', '.join(map(str, leaked))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
