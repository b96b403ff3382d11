"""The picobot arm of #12b: `python -m bench.mcp_ready CONFIG` loads the config and builds the
runtime as a front end does (settings, store, tools, loop; the MCP SDK is not imported yet),
then times `McpManager.start()` → `wait_ready()`: the SDK import (in a thread), every
configured server connected concurrently and its tools put in the registry. Prints one JSON
line, `{"start": …, "ready": …, "tools": …, "states": […]}` (time.monotonic()), then closes
the servers as `mcp_running` does on the way out."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path


def main(config: Path) -> None:
    from picobot_tui.config.settings import load_settings
    from picobot_tui.run.runtime import build_runtime

    settings, _ = load_settings(config)
    runtime = build_runtime(settings)
    mcp = runtime.mcp
    assert mcp is not None, "no MCP servers configured"
    assert "mcp" not in sys.modules, "the SDK was imported before the timed part"

    async def run() -> dict:
        start = time.monotonic()
        mcp.start()
        waiting = await mcp.wait_ready()
        ready = time.monotonic()
        offered = [n for n in runtime.tools.names() if n.startswith("mcp_")]
        states = [s.state for s in mcp.statuses()]
        await mcp.close()
        return {
            "start": start,
            "ready": ready,
            "tools": len(offered),
            "states": states,
            "waiting": waiting,
        }

    print(json.dumps(asyncio.run(run())), flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
