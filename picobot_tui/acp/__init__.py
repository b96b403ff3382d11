"""`picobot acp`: the agent on stdio for editors speaking the Agent Client Protocol (v1).

A front end beside the TUI and the headless CLI (it imports neither). Modules, one job each:
`stdout_guard` (fd 1 belongs to the protocol only), `transport` (newline-delimited JSON-RPC
frames on the guarded descriptors), `server` (the `acp.Agent` and `run_acp`), `sessions`
(per-session runtime, lock, MCP), `updates` (core events -> `session/update`),
`permissions` (approvals -> `session/request_permission`), `replay` (`session/load`),
`prompt_content` (prompt blocks -> the user message), `mcp_servers` (the client's MCP
servers -> `McpServerConfig`), `warmup` (LiteLLM imported in the background).
"""
