"""The demo's session as the HTML export tests read it: the scripted agent through a real forwarder
to the demo's fake upstream, and a fixed replay (R) of its first failing turn, #3."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.demo import demo_forwarder, demo_upstream, run_agent
from inspector.flow import ReplayKind
from inspector.replay import replay_stored
from inspector.store import Store

FAILING = 3  # the demo's first failing turn: a genai Schema sent as-is (OC-05), 400


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.sqlite3"
    with Store(path) as store, demo_upstream(interval=0.0) as upstream, \
            demo_forwarder(upstream.base_url, store) as forwarder:
        run_agent(forwarder.client_url)
        replay_stored(store, forwarder, FAILING, kind=ReplayKind.FIXED)
        store.flush()
    return path
