"""Where Gemini endpoints accept what the published definition refuses (the kinds and how the
spec layer reads them: rules/tolerance.py)."""

from ...rules.tolerance import Tolerance

_LANGCHAINGO = "tmc/langchaingo:llms/googleai/testdata/"

TOLERANCES = (
    Tolerance("enum-number", None, "*",
              _LANGCHAINGO + "TestGoogleAIWithTools.httprr ($alt=json;enum-encoding=int: safetySettings "
              "category 10, threshold 3, parameters type 6, answered 200); "
              "https://protobuf.dev/programming-guides/json/ (enum: name or integer)"),
    Tolerance("default", "FunctionResponse", "response",
              "issue 18's measurement (a functionResponse without response answered 200: proto reads an absent "
              "Struct as empty); FunctionResponse also carries `parts`, a multimodal result with no response "
              "object (https://ai.google.dev/api/caching#FunctionResponse)"),
    Tolerance("role", None, "function",
              "ai.google.dev's 2024 REST function-calling examples send the functionResponse turn with role "
              "\"function\", and google-generativeai 0.x did the same; issue 18's measurement: answered 200",
              values=("functionResponse",)),
)

# genai's Type enum by proto number (google/ai/generativelanguage/v1beta/content.proto), what a
# client sending enum-encoding=int writes in a Schema's `type`.
TYPE_NUMBERS = {0: "TYPE_UNSPECIFIED", 1: "STRING", 2: "NUMBER", 3: "INTEGER", 4: "BOOLEAN", 5: "ARRAY",
                6: "OBJECT", 7: "NULL"}
