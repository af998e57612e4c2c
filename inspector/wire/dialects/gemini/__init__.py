"""Gemini generateContent (Gemini API and Vertex): field spellings and the genai `Schema` dialect."""
