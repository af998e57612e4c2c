"""The shape of inspector.formats: each module imports on its own, the imports among its modules form
no cycle (function-local and TYPE_CHECKING imports included: a cycle hidden inside a function is
still one), no module writes a file but through inspector.files, and every writer the registry has
refuses to write through a symbolic link."""

from __future__ import annotations

import ast
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import inspector.formats
from inspector.cli import main
from inspector.cli.open import opened_store
from inspector.formats.base import LoadError, NotARecording
from inspector.formats.registry import FORMATS, READERS, WRITERS, default_name, load_bytes

PACKAGE = Path(inspector.formats.__file__).parent
MODULES = sorted(path.stem for path in PACKAGE.glob("*.py") if path.stem != "__init__")
DATA = Path(__file__).parent.parent / "data"
VICTIM = b"export PATH=$HOME/bin:$PATH\n"


def import_graph(folder: Path, package: str) -> dict[str, set[str]]:
    """module -> the modules of `package` (the .py files of `folder`) it imports, read with ast."""
    modules = {path.stem for path in folder.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        here = path.stem
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or "" if node.level == 0 else package + ("." + node.module if node.module else "")
                if node.level > 1:
                    continue  # the parent's modules, outside the package
                names = [base] + [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                head, _, rest = name.partition(package + ".")
                if head == "" and rest.split(".")[0] in modules:
                    found.add(rest.split(".")[0])
        graph[here] = found - {here}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (its modules, the first repeated at the end), or None."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return path[path.index(node):] + [node]
        if node in done:
            return None
        for nxt in sorted(graph.get(node, ())):
            found = visit(nxt, path + [node])
            if found is not None:
                return found
        done.add(node)
        return None

    return next((c for c in (visit(node, []) for node in sorted(graph)) if c is not None), None)


def test_the_graph_reader_finds_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from . import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from .c import g\n")
    (tmp_path / "c.py").write_text("import typing\nif typing.TYPE_CHECKING:\n    from pkg.a import x\n")
    (tmp_path / "d.py").write_text("from ..flow import Flow\nimport pkg.c\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph == {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"c"}}
    assert cycle(graph) == ["a", "b", "c", "a"]


def test_the_formats_import_each_other_without_a_cycle() -> None:
    graph = import_graph(PACKAGE, "inspector.formats")
    assert cycle(graph) is None
    # The layers the package's docstring names.
    assert graph["base"] == set()
    assert graph["__init__"] == set()
    assert {name for name, imports in graph.items() if "registry" in imports} == set()
    assert graph["registry"] == {"base", "fixture", "load", "har", "cassette", "pytest_export", "otlp", "html"}


@pytest.mark.parametrize("module", MODULES)
def test_each_formats_module_imports_alone_in_a_fresh_interpreter(module: str) -> None:
    result = subprocess.run([sys.executable, "-c", f"import inspector.formats.{module}"], capture_output=True,
                            text=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


# Path.replace and .rename are not told from str.replace by their spelling; they move a file some
# call here would have had to write first.
_PATH_WRITES = {"write_bytes", "write_text", "mkdir", "touch", "symlink_to", "hardlink_to"}
_OS_WRITES = {"open", "write", "replace", "rename", "link", "symlink", "mkdir", "makedirs"}


def _writes(node: ast.Call) -> str | None:
    """What the call writes to disk, or None."""
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("os", "shutil",
                                                                                                  "tempfile"):
        return f"{func.value.id}.{func.attr}" if func.value.id != "os" or func.attr in _OS_WRITES else None
    if isinstance(func, ast.Attribute) and func.attr in _PATH_WRITES:
        return func.attr
    if isinstance(func, ast.Name) and func.id == "open" or isinstance(func, ast.Attribute) and func.attr == "open":
        at = 1 if isinstance(func, ast.Name) else 0
        modes = [a.value for a in node.args[at:at + 1] if isinstance(a, ast.Constant)]
        modes += [k.value.value for k in node.keywords if k.arg == "mode" and isinstance(k.value, ast.Constant)]
        return None if modes and not set(str(modes[0])) & set("wax+") else f"open {modes}"
    return None


def test_no_formats_module_writes_a_file_itself() -> None:
    """Writers return bytes; the disk is inspector.files' (a new private file, never through a link)."""
    found = [(module, node.lineno, _writes(node)) for module in MODULES
             for node in ast.walk(ast.parse((PACKAGE / f"{module}.py").read_text()))
             if isinstance(node, ast.Call) and _writes(node) is not None]
    assert found == []


def test_the_writes_check_sees_each_way_of_writing() -> None:
    calls = ["open(p, 'w')", "open(p)", "p.open('ab')", "p.write_bytes(b)", "os.replace(a, b)", "tempfile.mkstemp()",
             "shutil.copy(a, b)", "p.open('rb')", "open(p, mode='rb')", "replace(analysis, request=r)", "s.replace('a', 'b')"]
    assert [_writes(ast.parse(c).body[0].value) for c in calls] == [  # type: ignore[attr-defined]
        "open ['w']", "open []", "open ['ab']", "write_bytes", "os.replace", "tempfile.mkstemp", "shutil.copy",
        None, None, None, None]


def test_the_registry_names_each_format_once_and_reads_in_its_order() -> None:
    assert [f.name for f in FORMATS] == ["json", "pytest", "vcr", "har", "otlp", "html"]
    assert WRITERS == ("json", "pytest", "vcr", "har", "otlp", "html")
    assert [f.name for f in READERS] == ["json", "har", "vcr", "otlp", "phoenix"]
    assert [default_name(name, 7) for name in WRITERS] == [
        "flow-7.json", "test_flow_7.py", "flow-7.yaml", "flow-7.har", "flow-7.otlp.json", "flow-7.html"]


def test_a_file_two_readers_could_claim_is_read_by_the_first_of_readers() -> None:
    """A HAR log beside an "interactions" list is a HAR file (here one without entries), as it was
    before the registry; a file with no format's mark is not parsed, and names the formats that claim."""
    with pytest.raises(LoadError) as refused:
        load_bytes(b'{"log": {}, "interactions": []}', "both.json")
    assert (type(refused.value), str(refused.value)) == (LoadError, "both.json: a HAR file without log.entries")
    with pytest.raises(NotARecording) as refused:
        load_bytes(b"[1, 2]", "list.json")
    assert str(refused.value) == "list.json: not a toolwire fixture, a HAR file or a vcrpy cassette"


@pytest.fixture
def stored(tmp_path: Path) -> str:
    folder = tmp_path / "store"
    folder.mkdir()
    opened_store([str(DATA / "har" / "chrome.har"), str(DATA / "har" / "firefox.har")], folder).close()
    return str(folder / "opened.sqlite3")


@pytest.mark.parametrize("fmt", WRITERS)
def test_every_writer_refuses_a_symbolic_link_and_writes_private_files(fmt: str, stored: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(VICTIM)
    link = tmp_path / "out"
    link.symlink_to(victim)
    assert main(["export", "1", "--format", fmt, "--store", stored, "-o", str(link)]) == 2
    assert capsys.readouterr().err == (f"toolwire-inspect: {link} is a symbolic link: not written through it "
                                       "(name the file it points to, or remove the link)\n")
    folder = tmp_path / "several"
    folder.mkdir()
    found = next(f for f in FORMATS if f.name == fmt)
    # `--select` writes one "selection" file of a format that holds many, else one file per flow.
    names = ["selection" + found.suffix] if found.holds_many else [default_name(fmt, 1), default_name(fmt, 2)]
    planted = folder / names[-1]
    planted.symlink_to(victim)
    assert main(["export", "--select", "", "--format", fmt, "--store", stored, "-o", str(folder)]) == 2
    assert capsys.readouterr().err == (f"toolwire-inspect: cannot write {planted}: it exists, not replaced "
                                       "(export into a new or empty directory)\n")
    assert (victim.read_bytes(), link.is_symlink(), sorted(os.listdir(folder))) == (VICTIM, True, [planted.name])
    planted.unlink()
    assert main(["export", "--select", "", "--format", fmt, "--store", stored, "-o", str(folder)]) == 0
    written = {p.name: stat.S_IMODE(p.lstat().st_mode) for p in folder.iterdir()}
    assert written == dict.fromkeys(names, 0o600)
