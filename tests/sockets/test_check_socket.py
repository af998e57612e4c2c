"""`check --explain` on an exported socket: the seeded turn's findings, said with their rule's why
and fix, placed on the socket's entry; exit 1 for the errors."""

from __future__ import annotations

import subprocess
import sys

from inspector.formats import fixture, registry
from inspector.store import Store
from tests.sockets.recorded import record_socket, seeded


def test_check_explains_a_socket_turn_s_findings(tmp_path):
    with Store(tmp_path / "s.db") as store:
        socket = record_socket(store, seeded())
        (tmp_path / "socket.har").write_bytes(registry.render("har", [fixture.from_store(store, store.get(socket.id))]))
    ran = subprocess.run([sys.executable, "-m", "inspector", "check", "--explain", "socket.har"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 1, ran.stderr
    lines = ran.stdout.splitlines()
    why = ('    why: Pairing is checked server-side: "No tool call found for function call output" / "No tool output '
           'found for function call".')
    fix = "    fix: Answer every function_call with a function_call_output right after it; drop orphan outputs."
    assert [line for line in lines if not line.startswith(("    rule:", "    evidence:"))] == [
        "socket.har turn 3:request:/input/0/call_id: error OR-08 (rejects) no function_call with call_id "
        "'call_unknown' precedes this output (\"No tool call found\")", why, fix,
        "socket.har turn 3:request:/previous_response_id: error OR-08 (rejects) function_call 'call_1' has no "
        "function_call_output (\"No tool output found\") (item 1 of the history it continues)", why, fix,
        "1 file checked: 2 error(s), 0 warning(s), 0 info"]
