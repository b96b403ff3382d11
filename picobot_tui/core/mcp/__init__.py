"""MCP servers as tools: one owner task per server and the tool adapter (a server's config
entry is `core.shapes.mcp_server`).

Nothing here imports the `mcp` SDK at module level: it costs ~0.9 s to import (measured:
`python -c "import mcp"` on the CI machine), so it is loaded in a thread when the first
server starts, never for `--help`, `sessions ...` or the TUI's first frame.
"""
