"""Baseline for #12b: a bare MCP SDK script. `python mcp_bare.py N COMMAND [ARGS...]` starts
N copies of the stdio server COMMAND concurrently (`mcp.Client` with
`StdioServerParameters`), lists each one's tools, and prints one JSON line when all N have
answered: `{"start": …, "ready": …, "tools": …}` (time.monotonic(), CLOCK_MONOTONIC).
"start" is taken in the event loop before `import mcp`, so the SDK import is inside the
interval, as it is for picobot. Then every client is closed (which ends the servers)."""

import asyncio
import json
import sys
import time


async def main(n: int, command: str, args: list[str]) -> None:
    start = time.monotonic()
    from mcp import Client, StdioServerParameters

    listed: list[int] = []
    all_listed = asyncio.Event()
    done = asyncio.Event()

    async def one() -> None:
        params = StdioServerParameters(command=command, args=args)
        async with Client(params) as client:
            tools = await client.list_tools()
            listed.append(len(tools.tools))
            if len(listed) == n:
                all_listed.set()
            await done.wait()

    tasks = [asyncio.create_task(one()) for _ in range(n)]
    waiter = asyncio.create_task(all_listed.wait())
    await asyncio.wait([waiter, *tasks], return_when=asyncio.FIRST_COMPLETED)
    ready = time.monotonic()
    done.set()
    await asyncio.gather(*tasks)  # a failed client raises here
    print(json.dumps({"start": start, "ready": ready, "tools": sum(listed)}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], sys.argv[3:]))
