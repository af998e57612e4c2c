"""What every recording format shares: the record a format is registered with (`Format`), what a
writer is given (`Exported`, `WriteOptions`) and what a reader gives back (`Turn`, or a `LoadError`).
The bottom of the package: it imports no other module of it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..flow import Flow

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..otlp.spans import Options as SpanOptions
    from ..store import Store


class LoadError(ValueError):
    """The file is not a recording this version can read; the message says why."""


class NotARecording(LoadError):
    """The file is none of the formats read here (`check` then reads it as a bare payload)."""


Keys = tuple[str | int, ...]  # keys and indices from a recording's root to a value in it


@dataclass(slots=True)
class Turn:
    """One loaded exchange. `fixture`: our fixture's data when the file carried it (its recorded
    findings and fixed form), else None. `bodies`: where in the file each side's body sits
    ("request", "upstream", "response"), for `FilePlaces` to put a finding on its line."""

    flow: Flow
    source: str  # file name, and the entry's place in it when it holds several
    fixture: dict[str, Any] | None = None
    bodies: dict[str, Keys] = field(default_factory=dict)


@dataclass(slots=True)
class Exported:
    """One flow ready for any format: its fixture (with the fixed pair) and when it was recorded.
    For a format that `reads_store`, the flow's id and time only (`data` empty): its writer reads
    the flow, and what it needs beside it, from `WriteOptions.store`."""

    flow_id: int
    data: dict[str, Any]
    started_at: float
    # OTLP spans are made from the flow itself (its absolute times, its session's trace) and link a
    # replay to its origin's span.
    flow: Flow | None = None
    session_started: float | None = None
    origin: Flow | None = None
    analysis: Analysis | None = None  # the flow's, as the store kept it: spans are made from it too


@dataclass(frozen=True, slots=True)
class WriteOptions:
    """What a writer may be told besides the turns. `spans`: the span options of an otlp file (None:
    from the environment). `store`: where the turns were recorded, which a format that `reads_store`
    reads them from; `title`: what such a file calls the recording ("session 3"; default: from the
    flows' ids)."""

    spans: SpanOptions | None = None
    store: Store | None = None
    title: str = ""


# (the whole file's bytes, the file parsed as JSON or YAML or None for a raw reader, the file's name
# as errors say it) -> its turns; a LoadError when it cannot be read.
Reader = Callable[[bytes, Any, str], list["Turn"]]
# (the turns, at least one; exactly one unless the format `holds_many`) -> the file's bytes.
Writer = Callable[[Sequence[Exported], WriteOptions], bytes]


@dataclass(frozen=True, slots=True)
class Format:
    """A recording format as the registry knows it (see the package's docstring)."""

    name: str  # `export --format NAME`
    description: str  # what it is for, in the export menus
    title: str  # how `check` and `open` name the format when a file is none they read ("a HAR file")
    flow_file: str  # the file name of one flow, `{n}` its id: "flow-{n}.har"
    holds_many: bool = False  # one file holds a whole recording: "session-3" + the flow file's suffix
    extra: str | None = None  # the optional extra the format needs ("otel"); the TUI offers only those without
    mark: bytes | None = None  # bytes every file of the format holds: a file with no format's mark is not parsed
    # The writer reads each turn's flow from `WriteOptions.store`, with what the views read beside it
    # (its replays, its session's findings, the analysis kept): the turns carry ids, no fixture is built.
    reads_store: bool = False
    # Whether the parsed file is of this format. None with a `mark`: the reader takes the raw bytes,
    # and is chosen when its mark is the only one in the file.
    claims: Callable[[Any], bool] | None = None
    read: Reader | None = None
    write: Writer | None = None

    @property
    def suffix(self) -> str:
        """How its file names end ("flow-{n}.otlp.json": ".otlp.json")."""
        return "." + self.flow_file.partition(".")[2]
