"""Files the commands write (`export -o`, `export --session -o DIR`, `check --fix`): never through a
symbolic link, never over a file the user did not name, each created private (0600) and whole."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import orjson
import pytest

from inspector.cli import main
from inspector.cli.open import opened_store
from inspector.files import NotWritten, exports_dir, write_file, write_new

DATA = Path(__file__).parent / "data"
VICTIM = b"export PATH=$HOME/bin:$PATH\n"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def stored(tmp_path: Path) -> str:
    """A store holding the two turns of two HAR files (flows 1 and 2)."""
    folder = tmp_path / "store"
    folder.mkdir()
    opened_store([str(DATA / "har" / "chrome.har"), str(DATA / "har" / "firefox.har")], folder).close()
    return str(folder / "opened.sqlite3")


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim"
    path.write_bytes(VICTIM)
    path.chmod(0o644)
    return path


def intact(victim: Path) -> bool:
    return (victim.read_bytes(), mode(victim)) == (VICTIM, 0o644)


def test_export_to_a_symbolic_link_is_refused(stored: str, victim: Path, tmp_path: Path, capsys) -> None:
    link = tmp_path / "flow-1.json"
    link.symlink_to(victim)
    assert main(["export", "1", "--store", stored, "-o", str(link)]) == 2
    assert capsys.readouterr().err == (f"toolwire-inspect: {link} is a symbolic link: not written through it "
                                       "(name the file it points to, or remove the link)\n")
    assert intact(victim) and link.is_symlink()


def test_export_replaces_the_file_the_user_named_with_a_private_one(stored: str, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_bytes(b"old")
    out.chmod(0o644)
    other = tmp_path / "other-name"
    os.link(out, other)  # a hard link to it keeps the old bytes: the name gets a new file
    assert main(["export", "1", "--store", stored, "-o", str(out)]) == 0
    assert orjson.loads(out.read_bytes())["request"]["path"] == "/v1/chat/completions"
    assert (mode(out), other.read_bytes()) == (0o600, b"old")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other-name", "out.json", "store"]  # no temporary left


def test_export_into_a_directory_never_replaces_a_file_there(stored: str, victim: Path, tmp_path: Path,
                                                             capsys) -> None:
    out = tmp_path / "fixtures"
    out.mkdir()
    (out / "flow-2.json").symlink_to(victim)
    assert main(["export", "--select", "", "--store", stored, "-o", str(out)]) == 2
    assert capsys.readouterr().err == (f"toolwire-inspect: cannot write {out / 'flow-2.json'}: it exists, not "
                                       "replaced (export into a new or empty directory)\n")
    assert intact(victim)
    (out / "flow-2.json").unlink()
    assert main(["export", "--select", "", "--store", stored, "-o", str(out)]) == 0
    assert {p.name: mode(p) for p in out.iterdir()} == {"flow-1.json": 0o600, "flow-2.json": 0o600}


def test_export_makes_the_directory_it_is_given_private(stored: str, tmp_path: Path) -> None:
    out = tmp_path / "new" / "fixtures"
    assert main(["export", "--session", "--store", stored, "-o", str(out), "--format", "har"]) == 0
    assert (mode(out.parent), mode(out), [(p.name, mode(p)) for p in out.iterdir()]) == (
        0o700, 0o700, [("session-1.har", 0o600)])


def test_the_html_page_is_never_written_through_a_link_nor_over_a_file(stored: str, victim: Path, tmp_path: Path,
                                                                       capsys) -> None:
    link = tmp_path / "flow-1.html"
    link.symlink_to(victim)
    assert main(["export", "1", "--format", "html", "--store", stored, "-o", str(link)]) == 2
    assert capsys.readouterr().err == (f"toolwire-inspect: {link} is a symbolic link: not written through it "
                                       "(name the file it points to, or remove the link)\n")
    out = tmp_path / "pages"
    out.mkdir()
    (out / "session-1.html").symlink_to(victim)
    assert main(["export", "--session", "--format", "html", "--store", stored, "-o", str(out)]) == 2
    assert capsys.readouterr().err == (f"toolwire-inspect: cannot write {out / 'session-1.html'}: it exists, not "
                                       "replaced (export into a new or empty directory)\n")
    assert intact(victim) and sorted(p.name for p in out.iterdir()) == ["session-1.html"]


def defective(tmp_path: Path) -> str:
    path = tmp_path / "req.json"
    path.write_bytes(orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [
        {"type": "function", "function": {"name": "f", "parameters": {"type": "OBJECT", "properties": {}}}}]}))
    return str(path)


def test_check_fix_to_a_symbolic_link_is_refused(tmp_path: Path, victim: Path, capsys) -> None:
    link = tmp_path / "fixed.json"
    link.symlink_to(victim)
    assert main(["check", "--fix", str(link), defective(tmp_path)]) == 2
    assert capsys.readouterr().err.endswith(f"toolwire-inspect: {link} is a symbolic link: not written through it "
                                            "(name the file it points to, or remove the link)\n")
    assert intact(victim)


def test_check_fix_into_a_directory_never_replaces_a_file_there(tmp_path: Path, victim: Path, capsys) -> None:
    out = tmp_path / "out"
    out.mkdir()
    first = defective(tmp_path)
    (out / "req.json").symlink_to(victim)
    (tmp_path / "b.json").write_bytes(Path(first).read_bytes())
    assert main(["check", "--fix", str(out), first, str(tmp_path / "b.json")]) == 2
    assert capsys.readouterr().err.endswith(f"toolwire-inspect: cannot write {out / 'req.json'}: it exists, not "
                                            "replaced (fix into a new or empty directory)\n")
    assert intact(victim)
    assert [p.name for p in out.iterdir()] == ["req.json"]  # said before anything is written


# -- the one home: inspector.files ---------------------------------------------------------------

def test_a_new_file_takes_the_next_free_name_and_leaves_no_temporary(tmp_path: Path, victim: Path) -> None:
    (tmp_path / "flow-3.curl.sh").write_bytes(b"mine")
    (tmp_path / "flow-3-2.curl.sh").symlink_to(victim)
    written = write_new(tmp_path, "flow-3.curl.sh", b"curl ...\n", rename=True)
    assert written == tmp_path / "flow-3-3.curl.sh"
    assert (written.read_bytes(), mode(written)) == (b"curl ...\n", 0o600)
    assert (tmp_path / "flow-3.curl.sh").read_bytes() == b"mine" and intact(victim)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flow-3-2.curl.sh", "flow-3-3.curl.sh", "flow-3.curl.sh",
                                                          "victim"]
    with pytest.raises(FileExistsError):
        write_new(tmp_path, "flow-3.curl.sh", b"again")


def test_a_named_file_is_replaced_whole_never_through_a_link(tmp_path: Path, victim: Path) -> None:
    link = tmp_path / "a.json"
    link.symlink_to(victim)
    with pytest.raises(NotWritten) as raised:
        write_file(link, b"{}")
    assert str(raised.value) == f"{link} is a symbolic link: not written through it (name the file it points to, or remove the link)"
    assert intact(victim)
    write_file(tmp_path / "b.json", b"{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json", "victim"]


def test_the_exports_directory_is_made_private_and_never_a_link(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    made = exports_dir()
    assert made == tmp_path / "data" / "toolwire-inspect" / "exports"
    assert (mode(made.parent), mode(made)) == (0o700, 0o700)
    made.chmod(0o755)
    assert mode(exports_dir()) == 0o700
    made.rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    made.symlink_to(elsewhere)
    with pytest.raises(NotWritten) as raised:
        exports_dir()
    assert str(raised.value) == f"{made} is a symbolic link: not written through it (remove the link)"


def test_an_error_names_the_file_asked_for_not_its_temporary(stored: str, tmp_path: Path, capsys) -> None:
    assert main(["export", "1", "--store", stored, "-o", str(tmp_path / "missing" / "flow.json")]) == 2
    assert capsys.readouterr().err == (f"toolwire-inspect: cannot write {tmp_path / 'missing' / 'flow.json'}: "
                                       "No such file or directory\n")
    (tmp_path / "taken").mkdir()
    assert main(["export", "1", "--store", stored, "-o", str(tmp_path / "taken")]) == 2
    assert capsys.readouterr().err == f"toolwire-inspect: cannot write {tmp_path / 'taken'}: Is a directory\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store", "taken"] and not any((tmp_path / "taken").iterdir())
