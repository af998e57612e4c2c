"""The files `Y`, `y` and `x` write from a recording someone else made: a repository that ships
`session.har` and symlinks named like the files the keys write (`flow-1.request-body.txt ->
~/.bashrc`) gets nothing written through them. Side files go to the user's exports directory, never
the current one, each a new private file: never over an existing file, never through a link."""

from __future__ import annotations

import json
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.cli.open import opened_store
from inspector.curl import curl_command
from inspector.formats.fixture import from_store
from inspector.formats.registry import render
from inspector.store import Store
from inspector.tui.app import InspectorApp
from inspector.tui.messages import Copied, CopyFailed, ExportFailed, ExportFinished

from .conftest import workers_done

from .test_actions import notes
from .test_live import Seen

HAR = Path(__file__).parent.parent / "data" / "har" / "chrome.har"
VICTIM = b"export PATH=$HOME/bin:$PATH\n"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout the user cd'ed into: the recording, and a link for each name a key would write."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(HAR, repo / "session.har")
    for name in ("flow-1.request-body.txt", "flow-1.curl.sh", "flow-1.json", "flow-1.har"):
        victim = tmp_path / f"victim-{name}"
        victim.write_bytes(VICTIM)
        victim.chmod(0o644)
        (repo / name).symlink_to(victim)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return repo


@pytest.fixture
def opened(repository: Path, tmp_path: Path) -> Iterator[Store]:
    """What `toolwire-inspect open session.har` shows (its temporary store, read-only)."""
    folder = tmp_path / "open"
    folder.mkdir()
    store = opened_store(["session.har"], folder)
    try:
        yield store
    finally:
        store.close()


def untouched(repo: Path) -> None:
    """Every victim as it was, every link still a link, nothing new in the checkout."""
    for link in repo.glob("flow-1.*"):
        assert link.is_symlink()
        victim = link.resolve()
        assert (victim.read_bytes(), mode(victim)) == (VICTIM, 0o644)
    assert sorted(p.name for p in repo.iterdir()) == [
        "flow-1.curl.sh", "flow-1.har", "flow-1.json", "flow-1.request-body.txt", "session.har"]


async def test_copies_and_exports_of_an_opened_recording_go_to_the_exports_directory(
        repository: Path, opened: Store, tmp_path: Path) -> None:
    exports = tmp_path / "data" / "toolwire-inspect" / "exports"
    seen = Seen()
    app = InspectorApp(store=opened, forwarder=None)
    async with app.run_test(size=(80, 24), message_hook=seen) as pilot:
        await workers_done(app)
        await pilot.press("Y", "enter")  # into the folder offered
        body = await seen.wait_for(lambda m: isinstance(m, (Copied, CopyFailed)) and m.what == "body")
        await pilot.press("y", "enter")  # into the folder offered
        curl = await seen.wait_for(lambda m: isinstance(m, (Copied, CopyFailed)) and m.what == "curl")
        await pilot.press("x", "enter", "enter")  # json, into the folder offered
        export = await seen.wait_for(lambda m: isinstance(m, (ExportFinished, ExportFailed)))
        await pilot.pause()
    flow = opened.get(1)
    assert (type(body), type(curl), type(export)) == (Copied, Copied, ExportFinished)
    assert (body.path, curl.path, export.path) == (
        str(exports / "flow-1.request-body.txt"), str(exports / "flow-1.curl.sh"), str(exports / "flow-1.json"))
    assert (exports / "flow-1.request-body.txt").read_bytes() == flow.request_body
    assert (exports / "flow-1.curl.sh").read_text() == curl_command(flow) + "\n"
    assert (exports / "flow-1.json").read_bytes() == render("json", [from_store(opened, flow)])
    assert {p.name: mode(p) for p in exports.iterdir()} == {
        "flow-1.request-body.txt": 0o600, "flow-1.curl.sh": 0o600, "flow-1.json": 0o600}
    assert mode(exports) == 0o700
    untouched(repository)
    assert notes(seen) == [
        ("Copy", f"#1 body copied (if the terminal allows OSC 52) and written to {exports}/flow-1.request-body.txt"),
        ("Copy", f"#1 curl copied (if the terminal allows OSC 52) and written to {exports}/flow-1.curl.sh"),
        ("Export", f"#1 written to {exports}/flow-1.json")]


async def test_a_side_file_never_replaces_a_file_already_there(repository: Path, opened: Store,
                                                                tmp_path: Path) -> None:
    """flow-1 of another recording was exported before (and someone linked a name ahead): the new
    export takes the next free name."""
    exports = tmp_path / "data" / "toolwire-inspect" / "exports"
    exports.mkdir(parents=True, mode=0o700)
    (exports / "flow-1.json").write_bytes(b'{"an": "earlier export"}\n')
    (exports / "flow-1-2.json").symlink_to(tmp_path / "victim-flow-1.json")
    seen = Seen()
    app = InspectorApp(store=opened, forwarder=None)
    async with app.run_test(size=(80, 24), message_hook=seen) as pilot:
        await workers_done(app)
        await pilot.press("x", "enter", "enter")  # json, into the folder offered
        first = await seen.wait_for(lambda m: isinstance(m, (ExportFinished, ExportFailed)))
        seen.messages.clear()
        await pilot.press("x", "enter", "enter")  # json, into the folder offered
        second = await seen.wait_for(lambda m: isinstance(m, (ExportFinished, ExportFailed)))
    assert (first.path, second.path) == (str(exports / "flow-1-3.json"), str(exports / "flow-1-4.json"))
    assert (exports / "flow-1.json").read_bytes() == b'{"an": "earlier export"}\n'
    assert (exports / "flow-1-2.json").is_symlink()
    assert json.loads((exports / "flow-1-3.json").read_bytes()) == json.loads((exports / "flow-1-4.json").read_bytes())
    assert (mode(exports / "flow-1-3.json"), mode(exports / "flow-1-4.json")) == (0o600, 0o600)
    untouched(repository)


async def test_a_big_curl_body_goes_in_a_side_file_beside_the_command(repository: Path, tmp_path: Path) -> None:
    """The body too big for the command line is a side file too, named by the command."""
    har = json.loads(HAR.read_text())
    request = har["log"]["entries"][0]["request"]
    request["postData"]["text"] = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 70_000}]})
    (repository / "big.har").write_text(json.dumps(har))
    (repository / "flow-1.body").symlink_to(tmp_path / "victim-flow-1.json")
    folder = tmp_path / "open"
    folder.mkdir()
    store = opened_store(["big.har"], folder)
    exports = tmp_path / "data" / "toolwire-inspect" / "exports"
    seen = Seen()
    try:
        app = InspectorApp(store=store, forwarder=None)
        async with app.run_test(size=(80, 24), message_hook=seen) as pilot:
            await workers_done(app)
            await pilot.press("y", "enter")  # into the folder offered
            curl = await seen.wait_for(lambda m: isinstance(m, (Copied, CopyFailed)))
        flow = store.get(1)
    finally:
        store.close()
    assert type(curl) is Copied
    assert curl.text == curl_command(flow, body_file=str(exports / "flow-1.body"))
    assert (exports / "flow-1.body").read_bytes() == flow.request_body
    assert {p.name: mode(p) for p in exports.iterdir()} == {"flow-1.body": 0o600, "flow-1.curl.sh": 0o600}
    assert (tmp_path / "victim-flow-1.json").read_bytes() == VICTIM



async def test_y_on_a_body_a_pasted_command_cannot_carry_copies_a_command_that_reads_it_from_a_file(
        repository: Path, tmp_path: Path) -> None:
    """A ^C in the body would abort the pasted line and run the rest: the body goes in a side file."""
    har = json.loads(HAR.read_text())
    har["log"]["entries"][0]["request"]["postData"]["text"] = '{"model":"m","messages":"\x03\n rm -rf ~ \x1b[2J\u202e"}'
    (repository / "hostile.har").write_text(json.dumps(har))
    folder = tmp_path / "open"
    folder.mkdir()
    store = opened_store(["hostile.har"], folder)
    exports = tmp_path / "data" / "toolwire-inspect" / "exports"
    seen = Seen()
    try:
        app = InspectorApp(store=store, forwarder=None)
        async with app.run_test(size=(80, 24), message_hook=seen) as pilot:
            await workers_done(app)
            await pilot.press("y", "enter")  # into the folder offered
            curl = await seen.wait_for(lambda m: isinstance(m, (Copied, CopyFailed)))
            clipboard = app.clipboard
        flow = store.get(1)
    finally:
        store.close()
    assert type(curl) is Copied and clipboard == curl.text
    assert clipboard.endswith(f"--data-binary @{exports / 'flow-1.body'}")
    assert not any(char in clipboard for char in "\x03\x1b\u202e")
    assert (exports / "flow-1.body").read_bytes() == flow.request_body


@pytest.mark.parametrize(("body", "clipboard", "note"), [
    # JSON: the same JSON on the clipboard, escaped; the file keeps the bytes as sent.
    ('{"model":"m",\t"messages":"\u202eevil\x7f"}', '{"model":"m", "messages":"\\u202eevil\\u007f"}',
     "#1 body copied (if the terminal allows OSC 52) and written to {path}"),
    # Not JSON: nothing on the clipboard a paste would act on; the file is where it is.
    ("not json \x03\n rm -rf ~ \x1b[2J", None,
     "#1 body written to {path}; not copied: it holds characters a paste would act on (U+0003, U+001B)"),
], ids=["json", "text"])
async def test_Y_copies_only_text_a_paste_cannot_turn_into_keystrokes(repository: Path, tmp_path: Path, body,
                                                                      clipboard, note) -> None:
    har = json.loads(HAR.read_text())
    har["log"]["entries"][0]["request"]["postData"]["text"] = body
    (repository / "hostile.har").write_text(json.dumps(har))
    folder = tmp_path / "open"
    folder.mkdir()
    store = opened_store(["hostile.har"], folder)
    path = tmp_path / "data" / "toolwire-inspect" / "exports" / "flow-1.request-body.txt"
    seen = Seen()
    try:
        app = InspectorApp(store=store, forwarder=None)
        async with app.run_test(size=(80, 24), message_hook=seen) as pilot:
            await workers_done(app)
            await pilot.press("Y", "enter")  # into the folder offered
            await seen.wait_for(lambda m: isinstance(m, (Copied, CopyFailed)))
            await pilot.pause()
            copied = app.clipboard
    finally:
        store.close()
    assert copied == ("" if clipboard is None else clipboard)
    assert path.read_bytes() == body.encode()
    assert notes(seen) == [("Copy", note.format(path=path))]
