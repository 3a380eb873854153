"""The reader: an LLM answers a question from a packed context (`reader`), with its prompt
(`prompts`)."""
