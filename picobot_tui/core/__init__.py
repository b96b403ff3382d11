"""The agent. It imports nothing above it (import-linter checks it), never textual or rich,
and litellm only inside core.llm, on first use."""
