"""Where Anthropic Messages endpoints accept what the published definition refuses (the kinds and how the
spec layer reads them: rules/tolerance.py)."""

from ...rules.tolerance import Tolerance

TOLERANCES = (
    Tolerance("sentinel", None, "top_k",
              "issue 18's measurement: -1, the legacy \"unset\" of Anthropic's early SDKs, answered 200 by "
              "api.anthropic.com; no public recording of it was found for this table", values=(-1,)),
    Tolerance("sentinel", None, "top_p", "as top_k", values=(-1,)),
    Tolerance("retired", "MessageCreateParams", "output_format",
              "the structured-outputs beta (structured-outputs-2025-11-13) took a top-level output_format "
              "{type: json_schema, schema} (https://hackage.haskell.org/package/claude-1.0.1/src/CHANGELOG.md); "
              "output_config.format replaced it at GA (claude-1.1.0's changelog), and the API still validates "
              "it: issue 18's recorded rejection \"output_format.schema: Field required\" of the OpenAI shape",
              schema="BetaJSONOutputFormatParam"),
)
