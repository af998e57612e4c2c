"""`toolwire-inspect` with no subcommand: its options, and the clear refusals before any UI starts."""

from pathlib import Path

import pytest

from inspector.cli import main, parse_args


def test_defaults() -> None:
    args = parse_args([])
    assert (args.upstream, args.port, args.host, args.allow_remote, args.store, args.translate) == (
        None, 8787, "127.0.0.1", False, None, None)


def test_an_upstream_that_is_not_a_url_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--upstream", "api.openai.com", "--store", str(tmp_path / "f.sqlite3")])
    assert (code, capsys.readouterr().err) == (
        2, "toolwire-inspect: --upstream must be an http(s) URL such as https://api.openai.com; "
           "got 'api.openai.com'\n")


def test_a_remote_host_needs_allow_remote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--upstream", "http://127.0.0.1:9", "--host", "0.0.0.0", "--store", str(tmp_path / "f.sqlite3")])
    assert code == 2
    assert capsys.readouterr().err.startswith("toolwire-inspect: refusing to listen on 0.0.0.0: ")


def test_an_unusable_store_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "not-a-dir").write_text("")
    code = main(["--store", str(tmp_path / "not-a-dir" / "f.sqlite3")])
    assert code == 2
    assert capsys.readouterr().err.startswith(f"toolwire-inspect: cannot open store {tmp_path}/not-a-dir/f.sqlite3: ")
