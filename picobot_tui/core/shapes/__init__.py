"""Plain shapes the settings share with the parts they configure, kept below both.

- `providers`: the provider table (names, model prefixes, key variables), read by the
  settings model's `providers.*` section and by the LiteLLM client's routing.
- `mcp_server`: one `mcpServers` entry (stdio or HTTP), validated by the settings model and
  run by `core.mcp`.

Nothing here imports from the rest of the core but `settings_base`, so `core.settings` can
import it without reaching up into `core.llm` or `core.mcp` (which import the settings).
"""
