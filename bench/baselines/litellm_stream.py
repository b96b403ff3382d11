"""Baseline for #3: the same streamed `litellm.acompletion` call picobot makes, and nothing
else. `python litellm_stream.py API_BASE MODEL MESSAGE [--freeze]` prints the answer as it
streams. `--freeze` adds the one trick picobot uses around the import (`gc.freeze()`), to
show what picobot costs beyond it."""

import asyncio
import gc
import os
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402

litellm.suppress_debug_info = True
if "--freeze" in sys.argv:
    gc.freeze()


async def main(api_base: str, model: str, message: str) -> None:
    response = await litellm.acompletion(
        model=model,
        messages=[{"role": "user", "content": message}],
        stream=True,
        stream_options={"include_usage": True},
        api_base=api_base,
        api_key="sk-bench",
        max_retries=0,
    )
    async for chunk in response:
        if chunk.choices and chunk.choices[0].delta.content:
            sys.stdout.write(chunk.choices[0].delta.content)
            sys.stdout.flush()
    sys.stdout.write("\n")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
