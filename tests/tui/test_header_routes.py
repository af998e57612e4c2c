"""Issue 22, the header at 80×24 and 160×48: a routed launch shows where the unnamed route goes (its
upstream, redacted) or how many routes it serves, never the form the session stores for replay
(`=URL name=URL`)."""

from __future__ import annotations

import pytest

from inspector.mock import MockUpstream
from inspector.proxy.options import Options
from inspector.proxy.routes import open_forwarder, resolve
from inspector.session import session_routes, upstream_summary
from inspector.store import Store
from inspector.tui.widgets.connection import ConnectionBar

from .conftest import make_app, settle
from .test_flow_view import SIZES


def first_row(app) -> str:
    return str(app.query_one(ConnectionBar).render()).split("\n")[0]


@pytest.mark.parametrize("size", SIZES)
async def test_an_unnamed_upstream_beside_routes_shows_its_url_redacted(store: Store, tmp_path, size) -> None:
    with MockUpstream() as upstream:
        # A password in the URL never reaches the header.
        secret = upstream.base_url.replace("http://", "http://me:SECRET-1@")
        table = resolve(upstream=secret, routes=["an=https://api.anthropic.com"], cwd=tmp_path)
        with open_forwarder(table, Options(port=0), store=store) as router:
            redacted = upstream.base_url.replace("http://", "http://me:****@")
            assert router.upstream_shown == f"={redacted} an=https://api.anthropic.com"  # what the session stores
            app = make_app(store, forwarder=router)
            async with app.run_test(size=size) as pilot:
                await settle(app, pilot)
                assert first_row(app) == f"toolwire-inspect routes  listening {router.base_url} → {redacted}"


@pytest.mark.parametrize("size", SIZES)
async def test_named_routes_alone_show_how_many(store: Store, tmp_path, size) -> None:
    table = resolve(routes=["oa=http://127.0.0.1:9", "an=https://api.anthropic.com"], cwd=tmp_path)
    with open_forwarder(table, Options(port=0), store=store) as router:
        app = make_app(store, forwarder=router)
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            assert first_row(app) == f"toolwire-inspect routes  listening {router.base_url} → 2 routes"


def test_the_stored_form_reads_back() -> None:
    assert session_routes("=http://a oa=http://b") == {"": "http://a", "oa": "http://b"}
    assert session_routes("http://plain") is None
    assert [upstream_summary(stored) for stored in ("http://plain", "=http://a oa=http://b", "oa=http://b",
                                                    "oa=http://b an=http://c")] == [
        "http://plain", "http://a", "1 route", "2 routes"]
