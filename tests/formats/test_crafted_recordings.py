"""Crafted recordings (tests/crafted.py: every field of every format with every wrong type and edge
value, and whole files broken) through every reader: `check`, `open` (its store and the UI under
Pilot), `mock` and `export`, the commands as real processes. Each file is read with every turn it
holds, or refused in one line naming the file and what is wrong; never a traceback, never exit 1 for
a file that cannot be read, never a turn lost without a word."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import orjson
import pytest
import yaml

from inspector.formats import fixture as export, pytest_export
from inspector.analysis import analyse
from inspector.cli import main
from inspector.cli.open import opened_store
from inspector.formats.base import Exported
from inspector.flow import Flow
from inspector.formats.base import LoadError, NotARecording
from inspector.formats.load import MAX_RECORDING, MAX_YAML_RECORDING
from inspector.formats.registry import load, load_bytes, render
from inspector.mock import FixtureRoute
from inspector.tui.app import InspectorApp
from inspector.tui.widgets.flow_list import FlowList

from tests import crafted
from tests.tui.conftest import workers_done


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """Every crafted case written to a file: name -> path."""
    folder = tmp_path_factory.mktemp("crafted")
    written = {}
    for number, (name, suffix, data) in enumerate(crafted.cases()):
        path = folder / f"case{number}{suffix}"
        path.write_bytes(data)
        written[name] = path
    return written


def representatives(outcomes: dict[str, list | LoadError]) -> list[str]:
    """One read file of each base and each value (the readers' outcomes are alike within one)."""
    chosen: dict[tuple[str, str], str] = {}
    for name, outcome in outcomes.items():
        if not isinstance(outcome, LoadError):
            chosen.setdefault((name.split(":")[0], name.rsplit(":", 1)[-1]), name)
    return list(chosen.values())


@pytest.fixture(scope="module")
def outcomes(files) -> dict[str, list | LoadError]:
    """What `load` makes of each file: its turns, or the refusal."""
    found: dict[str, list | LoadError] = {}
    for name, path in files.items():
        try:
            found[name] = load(path)
        except LoadError as refusal:
            found[name] = refusal
    return found


def entries(path: Path) -> int:
    """How many turns the file holds, counted apart from the reader under test."""
    data = path.read_bytes()
    document = json.loads(data) if path.suffix in (".json", ".har") else yaml.load(data, Loader=yaml.CSafeLoader)
    if "log" in document:
        return len(document["log"]["entries"])
    return len(document["interactions"]) if "interactions" in document else 1


def valid(flow: Flow) -> list[str]:
    """What in a loaded flow is not what a Flow holds."""
    wrong = []
    if not (flow.status is None or (type(flow.status) is int and 100 <= flow.status <= 599)):
        wrong.append(f"status {flow.status!r}")
    for name in ("ttfb_ms", "latency_ms"):
        value = getattr(flow, name)
        if value is not None and not (type(value) in (int, float) and math.isfinite(value) and value >= 0):
            wrong.append(f"{name} {value!r}")
    if not all(type(c.t) in (int, float) and math.isfinite(c.t) and c.t >= 0 and type(c.data) is bytes
               for c in flow.chunks):
        wrong.append("chunks")
    for headers in (flow.request_headers, flow.response_headers, flow.upstream_request_headers):
        if not all(type(name) is str and type(value) is str for name, value in headers):
            wrong.append("headers")
    if not all(type(getattr(flow, name)) is str for name in ("method", "path", "query", "upstream_url")):
        wrong.append("method, path, query or url")
    try:
        urlsplit(flow.upstream_url).port  # noqa: B018 - the host and port every reader of a flow reads
    except ValueError:
        wrong.append(f"url {flow.upstream_url[:40]!r}")
    if type(flow.request_body) is not bytes or type(flow.response_body) is not bytes:
        wrong.append("bodies")
    if not (all(type(note) is str for note in flow.notes) and type(flow.error) in (str, type(None))
            and type(flow.translate) in (str, type(None))):
        wrong.append("notes, error or translate")
    return wrong


def test_every_crafted_recording_is_read_whole_or_refused_in_one_line(files, outcomes):
    problems = []
    for name, outcome in outcomes.items():
        path = files[name]
        if isinstance(outcome, LoadError):
            message = str(outcome)
            if not (message.startswith(f"{path}: ") or message.startswith(f"{path}#")) or "\n" in message \
                    or len(message) > 300:
                problems.append((name, message[:300]))
            continue
        if len(outcome) != entries(path):
            problems.append((name, f"{len(outcome)} turns of {entries(path)}"))
        problems += [(name, wrong) for turn in outcome for wrong in valid(turn.flow)]
    assert problems == []


def test_every_turn_read_is_judged_served_and_exported_as_a_file_the_product_reads_back(outcomes):
    problems = []
    for name, outcome in outcomes.items():
        if isinstance(outcome, LoadError):
            continue
        for turn in outcome:
            analyse(turn.flow)
            try:
                FixtureRoute.from_flow(turn.flow, turn.source)
            except ValueError as refusal:  # what the mock cannot serve as recorded, it says
                assert str(refusal).startswith(f"{turn.source}: "), (name, str(refusal))
    for name in representatives(outcomes):
        for turn in outcomes[name]:
            data = export.fixture(turn.flow, analyse(turn.flow))
            exported = [Exported(1, data, 1767225600.0)]
            for fmt in ("json", "har", "vcr"):
                written = render(fmt, exported)
                try:
                    back = load_bytes(written, f"{name}.{fmt}")
                except LoadError as refusal:
                    problems.append((name, fmt, str(refusal)[:200]))
                    continue
                if len(back) != (0 if fmt == "vcr" and turn.flow.status is None else 1):
                    problems.append((name, fmt, f"{len(back)} turns"))
            compile(pytest_export.render(data), f"{name}.py", "exec")
    assert problems == []


def test_check_refuses_each_unreadable_file_with_exit_2_and_one_line(files, outcomes, capsys):
    for name, outcome in outcomes.items():
        if not isinstance(outcome, LoadError):
            continue
        assert main(["check", str(files[name])]) == 2, name
        err = capsys.readouterr().err
        if isinstance(outcome, NotARecording):  # then read as a bare payload, which it is not either
            assert err.startswith(f"toolwire-inspect: {files[name]}: ") and err.count("\n") == 1, (name, err)
        else:
            assert err == f"toolwire-inspect: {outcome}\n", name


def _run(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "inspector", *argv], capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-3000:]
    return done


def test_check_as_a_process_reads_every_crafted_file_or_names_why_not(files, outcomes):
    # A recording of no exchange is read, and not checked: `check` says so.
    refused = [name for name, outcome in outcomes.items() if isinstance(outcome, LoadError) or outcome == []]
    done = _run("check", "--format", "json", *map(str, files.values()))
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert [line.split(": ", 2)[1].split("#")[0] for line in lines] == [str(files[name]) for name in refused]
    assert [line for line, name in zip(lines, refused, strict=True) if not isinstance(outcomes[name], NotARecording)] == [
        f"toolwire-inspect: {outcomes[name]}" if outcomes[name] else
        f"toolwire-inspect: {files[name]}: nothing to check: the recording holds no exchange"
        for name in refused if not isinstance(outcomes[name], NotARecording)]


def test_open_mock_and_export_as_processes_on_the_crafted_files(files, outcomes, tmp_path):
    refused = [name for name, outcome in outcomes.items() if isinstance(outcome, LoadError)]
    for name in refused[::120]:  # a sample: each is two processes (check, above, runs them all in one)
        for command in ("open", "mock"):
            done = _run(command, *(["--port", "0"] if command == "mock" else []), str(files[name]), timeout=60)
            assert done.returncode == 2, (command, name)
            assert done.stderr.splitlines() == [
                f"toolwire-inspect: {'cannot load ' if command == 'mock' else ''}{outcomes[name]}"], (command, name)
    # What `open` read, exported from its store in every format, reads back without a word.
    read = representatives(outcomes)
    store = opened_store([str(files[name]) for name in read], tmp_path)
    count = store.count()
    store.close()
    assert count == sum(len(outcomes[name]) for name in read)
    for fmt in ("json", "har", "vcr"):
        out = tmp_path / fmt
        done = _run("export", "--store", str(tmp_path / "opened.sqlite3"), "--session", "1", "--format", fmt,
                    "-o", str(out))
        assert done.returncode == 0, done.stderr[-2000:]
        written = sorted(out.iterdir())
        check = _run("check", "--format", "json", *map(str, written))
        assert [line for line in check.stderr.splitlines() if line.startswith("toolwire-inspect: ")] == []


async def test_the_ui_opens_every_flow_of_the_crafted_files(files, outcomes, tmp_path):
    # One read file of every third crafted value (the UI draws a Flow, whatever format it came in): a
    # Pilot key costs, and tests/tui/test_hostile_text.py walks every view with hostile text already.
    chosen: dict[str, str] = {}
    for name in representatives(outcomes):
        chosen.setdefault(name.rsplit(":", 1)[-1], name)
    read = list(chosen.values())[::3]
    store = opened_store([str(files[name]) for name in read], tmp_path)
    try:
        app = InspectorApp(store=store, forwarder=None)
        async with app.run_test(size=(100, 30)) as pilot:
            await workers_done(app)
            await pilot.pause()
            flows = app.query_one(FlowList)
            assert flows.total == sum(len(outcomes[name]) for name in read)
            for _ in range(flows.total):
                await pilot.press("enter")
                await pilot.pause()
                for key in ("t", "escape", "H", "escape", "escape", "j"):
                    await pilot.press(key)
                    await workers_done(app)
                    await pilot.pause()
            assert app.is_running
    finally:
        store.close()


# --- size and time bounds ---------------------------------------------------------------------

def test_a_recording_larger_than_the_cap_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.har"
    with path.open("wb") as file:
        file.truncate(MAX_RECORDING + 1)  # sparse: nothing is written, nothing need be read
    with pytest.raises(LoadError) as refused:
        load(path)
    assert str(refused.value) == (f"{path}: 64.0 MiB is larger than a recording may be (64 MiB); split it, or export "
                                  "fewer flows into one file")


def test_a_yaml_cassette_larger_than_its_cap_is_refused(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_bytes(b"interactions: []\n# " + b"x" * MAX_YAML_RECORDING + b"\n")
    with pytest.raises(LoadError) as refused:
        load(path)
    assert str(refused.value) == (f"{path}: 16.0 MiB is larger than a YAML cassette may be (16 MiB); split it, or "
                                  "export fewer flows into one file")


@pytest.mark.parametrize("depth", [1000, 10_000])
def test_yaml_nested_deeper_than_libyaml_reads_is_refused_at_once(tmp_path, depth):
    path = tmp_path / "deep.yaml"
    path.write_bytes(b"interactions: " + b"[" * depth + b"]" * depth + b"\n")
    with pytest.raises(LoadError) as refused:
        load(path)
    assert str(refused.value) == (f"{path}: not a toolwire fixture, a HAR file or a vcrpy cassette (neither JSON nor "
                                  "YAML: while increasing flow level)")


# --- what export writes from a crafted turn ------------------------------------------------------

def test_a_har_with_times_that_are_no_numbers_exports_a_fixture_the_product_reads(tmp_path):
    document = crafted.foreign(crafted.bases()[2][2])
    for entry in document["log"]["entries"]:
        entry["time"] = "NaN"
        entry["timings"] = {"blocked": "NaN", "dns": -1, "connect": -5, "send": 1, "wait": 2.5}
    path = tmp_path / "nan.har"
    path.write_text(json.dumps(document))
    turns = load(path)
    assert [(turn.flow.ttfb_ms, turn.flow.latency_ms) for turn in turns] == [(3.5, 3.5), (3.5, 3.5)]
    fixture = export.dumps(export.fixture(turns[0].flow, analyse(turns[0].flow)))
    (back,) = load_bytes(fixture, "back.json")
    assert (back.flow.ttfb_ms, back.flow.latency_ms) == (3.5, 3.5)


@pytest.mark.parametrize("depth", [200, 254, 300, 1000])
def test_the_pytest_export_of_a_request_nested_deep_imports_and_passes(tmp_path, depth):
    nested = "[" * depth + "]" * depth
    flow = crafted.chat_flow()
    flow.request_body = (b'{"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}], "metadata": '
                         + nested.encode() + b"}")
    data = export.fixture(flow, analyse(flow))
    (tmp_path / "test_deep.py").write_bytes(pytest_export.render(data))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
                           "test_deep.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stdout[-3000:]
    assert "passed" in done.stdout.splitlines()[-1] and "failed" not in done.stdout.splitlines()[-1]


def test_export_names_the_flow_a_cassette_cannot_hold(tmp_path):
    fixture = export.fixture(crafted.chat_flow(), analyse(crafted.chat_flow()))
    fixture["response"] = {**fixture["response"], "status": None, "body": None}
    fixture["state"], fixture["error"] = "error", "upstream unreachable"
    path = tmp_path / "turn.json"
    path.write_bytes(orjson.dumps(fixture))
    opened_store([str(path)], tmp_path).close()
    done = _run("export", "--store", str(tmp_path / "opened.sqlite3"), "1", "--format", "vcr")
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "interactions: []\nversion: 1\n",
        "toolwire-inspect: flow #1 left out: it has no response, which a cassette cannot hold (--format har keeps it)\n")
