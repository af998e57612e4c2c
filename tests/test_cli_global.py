"""Options given before the subcommand, and TOOLWIRE_STORE: an option is applied or refused, never
silently dropped; the store is --store, else $TOOLWIRE_STORE, else the user data dir."""

from __future__ import annotations

import json

import pytest

from inspector.cli import main
from inspector.store import Store
from tests.tui.flows import populate


@pytest.fixture
def stores(tmp_path, monkeypatch):
    """Two real stores, `a` with the populated flows and `b` with none; the default store lives in tmp_path."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("TOOLWIRE_STORE", raising=False)
    with Store(tmp_path / "a.sqlite3") as store:
        count = len(populate(store))
    Store(tmp_path / "b.sqlite3").close()
    return tmp_path / "a.sqlite3", tmp_path / "b.sqlite3", count


def _listed(capsys) -> int:
    return len(json.loads(capsys.readouterr().out))


def test_store_before_the_subcommand_is_the_store_it_reads(stores, capsys):
    a, b, count = stores
    assert main(["--store", str(a), "flows", "--json"]) == 0
    assert _listed(capsys) == count
    assert main(["--store", str(a), "export", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "toolwire-fixture"


def test_the_flag_after_the_subcommand_wins_over_the_one_before(stores, capsys):
    a, b, _ = stores
    assert main(["--store", str(a), "flows", "--json", "--store", str(b)]) == 0
    assert _listed(capsys) == 0


def test_toolwire_store_replaces_the_default_and_a_flag_replaces_it(stores, capsys, monkeypatch):
    a, b, count = stores
    monkeypatch.setenv("TOOLWIRE_STORE", str(a))
    assert main(["flows", "--json"]) == 0
    assert _listed(capsys) == count
    assert main(["flows", "--json", "--store", str(b)]) == 0
    assert _listed(capsys) == 0
    assert main(["--store", str(b), "flows", "--json"]) == 0
    assert _listed(capsys) == 0
    monkeypatch.setenv("TOOLWIRE_STORE", str(a.parent / "missing.sqlite3"))
    assert main(["flows"]) == 2
    assert capsys.readouterr().err == (
        f"toolwire-inspect: no flow store at {a.parent / 'missing.sqlite3'} (record some flows first)\n")


def test_an_empty_toolwire_store_means_unset(stores, capsys, monkeypatch):
    monkeypatch.setenv("TOOLWIRE_STORE", "")
    assert main(["flows"]) == 2
    default = stores[0].parent / "data" / "toolwire-inspect" / "flows.sqlite3"
    assert capsys.readouterr().err == f"toolwire-inspect: no flow store at {default} (record some flows first)\n"


def test_an_option_the_subcommand_does_not_take_is_refused_not_dropped(stores, capsys):
    a, _, _ = stores
    assert main(["--upstream", "http://127.0.0.1:9", "flows", "--store", str(a)]) == 2
    assert capsys.readouterr().err == (
        "toolwire-inspect: --upstream given before `flows`, which takes no --upstream (options go after the "
        "command: toolwire-inspect flows --help)\n")
    assert main(["--repair", "--port", "9", "export", "1"]) == 2
    assert capsys.readouterr().err == (
        "toolwire-inspect: --port, --repair given before `export`, which takes no --port, --repair (options go "
        "after the command: toolwire-inspect export --help)\n")


def test_forwarder_options_before_record_apply_to_it(stores, capsys):
    # --host before `record` reaches record: it refuses a remote address without --allow-remote.
    a, _, _ = stores
    assert main(["--host", "0.0.0.0", "record", "--port", "0", "--upstream", "http://127.0.0.1:9", "--store", str(a)]) == 2
    assert capsys.readouterr().err.startswith("toolwire-inspect: refusing to listen on 0.0.0.0: ")
