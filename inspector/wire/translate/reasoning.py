"""How hard a model thinks, across dialects: OpenAI's effort scale (Chat `reasoning_effort`,
Responses `reasoning.effort`), Anthropic's token budget (`thinking: {type: enabled, budget_tokens}`)
and Gemini's `thinkingConfig` (a `thinkingBudget` on 2.5 models, a `thinkingLevel` on Gemini 3).

One table, read both ways:

| effort  | budget (Anthropic budget_tokens, Gemini thinkingBudget) | Gemini 3 thinkingLevel |
|---------|-------|---------------------------|
| none    | thinking off (Anthropic: not enabled; Gemini 2.5: 0) | the lowest level the model takes |
| minimal | 1024  | minimal (Flash), low (Pro) |
| low     | 2048  | low |
| medium  | 8192  | medium (Flash), high (Pro) |
| high    | 24576 | high |
| xhigh   | 32768 | high |

A budget read as an effort takes the lowest of low, medium and high whose budget holds it (at most
2048 is low, at most 8192 medium, above that high): the three efforts every OpenAI reasoning model
accepts. Gemini's dynamic budget (-1) is medium, OpenAI's default. Whenever the value sent is not
the value stated, the loss report says which it was and which was sent."""

from __future__ import annotations

EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
BUDGET = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576, "xhigh": 32768}
# The efforts a budget is read as, each with the largest budget it stands for.
_READ = (("low", BUDGET["low"]), ("medium", BUDGET["medium"]), ("high", None))
DYNAMIC = -1  # Gemini's thinkingBudget for "the model decides"
# Anthropic's smallest thinking budget ("budget_tokens: Input should be greater than or equal to 1024").
ANTHROPIC_MIN_BUDGET = 1024


def effort_of_budget(budget: int) -> str:
    """The effort a token budget is read as (see the table)."""
    if budget == 0:
        return "none"
    if budget < 0:
        return "medium"
    return next(effort for effort, most in _READ if most is None or budget <= most)


def budget_of(effort: str) -> int | None:
    """The token budget of an effort; None for none (and for a name not on the scale)."""
    return BUDGET.get(effort)


def rounding(stated: int, effort: str) -> str:
    """Why a budget sent as an effort was rounded, for the loss report; "" when it was not."""
    if stated < 0:
        return f"a dynamic thinking budget ({stated}) is sent as the effort {effort!r}, OpenAI's default"
    if budget_of(effort) == stated:
        return ""
    return (f"a thinking budget of {stated} tokens is sent as the effort {effort!r} (the table's "
            f"{budget_of(effort)}; at most 2048 is low, at most 8192 medium, more is high)")
