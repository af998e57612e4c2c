"""What the HTML export of a big recording costs: a session of N flows (the demo's nine turns over and
over through a real forwarder to the demo's fake upstream, so every kind of page part is there:
findings, streams, four dialects, fixed diffs), exported with `toolwire-inspect export --session
--format html`, then opened from file:// in a real headless Chromium (the system's, through
Playwright: `pip install -e '.[browser]'`, `apt-get install chromium`).

    .venv/bin/python tests/bench/html_export.py [--flows 1000] [--rounds 3]

Prints, for each round: the export's wall time (the command, process start included) and CPU time
(with its worker processes: the figure that moves least on a shared machine), the page's
size, the time to open it (navigation to the list drawn and counted: the script has parsed the data
and built every row) and to show the demo's failing turn (#3) with its findings on their lines.
Goals: export under 5 s, open under 2 s.

A shared machine's load moves every figure, so each is also printed as a ratio to a floor measured
in the same round, under the same load: the export to `export --session --format har` of the same
session (one file of every flow's bytes, redacted: the least any whole-session export does), the
open to a blank page's (a file:// page whose script writes one line). Printed figures only: none of
this is a test."""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # `tests.html_export...` when run as a script

from inspector.demo import demo_forwarder, demo_upstream, run_agent  # noqa: E402
from inspector.demo_script import TURNS  # noqa: E402
from inspector.store import Store  # noqa: E402

from tests.html_export.browser import browser, offline_page  # noqa: E402

EXPORT_GOAL, OPEN_GOAL = 5.0, 2.0


def record(path: Path, flows: int) -> None:
    turns = (TURNS * (flows // len(TURNS) + 1))[:flows]
    with Store(path) as store, demo_upstream(interval=0.0) as upstream, \
            demo_forwarder(upstream.base_url, store) as forwarder:
        run_agent(forwarder.client_url, turns)
        store.flush()
        assert store.count() == flows


def export(store: Path, folder: Path, kind: str = "html") -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its worker processes)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "inspector", "export", "--session", "--format", kind,
                           "-o", str(folder), "--store", str(store)], capture_output=True, timeout=300)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stderr
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


BLANK = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>blank</title></head><body>
<span id="shown-count"></span><script>document.getElementById("shown-count").textContent = "ready";</script>
</body></html>"""


def opened(chromium, uri: str, ready: str) -> tuple[float, float]:
    """(seconds from navigation to `ready` in #shown-count, the renderer main thread's busy seconds)."""
    with offline_page(chromium) as watched:
        page = watched.page
        devtools = page.context.new_cdp_session(page)
        devtools.send("Performance.enable")
        started = time.perf_counter()
        page.goto(uri)
        page.wait_for_function(f"document.getElementById('shown-count')?.textContent === '{ready}'")
        elapsed = time.perf_counter() - started
        # The renderer's main thread busy time (parse, script, style, layout): what opening costs
        # the browser, whatever else the machine runs.
        metrics = {m["name"]: m["value"] for m in devtools.send("Performance.getMetrics")["metrics"]}
        assert watched.requests == [uri], watched.requests
        assert watched.errors == [], watched.errors
        return elapsed, metrics["TaskDuration"]


def detail_seconds(chromium, uri: str, ready: str) -> float:
    """The demo's failing turn (#3) shown, in the page's own clock (Playwright's click waits for its
    actionability checks)."""
    with offline_page(chromium) as watched:
        page = watched.page
        page.goto(uri)
        page.wait_for_function(f"document.getElementById('shown-count')?.textContent === '{ready}'")
        return page.evaluate("""() => { const started = performance.now();
            document.querySelector('#flow-list .row[data-flow="3"]').click();
            document.getElementById('tab-flow').offsetHeight;
            return performance.now() - started; }""") / 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--flows", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "big.sqlite3"
        started = time.perf_counter()
        record(store, args.flows)
        print(f"recorded {args.flows} flows in {time.perf_counter() - started:.1f} s")
        blank = Path(tmp) / "blank.html"
        blank.write_text(BLANK, encoding="utf-8")
        ready = f"{args.flows} of {args.flows} flows"
        exports, opens, export_ratios, cpu_ratios, open_ratios = [], [], [], [], []
        with browser() as chromium:
            for round_ in range(args.rounds):
                floor_wall, floor_cpu = export(store, Path(tmp) / f"har-{round_}", "har")
                folder = Path(tmp) / f"out-{round_}"
                wall, cpu = export(store, folder)
                page_file = folder / "session-1.html"
                blank_open, blank_busy = opened(chromium, blank.as_uri(), "ready")
                open_, busy = opened(chromium, page_file.as_uri(), ready)
                detail = detail_seconds(chromium, page_file.as_uri(), ready)
                exports.append(wall)
                opens.append(open_)
                export_ratios.append(wall / floor_wall)
                cpu_ratios.append(cpu / floor_cpu)
                open_ratios.append(open_ / blank_open)
                size = page_file.stat().st_size
                print(f"round {round_ + 1}: export {wall:.2f} s, {cpu:.1f} CPU s over {os.cpu_count()} cores "
                      f"(HAR floor {floor_wall:.2f} s, {floor_cpu:.1f} CPU s: ×{wall / floor_wall:.2f} wall, "
                      f"×{cpu / floor_cpu:.2f} CPU) · {size / 1e6:.1f} MB · open {open_:.2f} s, {busy:.2f} s of "
                      f"main-thread work (blank page {blank_open:.3f} s, {blank_busy:.3f} s: ×{open_ / blank_open:.1f}) · "
                      f"flow detail {detail * 1000:.0f} ms · load average {os.getloadavg()[0]:.1f}")
    export_median, open_median = statistics.median(exports), statistics.median(opens)
    print(f"median over {args.rounds}: export {export_median:.2f} s (goal < {EXPORT_GOAL:.0f} s: "
          f"{'met' if export_median < EXPORT_GOAL else 'MISSED'}; ×{statistics.median(export_ratios):.2f} the HAR "
          f"export's wall, ×{statistics.median(cpu_ratios):.2f} its CPU), open {open_median:.2f} s (goal < "
          f"{OPEN_GOAL:.0f} s: {'met' if open_median < OPEN_GOAL else 'MISSED'}; ×{statistics.median(open_ratios):.1f} "
          f"a blank page's)")


if __name__ == "__main__":
    main()
