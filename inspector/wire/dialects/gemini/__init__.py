"""Gemini generateContent (Gemini API and Vertex): field spellings and the genai `Schema` dialect."""

# Its name in the flow list (Home.short), here so that the list can show it without loading the home.
SHORT = "gemini"
