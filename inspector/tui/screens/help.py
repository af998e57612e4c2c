"""`?`: every key of the screen in use, read from the bindings themselves so the help can never
drift from them. `binding_table` is the one table: the help, the command palette and the footers
all read it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Static

from ..format import fold

# Keys Textual itself provides have no Binding of ours to read; they are listed by hand. In the
# request editor (a modal screen) tab indents.
PANE_KEYS = ("tab, shift+tab", "Move between panes")
PALETTE_KEY = ("ctrl+p", "Command palette (every action, themes)")
EVERYWHERE = "Everywhere"


def key_names(binding: Binding, keymap: Mapping[str, str] | None = None) -> str:
    """The keys of `binding` as the help shows them; the user's own (`keymap`, tui/keymap.py) as written."""
    if keymap and binding.id is not None and binding.id in keymap:
        return ", ".join(key.strip() for key in keymap[binding.id].split(","))
    names = {"slash": "/", "question_mark": "?", "escape": "esc", "pagedown": "pgdn", "pageup": "pgup"}
    return ", ".join(binding.key_display or names.get(k.strip(), k.strip()) for k in binding.key.split(","))


def keys_for(node: DOMNode, binding_id: str) -> str:
    """The keys of binding `binding_id` (of `node`, its screen or the app) as the help writes them,
    the user's keymap applied: for a hint that names a key ("esc clears the filter")."""
    for holder in (node, node.screen, node.app):
        for bindings in holder._bindings.key_to_bindings.values():
            for binding in bindings:
                if binding.id == binding_id:
                    return key_names(binding, user_keys(node))
    raise KeyError(binding_id)


def user_keys(node: DOMNode) -> Mapping[str, str]:
    """The keymap the user's config gave the app (InspectorApp.user_keys), none in another app."""
    return getattr(node.app, "user_keys", {})


def binding_rows(bindings: Sequence[BindingType], keymap: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    rows = []
    for binding in bindings:
        if isinstance(binding, Binding):
            rows.append((key_names(binding, keymap), binding.tooltip or binding.description))
    return rows


def _own_bindings(node: DOMNode) -> list[Binding]:
    return [b for b in type(node).__dict__.get("BINDINGS", ()) if isinstance(b, Binding)]


def binding_table(screen: Screen) -> list[tuple[str, Widget | App[object], list[Binding]]]:
    """(section title, the node whose actions they are, its bindings) for every key of `screen`:
    the screen's own with those of its widgets that have no HELP_SECTION, each widget class with
    one, then the app's that work there. Only this app's widgets: Textual's own (inputs, lists)
    document themselves."""
    title = getattr(screen, "HELP_TITLE", type(screen).__name__)
    table: list[tuple[str, Widget | App[object], list[Binding]]] = [(title, screen, _own_bindings(screen))]
    seen: set[type] = set()
    for node in screen.walk_children(Widget):
        kind = type(node)
        if kind in seen or not kind.__module__.startswith(__package__.rsplit(".", 1)[0]):
            continue
        seen.add(kind)
        bindings = _own_bindings(node)
        if bindings:
            table.append((getattr(kind, "HELP_SECTION", title), node, bindings))
    # Over a modal screen only the app's priority keys still work.
    app_bindings = [b for b in _own_bindings(screen.app) if b.priority or not screen.is_modal]
    table.append((EVERYWHERE, screen.app, app_bindings))
    return table


def help_sections(screen: Screen) -> list[tuple[str, list[tuple[str, str]]]]:
    """The help of `screen`: its binding table, sections of one title merged, with the screen's
    HELP_EXTRA (e.g. the filter expressions) after its own keys and the built-in keys last."""
    sections: dict[str, list[tuple[str, str]]] = {}
    for title, _, bindings in binding_table(screen):
        sections.setdefault(title, []).extend(binding_rows(bindings, user_keys(screen)))
    sections[EVERYWHERE] += [PALETTE_KEY] if screen.is_modal else [PANE_KEYS, PALETTE_KEY]
    ordered = list(sections.items())
    return ordered[:1] + list(getattr(screen, "HELP_EXTRA", [])) + ordered[1:]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="help.close", tooltip="Close the help")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 80; max-height: 90%; height: auto; border: round $accent;
        background: $surface; padding: 0 1; }
    """
    WIDTH = 80  # the box's, as above: a description folds to what is left beside the key column

    def __init__(self, sections: list[tuple[str, list[tuple[str, str]]]]) -> None:
        """`sections`: (title, [(keys, what they do)]), usually from `binding_rows`."""
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        parts: list[str | tuple[str, str]] = []
        width = max(len(keys) for _, rows in self.sections for keys, _ in rows) + 2
        # Border, padding and a scrollbar's 2 columns: a long description continues under itself,
        # not under the keys.
        room = min(self.WIDTH, self.app.size.width) - 6 - (2 + width)
        for title, rows in self.sections:
            parts.append((f"{title}\n", "bold $accent"))
            for keys, text in rows:
                folded = ("\n" + " " * (2 + width)).join(text[start:end].rstrip() for start, end in fold(text, room))
                parts += [(f"  {keys:<{width}}", "bold"), f"{folded}\n"]
            parts.append("\n")
        with VerticalScroll() as scroll:
            scroll.border_title = "Keys"
            scroll.border_subtitle = "esc to close"
            yield Static(Content.assemble(*parts).rstrip(), id="help-text")
