"""The warm start server: pay `import litellm` once, not once per call.

`picobot agent -m …` and `agent --json` start as a small stdlib-only client
(`client.py`, called from `picobot_tui.entry` before Typer or anything heavy is imported).
It connects to a per-user server over a Unix socket (`place.py`), checks the server's
stamp against its own (`stamp.py`), and hands over argv, environment, cwd, umask and fds
0/1/2 (`wire.py`). The server (`server.py`), which has LiteLLM and the core imported and
`gc.freeze()`d (`preload.py`), forks; the child (`child.py`) becomes the call and runs the
cold code path. Anything amiss: the client runs cold and starts a server in the background
(`launch.py`, `policy.py`). `control.py` is `picobot server status|start|stop`.
The TUI runs in its own process; while its LiteLLM imports, its model calls are handed to
a running server (`relay.py`), whose child answers them (`relay_child.py`).

Stdlib only in every module the client imports (place, stamp, wire, policy, client,
launch): tests/server/test_client_imports.py checks it.
"""
