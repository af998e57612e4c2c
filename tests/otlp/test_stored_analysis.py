"""Exports read the analysis the store kept (issue 20, "computed once"): exporting a recorded
session as fixtures or as OTLP spans analyses no flow again. Counted by the counter the analysis
module keeps of its own steps, around the real CLI on a store the real forwarder recorded."""

from __future__ import annotations

import pytest
from inspector import analysis
from inspector.cli import main


@pytest.mark.parametrize("form", ["json", "otlp", "html"])
def test_exporting_a_recorded_session_analyses_no_flow_again(recorded, tmp_path, form):
    before = analysis.calls.copy()
    assert main(["export", "--session", "--format", form, "-o", str(tmp_path / "out"),
                 "--store", str(recorded.path)]) == 0
    assert (analysis.calls - before)["analyse"] == 0
    assert len(list((tmp_path / "out").iterdir())) == (3 if form == "json" else 1)
