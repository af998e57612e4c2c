"""What the HTML export of a big recording costs: a session of N flows (the demo's nine turns over and
over through a real forwarder to the demo's fake upstream, so every kind of page part is there:
findings, streams, four dialects, fixed diffs), exported with `toolwire-inspect export --session
--format html`, then opened from file:// in a real headless Chromium (the system's, through
Playwright: `pip install -e '.[browser]'`, `apt-get install chromium`).

    .venv/bin/python tests/bench/html_export.py [--flows 1000] [--rounds 3]

Prints, for each round: the export's wall time (the command, process start included) and CPU time
(with its worker processes: the figure that moves least on a shared machine), the page's
size, the time to open it (navigation to the list drawn and counted: the script has parsed the data
and built every row) and to show the demo's failing turn (#3) with its findings on their lines. Goals: export under 5 s, open under 2 s.
Printed figures only: on a shared machine they move, so none of this is a test."""

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


def export(store: Path, folder: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its worker processes)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "inspector", "export", "--session", "--format", "html",
                           "-o", str(folder), "--store", str(store)], capture_output=True, timeout=300)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stderr
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--flows", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "big.sqlite3"
        started = time.perf_counter()
        record(store, args.flows)
        print(f"recorded {args.flows} flows in {time.perf_counter() - started:.1f} s")
        exports, opens, details, busy = [], [], [], []
        with browser() as chromium:
            for round_ in range(args.rounds):
                folder = Path(tmp) / f"out-{round_}"
                wall, cpu = export(store, folder)
                exports.append(wall)
                page_file = folder / "session-1.html"
                with offline_page(chromium) as watched:
                    page = watched.page
                    devtools = page.context.new_cdp_session(page)
                    devtools.send("Performance.enable")
                    started = time.perf_counter()
                    page.goto(page_file.as_uri())
                    page.wait_for_function(f"document.getElementById('shown-count')?.textContent === "
                                           f"'{args.flows} of {args.flows} flows'")
                    opens.append(time.perf_counter() - started)
                    # The renderer's main thread busy time (parse, script, style, layout): what opening costs
                    # the browser, whatever else the machine runs.
                    metrics = {m["name"]: m["value"] for m in devtools.send("Performance.getMetrics")["metrics"]}
                    busy.append(metrics["TaskDuration"])
                    # In the page's own clock: Playwright's click waits for its actionability checks.
                    details.append(page.evaluate("""() => { const started = performance.now();
                        document.querySelector('#flow-list .row[data-flow="3"]').click();
                        document.getElementById('tab-flow').offsetHeight;
                        return performance.now() - started; }""") / 1000)
                    assert watched.requests == [page_file.as_uri()], watched.requests
                    assert watched.errors == [], watched.errors
                size = page_file.stat().st_size
                print(f"round {round_ + 1}: export {wall:.2f} s ({cpu:.1f} CPU s over {os.cpu_count()} cores) · "
                      f"{size / 1e6:.1f} MB · open {opens[-1]:.2f} s ({busy[-1]:.2f} s of main-thread work) · flow detail {details[-1] * 1000:.0f} ms · "
                      f"load average {os.getloadavg()[0]:.1f}")
    export_median, open_median = statistics.median(exports), statistics.median(opens)
    print(f"median over {args.rounds}: export {export_median:.2f} s (goal < {EXPORT_GOAL:.0f} s: "
          f"{'met' if export_median < EXPORT_GOAL else 'MISSED'}), open {open_median:.2f} s (goal < {OPEN_GOAL:.0f} s: "
          f"{'met' if open_median < OPEN_GOAL else 'MISSED'}), flow detail {statistics.median(details) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
