"""`picobot server relay`: one model call for a process whose LiteLLM is still importing.

Run by a warm server's child (relay.py hands it over): reads one line (the caller's core
settings and the request), runs `LiteLLMClient.stream` exactly as the caller would have,
and writes each chunk, a classified error, and the end as JSON lines on stdout. It logs
to picobot.log as the caller would; it writes nothing else anywhere.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import BinaryIO

from picobot_tui.core.llm.model import LLMError
from picobot_tui.core.secrets import Scrubber
from picobot_tui.warm.relay import decode_call, encode_chunk, encode_error

EXIT_BAD_INPUT = 2


def serve_one(stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Answer the one call on `stdin`; 0 when it was answered (an error is an answer too)."""
    line = stdin.readline()
    try:
        settings, request = decode_call(line)
    except (ValueError, KeyError, TypeError) as e:
        sys.stderr.write(f"picobot server relay: not a relayed call: {e}\n")
        return EXIT_BAD_INPUT
    from picobot_tui.core.llm.client import LiteLLMClient
    from picobot_tui.run.logs import setup_logging

    setup_logging(settings.log_path, Scrubber(settings.secrets()), to_stderr=False)

    def put(obj: dict[str, object]) -> None:
        stdout.write(json.dumps(obj, ensure_ascii=False).encode() + b"\n")
        stdout.flush()

    async def run() -> None:
        try:
            async for chunk in LiteLLMClient(settings).stream(request):
                put(encode_chunk(chunk))
        except LLMError as e:
            put(encode_error(e))
            return
        put({"end": True})

    asyncio.run(run())
    return 0
