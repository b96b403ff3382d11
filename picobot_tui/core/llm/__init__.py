"""The model side: the LiteLLM client (the only module that imports litellm, lazily), its error
mapping, tool-call accumulation, and the demo and scripted models."""
