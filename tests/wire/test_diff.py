"""The structural diff (issue 9's second view): rows aligned by JSON path, arrays by content, every
row findable by its pointer on either side."""

from __future__ import annotations

from inspector.wire.diff import Op, Row, diff

S, A, R, C = Op.SAME, Op.ADDED, Op.REMOVED, Op.CHANGED


def test_keys_added_removed_and_changed_each_on_their_row() -> None:
    found = diff({"model": "m", "max_tokens": 100, "parallel_tool_calls": False, "meta": {"a": 1}},
                 {"model": "m", "max_tokens": 200, "meta": {"a": 1}, "tool_choice": {"type": "auto"}})
    assert found.rows == [
        Row(S, 0, "{", "", ""),
        Row(S, 1, '"model": "m"', "/model", "/model"),
        Row(C, 1, '"max_tokens": 100 → 200', "/max_tokens", "/max_tokens"),
        Row(R, 1, '"parallel_tool_calls": false', "/parallel_tool_calls", None),
        Row(S, 1, '"meta": {… 1 key}', "/meta", "/meta"),  # unchanged containers fold to one row
        Row(A, 1, '"tool_choice": {', None, "/tool_choice"),
        Row(A, 2, '"type": "auto"', None, "/tool_choice/type"),
        Row(A, 1, "}", None, None),
        Row(S, 0, "}", None, None),
    ]
    # A subtree added whole counts once.
    assert found.counts() == {A: 1, R: 1, C: 1}
    assert (found.identical, found.row_of("/tool_choice/type", "right"), found.row_of("/tool_choice", "left")) == (
        False, 6, None)


def test_arrays_align_by_content_so_a_merged_message_shifts_nothing_after_it() -> None:
    left = {"messages": [{"role": "user", "content": "a"}, {"role": "tool", "content": "1"},
                         {"role": "tool", "content": "2"}, {"role": "user", "content": "b"},
                         {"role": "user", "content": "c"}]}
    right = {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": ["1", "2"]},
                          {"role": "user", "content": "b"}, {"role": "user", "content": "c"}]}
    found = diff(left, right)
    assert found.rows == [
        Row(S, 0, "{", "", ""),
        Row(S, 1, '"messages": [', "/messages", "/messages"),
        Row(S, 2, '[0] {… 2 keys}', "/messages/0", "/messages/0"),
        Row(S, 2, "[1] {", "/messages/1", "/messages/1"),  # the run's leftovers pair by position
        Row(C, 3, '"role": "tool" → "user"', "/messages/1/role", "/messages/1/role"),
        Row(R, 3, '"content": "1"', "/messages/1/content", None),
        Row(A, 3, '"content": [', None, "/messages/1/content"),
        Row(A, 4, '[0] "1"', None, "/messages/1/content/0"),
        Row(A, 4, '[1] "2"', None, "/messages/1/content/1"),
        Row(A, 3, "]", None, None),
        Row(S, 2, "}", None, None),
        Row(R, 2, "[2] {", "/messages/2", None),
        Row(R, 3, '"role": "tool"', "/messages/2/role", None),
        Row(R, 3, '"content": "2"', "/messages/2/content", None),
        Row(R, 2, "}", None, None),
        Row(S, 2, "[2–3] … 2 unchanged items", "/messages/3", "/messages/2"),
        Row(S, 1, "]", None, None),
        Row(S, 0, "}", None, None),
    ]
    # Every element of a folded run, and anything inside one, lands on the run's row.
    assert [found.line_of(p, side) for p, side in [("/messages/4/content", "left"), ("/messages/3", "right"),
                                                    ("/messages/9/x", "left"), ("/nowhere", "right")]] == [15, 15, 1, 0]


def test_identical_documents_and_scalars_of_another_type() -> None:
    assert diff([1, {"a": None}], [1, {"a": None}]).rows == [Row(S, 0, "[… 2 items]", "", "")]
    assert diff([1, {"a": None}], [1, {"a": None}]).identical
    # 1 and 1.0 are different JSON on the wire, and so are 1 and true; a string and an object swap rows.
    assert diff({"t": 1, "b": 1, "n": None, "s": "x"}, {"t": 1.0, "b": True, "n": "y", "s": {"x": 1}}).rows == [
        Row(S, 0, "{", "", ""),
        Row(C, 1, '"t": 1 → 1.0', "/t", "/t"),
        Row(C, 1, '"b": 1 → true', "/b", "/b"),
        Row(C, 1, '"n": null → "y"', "/n", "/n"),
        Row(R, 1, '"s": "x"', "/s", None),
        Row(A, 1, '"s": {', None, "/s"),
        Row(A, 2, '"x": 1', None, "/s/x"),
        Row(A, 1, "}", None, None),
        Row(S, 0, "}", None, None),
    ]


def test_keys_that_need_escaping_keep_their_pointers() -> None:
    found = diff({"a/b": {"c~d": 1}}, {"a/b": {"c~d": 2}})
    assert found.rows[2] == Row(C, 2, '"c~d": 1 → 2', "/a~1b/c~0d", "/a~1b/c~0d")


def test_a_changed_run_pairs_elements_by_the_values_they_share() -> None:
    """Chat -> Anthropic: the system message leaves the list, the tool message becomes a user turn
    with a tool_result block; each message still meets its counterpart, not its neighbour."""
    left = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]
    right = [{"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "sunny"}]}]
    found = diff(left, right)
    assert [(row.op, row.text, row.left, row.right) for row in found.rows if row.depth == 1] == [
        (R, "[0] {", "/0", None), (R, "}", None, None),
        (S, "[0] {", "/1", "/0"), (S, "}", None, None),
        (S, "[1] {", "/2", "/1"), (S, "}", None, None),
    ]


def test_a_changed_run_too_long_to_align_pairs_by_position() -> None:
    def first_pairs(n: int) -> list[tuple[str | None, str | None]]:
        found = diff([{"n": i} for i in range(n + 1)], [{"m": i + 1} for i in range(n)])
        return [(row.left, row.right) for row in found.rows if row.depth == 1 and row.text != "}"][:2]

    assert first_pairs(9) == [("/0", None), ("/1", "/0")]  # aligned: {"n": 1} meets {"m": 1}
    assert first_pairs(100) == [("/0", "/0"), ("/1", "/1")]  # 10,100 pairs: by position


# ---- nesting as deep as orjson reads (1024): past orjson's 254 written levels and Python's ~1000 frames ----

DEEP = 1000


def chain(depth: int, leaf: object) -> object:
    """{"a": {"a": ... leaf}}, `depth` objects deep, built without recursion."""
    for _ in range(depth):
        leaf = {"a": leaf}
    return leaf


def test_a_change_at_the_bottom_of_a_thousand_levels_is_on_its_row() -> None:
    found = diff(chain(DEEP, 1), chain(DEEP, 2))
    opening = [Row(S, 0, "{", "", "")] + [Row(S, d, '"a": {', "/a" * d, "/a" * d) for d in range(1, DEEP)]
    closing = [Row(S, d, "}", None, None) for d in range(DEEP - 1, -1, -1)]
    assert found.rows == opening + [Row(C, DEEP, '"a": 1 → 2', "/a" * DEEP, "/a" * DEEP)] + closing
    assert (found.counts(), found.line_of("/a" * DEEP, "left")) == ({A: 0, R: 0, C: 1}, DEEP)


def test_a_thousand_levels_unchanged_fold_and_removed_unfold_each_node_on_its_row() -> None:
    same = diff({"deep": chain(DEEP, 1), "n": 1}, {"deep": chain(DEEP, 1), "n": 2})
    assert same.rows == [Row(S, 0, "{", "", ""), Row(S, 1, '"deep": {… 1 key}', "/deep", "/deep"),
                         Row(C, 1, '"n": 1 → 2', "/n", "/n"), Row(S, 0, "}", None, None)]
    gone = diff({"deep": chain(DEEP, 1)}, {})
    assert gone.rows == [Row(S, 0, "{", "", "")] + \
        [Row(R, 1, '"deep": {', "/deep", None)] + \
        [Row(R, d, '"a": {', "/deep" + "/a" * (d - 1), None) for d in range(2, DEEP + 1)] + \
        [Row(R, DEEP + 1, '"a": 1', "/deep" + "/a" * DEEP, None)] + \
        [Row(R, d, "}", None, None) for d in range(DEEP, 0, -1)] + [Row(S, 0, "}", None, None)]
    assert gone.counts() == {A: 0, R: 1, C: 0}


def test_array_elements_a_thousand_levels_deep_align_by_content() -> None:
    deep = chain(DEEP, "x")
    found = diff({"items": [deep, "old"]}, {"items": ["new", deep]})
    assert found.rows == [
        Row(S, 0, "{", "", ""),
        Row(S, 1, '"items": [', "/items", "/items"),
        Row(A, 2, '[0] "new"', None, "/items/0"),
        Row(S, 2, "[1] {… 1 key}", "/items/0", "/items/1"),
        Row(R, 2, '[1] "old"', "/items/1", None),
        Row(S, 1, "]", None, None),
        Row(S, 0, "}", None, None),
    ]
