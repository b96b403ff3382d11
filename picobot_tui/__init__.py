"""picobot: an LLM agent for the terminal. Importing this package loads nothing heavy."""

__version__ = "0.1.0"
