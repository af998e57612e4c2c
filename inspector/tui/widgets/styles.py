"""Component styles laid over text that already has its own colours (syntax, cell colours)."""

from __future__ import annotations

from rich.style import Style
from textual.widget import Widget


def overlay(widget: Widget, component: str) -> Style:
    """Only what the component class sets, with a translucent background (`$error 25%`)
    blended onto the widget's own: a partial style alone would drop the alpha and paint the
    full colour."""
    partial = widget.get_component_rich_style(component, partial=True)
    if partial.bgcolor is None:
        return partial
    return partial + Style(bgcolor=widget.get_component_rich_style(component).bgcolor)
