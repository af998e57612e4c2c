"""OpenAI Responses API."""
