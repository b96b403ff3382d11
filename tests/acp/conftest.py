"""The ACP tests drive `picobot acp` as a real subprocess against the local scripted model:
the console-script fixtures of tests/headless (a configured home, the shared server)."""

from tests.headless.conftest import configured_home, llm_server, server

__all__ = ["configured_home", "llm_server", "server"]
