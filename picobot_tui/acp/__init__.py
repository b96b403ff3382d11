"""`picobot acp`: the agent on stdio for editors speaking the Agent Client Protocol (v1).

A front end beside the TUI and the headless CLI (it imports neither). Modules, one job each:
`stdout_guard` (fd 1 belongs to the protocol only), `transport` (newline-delimited JSON-RPC
frames on the guarded descriptors, -32700 / -32600 for bad ones), `server` (the `acp.Agent`
and `run_acp`), `sessions` (per-session settings, runtime, lock, MCP; the cwd book),
`turns` (one `session/prompt`), `updates` (core events -> `session/update`), `outbox`
(what is sent to the client), `permissions` (approvals -> `session/request_permission`),
`replay` (`session/load`), `prompt_content` (prompt blocks -> the user message),
`mcp_servers` (the client's MCP servers -> `McpServerConfig`), `modes`, `warmup` (LiteLLM
imported in the background), `client_fs` (the file tools through the client's `fs/*`),
`sdk_compat` (the one reader of an SDK private attribute).
"""
