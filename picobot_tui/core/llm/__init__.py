"""The model side: the LiteLLM client (the only module that imports litellm, lazily), its error
mapping, the provider table, tool-call accumulation, and the demo and scripted models."""
