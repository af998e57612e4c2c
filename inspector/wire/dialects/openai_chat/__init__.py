"""OpenAI Chat Completions (with the legacy `functions` / `function_call` fields)."""

# Its name in the flow list (Home.short), here so that the list can show it without loading the home.
SHORT = "chat"
