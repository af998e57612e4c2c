"""The pre-commit hook the project ships: it runs the installed `check` over fixture files."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_the_hook_runs_check_over_fixture_files_and_fails_on_an_error(tmp_path):
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    command, *arguments = hook["entry"].split()
    assert (hook["id"], hook["language"], scripts[command], arguments) == (
        "toolwire-check", "python", "inspector.cli:main", ["check"])
    files = re.compile(hook["files"])
    assert [name for name in ("tests/fixtures/turn.json", "fixtures/stream.sse", "a/payloads/x.json",
                              "src/app.json", "tests/fixtures/notes.md") if files.search(name)] == [
        "tests/fixtures/turn.json", "fixtures/stream.sse", "a/payloads/x.json"]
    # pre-commit appends the staged file names to the entry: run it the same way, as a process.
    (tmp_path / "ok.json").write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}')
    (tmp_path / "bad.json").write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}], '
                                       '"tools": [{"type": "web_search"}]}')
    run = [str(Path(subprocess.sys.executable).parent / command), *arguments]
    assert subprocess.run([*run, "ok.json"], cwd=tmp_path, capture_output=True).returncode == 0
    failed = subprocess.run([*run, "ok.json", "bad.json"], cwd=tmp_path, capture_output=True, text=True)
    assert (failed.returncode, failed.stdout.splitlines()) == (1, [
        "bad.json:/tools/0/type: error OC-01 (rejects) tool type 'web_search' is not accepted by Chat (only 'function' and "
        "'custom')",
        "2 files checked: 1 error(s), 0 warning(s), 0 info"])
