"""The recording formats: every file format a recorded turn is written in or read from, behind one
registry (`registry.FORMATS`). `export --format`, the TUI's `x` menu, `open`, `check` and `mock`
all go through it; none of them names a format's module.

    base.py           the records: Format, Exported (a writer's input), WriteOptions, Turn (a reader's output)
    registry.py       the table, and render / files / default_name (writing), load / load_bytes / into_store (reading)
    fixture.py        our fixture (json): the turn, redacted and deterministic, with its fixed form; its writer
    load.py           what every reader shares (JSON/YAML parsing, Shape, recorded_flow, FilePlaces); the fixture's reader
    har.py            HAR 1.2, written and read
    cassette.py       vcrpy cassettes, written and read
    pytest_export.py  a pytest file (written only)
    otlp.py           OTLP/JSON traces, written and read; the codec is otlp_json.py (the `[otel]` extra)
    html.py           the HTML page (written only, from the store: the page itself is inspector.html)

The imports go one way, and a test keeps it so (tests/formats/test_package.py): `base` imports no
module of the package; the formats import `base`, `fixture` and `load` only; `registry` imports the
formats; nothing imports `registry` here.

Adding a format (e.g. `markdown`), two steps:

1. A module `inspector/formats/markdown.py` with its writer and/or its reader:

       def write(turns: Sequence[Exported], options: WriteOptions) -> bytes:
           '''One file holding `turns`: one turn unless the Format `holds_many`.'''

       def claims(document: Any) -> bool:          # the file, parsed as JSON or YAML, is one of ours
       def read(data: bytes, document: Any, source: str) -> list[Turn]:   # or raise LoadError

   A writer returns bytes and never touches the disk: the CLI and the TUI write them through
   inspector.files (a new private file, never through a symbolic link). Each `Exported` carries
   the turn as our fixture's data (`.data`, redacted and stable: build from it), the flow's id and
   start time, and for formats made from the flow itself `.flow` / `.origin` / `.session_started`.
   A format that needs more of the recording than the turns (the html page: each flow's replays,
   its session's findings) `reads_store`: its turns carry ids only and its writer reads the flows
   from `WriteOptions.store` (registry.exported builds the turns either way).
2. Its record in registry.py, added to FORMATS (the menus' order) and, if it reads, to READERS:

       MARKDOWN = Format("markdown", "what it is for, in the menus", "a Markdown report", "flow-{n}.md",
                         holds_many=True, write=markdown.write)

   `name` is the `export --format` value, `flow_file` the name of one flow's file (`{n}` its id;
   with `holds_many`, `export --session` writes one `session-N` file with the same suffix), `extra`
   the optional dependency it needs (the TUI offers only formats without one), `mark` the bytes
   every file of the format holds (a file with no format's mark is not parsed at all)."""
