"""OpenAI Chat Completions (with the legacy `functions` / `function_call` fields)."""
