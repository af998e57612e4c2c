"""Reading a flow at any terminal size (issue 9): stacked panes below 100 columns, a zoomed pane,
findings in full, wrap and search in a payload, one pane for an unchanged request and aligned panes
for a changed one, and the stream's events parsed beside the raw chunks."""

from typing import Any

import orjson
import pytest
from textual.widgets import Input, OptionList, Static, TabbedContent

from inspector.flow import Mode
from inspector.store import Store
from inspector.tui.format import fold
from inspector.tui.view import UNCHANGED_TITLE, Pane, describe_event
from inspector.tui.widgets.lines import LineViewer
from inspector.tui.widgets.payload import PayloadView, find_all
from inspector.tui.widgets.violations import ViolationPanel
from inspector.wire.locate import pretty

from .conftest import make_app
from .flows import defective_request, save_flow
from .test_flow_view import SIZES, open_flow


def save_changed(store: Store) -> int:
    """The defective request, sent upstream with five more lines near the top (a repair or a
    translation changes what goes upstream): the same JSON paths sit 5 lines lower there."""
    flow_id = save_flow(store, defective_request(), offset=11)
    flow = store.get(flow_id)
    assert flow is not None
    request = defective_request()
    flow.upstream_request_body = orjson.dumps({"model": request["model"], "metadata": {"a": 1, "b": 2, "c": 3},
                                               **request})
    flow.upstream_request_headers = flow.request_headers
    flow.mode = Mode.REPAIR
    store.save(flow)
    return flow_id


def region(screen, selector: str) -> tuple[int, int, int, int]:
    r = screen.query_one(selector).region
    return r.x, r.y, r.width, r.height


# ---- layout -------------------------------------------------------------------------------------

async def test_at_80_columns_the_panes_stack(store: Store, ids: dict[str, int]) -> None:
    flow_id = save_changed(store)
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_flow(app, pilot, flow_id)
        assert screen.has_class("-narrow")
        # Every pane gets the full width, one above the other; two request panes get half the height.
        # The title wraps to two rows rather than losing its tail.
        assert screen.query_one("#flow-title").region.height == 2
        assert [region(screen, s) for s in ("#request", "#upstream", "#response-tabs", "#violations")] == [
            (0, 2, 80, 5), (0, 7, 80, 5), (0, 12, 80, 5), (0, 17, 80, 6)]


async def test_at_160_columns_the_panes_share_rows(store: Store, ids: dict[str, int]) -> None:
    flow_id = save_changed(store)
    app = make_app(store)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_flow(app, pilot, flow_id)
        assert screen.has_class("-wide") and screen.query_one("#flow-title").region.height == 1
        assert [region(screen, s) for s in ("#request", "#upstream", "#response-tabs", "#violations")] == [
            (0, 1, 80, 23), (80, 1, 80, 23), (0, 24, 106, 23), (106, 24, 54, 23)]


@pytest.mark.parametrize("size", SIZES)
async def test_z_gives_the_focused_pane_the_whole_screen(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        panel = screen.query_one(ViolationPanel)
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is panel
        assert panel.region.height == size[1] - 1  # all but the footer
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is None
        screen.query_one("#request", PayloadView).viewer.focus()
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is screen.query_one("#request", PayloadView)


# ---- findings in full ---------------------------------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
async def test_each_finding_reads_in_full(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        options = screen.query_one(OptionList)
        width = screen.query_one(ViolationPanel)._prompt_width
        prompts = [str(options.get_option_at_index(n).prompt) for n in range(options.option_count)]
        pointer = "/tools/0/function/parameters/properties/url/type"
        folded = "\n".join(pointer[a:b] for a, b in fold(pointer, width))
        # Each finding says what the provider does with it (issue 9).
        assert [p.split("\n", 1)[0] for p in prompts] == ["✖ OC-05 request · provider rejects"] * 2 + [
            "✖ OC-17 request · provider rejects"]
        # The message before the pointer: a short pane cuts the pointer, never the message (issue 22).
        assert prompts[1] == (f"✖ OC-05 request · provider rejects\n{screen.view.violations[1].violation.message}"
                              f"\n{folded}")
        # No row of the list is wider than the list: nothing is cut under the scrollbar.
        rendered = [line for n in range(options.option_count) for line in options.get_option_at_index(n).prompt.wrap(width)]
        assert max(line.cell_length for line in rendered) <= width
        explanation = str(screen.query_one("#violation-explanation", Static).content)
        v = screen.view.violations[0].violation
        assert explanation == f"why  {v.why}\nfix  {v.hint}"


def test_a_pointer_folds_before_a_slash_and_prose_after_a_space() -> None:
    pointer = "/tools/0/function/parameters/properties/url/type"
    assert [pointer[a:b] for a, b in fold(pointer, 20)] == [
        "/tools/0/function", "/parameters", "/properties/url/type"]
    text = "OC-05   converted   /tools/0/function/parameters  genai type"
    assert [text[a:b] for a, b in fold(text, 24)] == [
        "OC-05   converted   ", "/tools/0/function", "/parameters  genai type"]
    raw = '{"id":"x","ok":1,"no":2}'
    assert [raw[a:b] for a, b in fold(raw, 12)] == ['{"id":"x",', '"ok":1,', '"no":2}']
    # Only a token wider than the row is cut inside.
    assert fold("x" * 25, 10) == [(0, 10), (10, 20), (20, 25)]
    assert fold("short", 10) == [(0, 5)]


# ---- document order -----------------------------------------------------------------------------

async def test_findings_follow_the_panes_top_to_bottom(store: Store, ids: dict[str, int]) -> None:
    flow_id = save_changed(store)
    app = make_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_flow(app, pilot, flow_id)
        assert [(i.violation.rule, i.violation.where, i.lines) for i in screen.view.violations] == [
            ("OC-05", "request", {"request": 8}),
            ("OC-05", "request", {"request": 11}),
            ("OC-17", "request", {"request": 40}),
            ("OC-05", "upstream", {"upstream": 13}),
            ("OC-05", "upstream", {"upstream": 16}),
            ("OC-17", "upstream", {"upstream": 45}),
        ]


# ---- wrap and search ----------------------------------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
async def test_w_wraps_the_focused_pane(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        area = screen.query_one("#request", PayloadView).viewer
        assert area.wrap is False
        area.focus()
        await pilot.press("w")
        assert area.wrap is True
        await pilot.press("w")
        assert area.wrap is False


async def test_the_line_viewer_wraps_on_words_and_numbers_the_first_row() -> None:
    from textual.app import App

    class One(App[None]):
        def compose(self):
            yield LineViewer(wrap=True)

    app = One()
    async with app.run_test(size=(24, 6)) as pilot:
        viewer = app.query_one(LineViewer)
        viewer.load(["OC-05 converted /tools/0/function/parameters", "short"])
        await pilot.pause()
        rows = [viewer.render_line(y).text for y in range(5)]
        # 2-column gutter, 22 columns of text: the row ends before a `/`, not inside "function".
        assert [row.rstrip() for row in rows] == [
            "1 OC-05 converted /tools", "  /0/function/parameters", "2 short", "", ""]
        assert viewer.virtual_size.height == 3
        viewer.focus()
        await pilot.press("w")
        assert viewer.wrap is False and viewer.virtual_size.height == 2


@pytest.mark.parametrize("size", SIZES)
async def test_slash_searches_the_payload_incrementally(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        pane = screen.query_one("#request", PayloadView)
        area = pane.viewer
        area.focus()
        await pilot.press("slash")
        box = pane.query_one("#search", Input)
        assert pane.searching and box.has_focus and box.display
        await pilot.press(*"scrape")
        await pilot.pause()
        assert pane.matches == [(6, 17), (34, 21)]
        # From where the reader is (the first finding, line 8), as `less` searches.
        assert (pane.match, area.cursor, area.match) == (1, 34, (34, 21, 6))
        assert pane.border_subtitle == "'scrape': match 2 of 2 · n/N · esc"
        await pilot.press("enter")  # keeps the term; n/N now walk the matches, not the findings
        assert area.has_focus
        highlighted = screen.query_one(OptionList).highlighted
        await pilot.press("n")
        assert (pane.match, area.cursor, area.match) == (0, 6, (6, 17, 6))
        await pilot.press("n")
        assert pane.match == 1
        await pilot.press("N")
        assert pane.match == 0
        assert screen.query_one(OptionList).highlighted == highlighted
        await pilot.press("escape")  # leaves the search, not the flow
        assert (pane.searching, pane.border_subtitle, box.display) == (False, "", False)
        assert app.screen is screen
        await pilot.press("n")  # the findings again
        assert screen.query_one(OptionList).highlighted == highlighted + 1


def test_find_all_is_case_blind_and_in_document_order() -> None:
    assert find_all(['{', '  "Type": "type",', '  "x": "TYPE"', '}'], "type") == [(1, 3), (1, 11), (2, 8)]
    assert find_all(["abc"], "") == []
    assert find_all(["aaa"], "aa") == [(0, 0), (0, 1)]


# ---- one pane, or two aligned -------------------------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
async def test_an_unchanged_request_gets_one_pane(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        request, upstream = screen.query_one("#request", PayloadView), screen.query_one("#upstream", PayloadView)
        assert (request.border_title, upstream.display) == (UNCHANGED_TITLE, False)
        assert request.region.width == size[0]
        if size == (80, 24):  # one request pane: the findings get the larger share
            assert [region(screen, s) for s in ("#request", "#response-tabs", "#violations")] == [
                (0, 2, 80, 7), (0, 9, 80, 7), (0, 16, 80, 7)]


@pytest.mark.parametrize("size", SIZES)
async def test_changed_panes_stay_on_the_same_json_path(store: Store, ids: dict[str, int], size) -> None:
    flow_id = save_changed(store)
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, flow_id)
        request, upstream = screen.query_one("#request", PayloadView), screen.query_one("#upstream", PayloadView)
        assert (request.border_title, upstream.display) == ("Request · original", True)
        request.viewer.focus()
        request.scroll_to_line(21)  # "messages": [
        await pilot.pause()
        await pilot.pause()
        assert (request.top_line, upstream.top_line) == (21, 26)
        request.scroll_to_line(24)  # inside the first message: as far into it on the other side
        await pilot.pause()
        await pilot.pause()
        assert upstream.top_line == 29
        # The follower does not lead: scrolling the unfocused pane moves only itself.
        upstream.scroll_to_line(2)
        await pilot.pause()
        await pilot.pause()
        assert (request.top_line, upstream.top_line) == (24, 2)


def test_a_line_belongs_to_the_deepest_node_starting_at_or_above_it() -> None:
    located = pretty({"a": {"b": 1, "c": [2, 3]}, "d": 4})
    pane = Pane(located.text, located)
    # {  "a": {  "b": 1,  "c": [  2,  3  ]  },  "d": 4  }
    assert [pane.pointer_at(line) for line in range(len(located.text.split("\n")))] == [
        "", "/a", "/a/b", "/a/c", "/a/c/0", "/a/c/1", "/a/c/1", "/a/c/1", "/d", "/d"]
    assert Pane("not json").pointer_at(3) is None


# ---- parsed stream events -----------------------------------------------------------------------

def gist(chunk_line: str) -> str:
    """The parsed events of a chunk row: between its size and the raw bytes."""
    return chunk_line.split(" B  ", 1)[1].split("│ ", 1)[0].strip()


@pytest.mark.parametrize("size", SIZES)
async def test_chunks_show_each_event_parsed_beside_the_bytes(store: Store, ids: dict[str, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_flow(app, pilot, ids["streamed"])
        await pilot.press("s")
        assert screen.query_one(TabbedContent).active == "tab-chunks"
        chunks = screen.query_one("#chunks", LineViewer)
        parsed = [gist(line) for line in chunks.lines]
        assert parsed == ['▸ chunk ""', '▸ chunk "It is s"', '▸ chunk "unny in"', '▸ chunk " Paris."',
                          "▸ chunk finish=stop", "▸ [DONE]"]
        assert chunks.wrap is True
        # A clean flow's findings pane shrinks to its one line when the panes stack.
        panel = screen.query_one(ViolationPanel)
        assert (panel.region.height, panel.query_one("#violation-detail").display) == (
            3 if size == (80, 24) else 23, False)
        assert max(len(chunks.render_line(y).text) for y in range(chunks.size.height)) <= chunks.size.width


def test_an_event_split_across_chunks_shows_on_the_chunk_that_completes_it() -> None:
    from inspector.flow import Chunk, Flow
    from inspector.tui.view import chunk_lines

    event = b'data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}\n\n'
    flow = Flow(id=1, session_id=1, started_at=0.0, method="POST", path="/v1/messages",
                chunks=[Chunk(0.1, event[:20]), Chunk(0.2, event[20:] + b"event: ping\ndata: {\"type\": \"ping\"}")])
    lines = chunk_lines(flow)
    assert [gist(line) for line in lines] == ["", '▸ content_block_delta #1 "Hi"']
    assert lines[1].endswith(' ▸ ping')  # closed by the end of the stream, not a blank line


@pytest.mark.parametrize(("event", "gist"), [
    ({"type": "response.output_text.delta", "output_index": 0, "delta": "Hel"}, 'response.output_text.delta #0 "Hel"'),
    ({"type": "response.function_call_arguments.delta", "output_index": 2, "delta": "{\"a\""},
     'response.function_call_arguments.delta #2 "{\\"a\\""'),
    ({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"u"}},
     'content_block_delta #1 "{\\"u"'),
    ({"type": "message_stop"}, "message_stop"),
    ({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]}}]},
     'chunk #1 "{}"'),
    ({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}, "chunk finish=tool_calls"),
    ({"candidates": [{"content": {"parts": [{"text": "Sun"}, {"text": "ny"}]}}]}, 'candidate "Sunny"'),
    ({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": {}}}]}}]}, "candidate"),
    ({"jsonrpc": "2.0", "method": "notifications/progress"}, "notifications/progress"),
    ({"jsonrpc": "2.0", "id": 1, "result": {}}, "result"),
    ({"choices": []}, "event"),
    ([1, 2], "[1,2]"),
])
def test_describe_event_reads_each_dialect(event: Any, gist: str) -> None:
    assert describe_event(orjson.dumps(event).decode()) == gist


# ---- JSON colours, drawn line by line ------------------------------------------------------------

def test_json_tokens_split_a_pretty_line_into_keys_strings_numbers_and_literals() -> None:
    from inspector.tui.widgets.lines import json_tokens

    def kinds(line: str) -> list[tuple[str, str]]:
        return [(line[start:end], kind) for start, end, kind in json_tokens(line)]

    assert kinds('  "name": "say \\"hi\\": now",') == [('"name"', "key"), ('"say \\"hi\\": now"', "string")]
    assert kinds('    "n": -1.5e3,') == [('"n"', "key"), ("-1.5e3", "number")]
    assert kinds('  "ok" : true,') == [('"ok"', "key"), ("true", "literal")]
    assert kinds('  "a1": [') == [('"a1"', "key")]
    assert kinds("    null") == [("null", "literal")]
    assert kinds('  "x",') == [('"x"', "string")]
    assert kinds("  ],") == []


async def test_the_viewer_colours_json_and_the_search_match_where_they_are() -> None:
    from textual.app import App
    from textual.color import Color

    class One(App[None]):
        def compose(self):
            yield LineViewer()

    app = One()
    async with app.run_test(size=(40, 4)) as pilot:
        viewer = app.query_one(LineViewer)
        viewer.load(['{', '  "city": "Lyon",', '  "n": 3', '}'], json=True)
        viewer.match = (1, 11, 3)  # "Lyo"
        await pilot.pause()
        row = list(viewer.render_line(1))
        assert [segment.text for segment in row if segment.text.strip()][:5] == ['2 ', '"city"', ": ", '"', "Lyo"]
        key, string, match = (next(s.style for s in row if s.text == text) for text in ('"city"', '"', "Lyo"))
        theme = app.get_css_variables()  # keys and strings in the theme's colours
        assert (key.color, string.color, match.bgcolor) == (  # the match's background as blended on the pane
            Color.parse(theme["text-primary"]).rich_color, Color.parse(theme["text-success"]).rich_color,
            viewer.get_component_rich_style("line-viewer--match").bgcolor)
        assert len({key.color, string.color}) == 2
        viewer.load(['  "city": "Lyon",'])  # not JSON: one run in the line's own style
        await pilot.pause()
        assert [segment.text for segment in viewer.render_line(0) if segment.text.strip()] == ["1 ", '  "city": "Lyon",']
