"""Server-sent events: an incremental parser that survives arbitrary chunk boundaries."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SSEEvent:
    data: str
    event: str = ""  # the `event:` field, "" when absent
    id: str = ""


class SSEParser:
    """Feed bytes as they arrive; get whole events back. Lines may end in \\n, \\r\\n or \\r."""

    def __init__(self) -> None:
        self._buffer = ""
        self._data: list[str] = []
        self._event = ""
        self._id = ""
        self._decoder_pending = b""

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        raw = self._decoder_pending + chunk
        try:
            text = raw.decode("utf-8")
            self._decoder_pending = b""
        except UnicodeDecodeError as exc:
            # A multi-byte character split across chunks: keep its start for the next feed.
            if exc.start >= len(raw) - 3 and exc.reason == "unexpected end of data":
                text = raw[: exc.start].decode("utf-8", "replace")
                self._decoder_pending = raw[exc.start :]
            else:
                text = raw.decode("utf-8", "replace")
                self._decoder_pending = b""
        buffer = self._buffer + text
        events: list[SSEEvent] = []
        start = 0
        while True:
            cut = _line_end(buffer, start)
            if cut is None:
                break
            end, sep_len = cut
            self._line(buffer[start:end], events)
            start = end + sep_len
        self._buffer = buffer[start:]
        return events

    def close(self) -> list[SSEEvent]:
        """Flush: an event not closed by a blank line still counts at end of stream."""
        events: list[SSEEvent] = []
        if self._buffer:
            self._line(self._buffer, events)
            self._buffer = ""
        self._dispatch(events)
        return events

    def _line(self, line: str, events: list[SSEEvent]) -> None:
        if line == "":
            self._dispatch(events)
            return
        if line.startswith(":"):
            return
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id":
            self._id = value

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._data:
            events.append(SSEEvent("\n".join(self._data), self._event, self._id))
        self._data = []
        self._event = ""


def _line_end(buffer: str, start: int) -> tuple[int, int] | None:
    """(index of the line end, length of the separator) from `start`, or None."""
    newline = buffer.find("\n", start)
    carriage = buffer.find("\r", start, newline if newline != -1 else len(buffer))
    if carriage == -1:
        return (newline, 1) if newline != -1 else None
    if carriage + 1 < len(buffer):
        return carriage, 2 if buffer[carriage + 1] == "\n" else 1
    return None  # a lone \r at the end may be half of \r\n


def parse_all(body: bytes) -> list[SSEEvent]:
    parser = SSEParser()
    return parser.feed(body) + parser.close()
