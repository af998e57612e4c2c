"""The console record prints flow lines through: a stream nobody reads never stops its caller
(tests/proxy/test_durability.py), and a regular file, which can always be written, never loses a line."""

from __future__ import annotations

import sys

import pytest

from inspector.console import Console


@pytest.fixture
def no_thread_switch():
    # The caller keeps the interpreter until it waits: the console's thread cannot drain meanwhile,
    # as on a busy machine.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000)
    yield
    sys.setswitchinterval(interval)


def test_a_regular_file_gets_every_line_however_far_the_writer_is_behind(tmp_path, no_thread_switch):
    path = tmp_path / "out.txt"
    with path.open("w") as stream:
        console = Console(stream, capacity=4)
        for n in range(2000):
            console.put(f"line {n}")
        assert console.close(timeout=0.0) == 0
    assert path.read_text().splitlines() == [f"line {n}" for n in range(2000)]


def test_a_stream_that_cannot_be_written_says_why():
    with open("/dev/full", "w") as stream:
        console = Console(stream)
        for n in range(3):
            console.put(f"line {n}")
        assert (console.close(), console.failure) == (3, "No space left on device")
