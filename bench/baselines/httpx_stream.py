"""Baseline for #15a/b/e: stream one chat completion with httpx and print it, nothing
else (no LiteLLM). `python httpx_stream.py API_BASE MODEL MESSAGE`."""

import json
import sys

import httpx


def main(api_base: str, model: str, message: str) -> None:
    body = {
        "model": model.split("/", 1)[-1],
        "messages": [{"role": "user", "content": message}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    headers = {"Authorization": "Bearer sk-bench"}
    with httpx.stream("POST", f"{api_base}/chat/completions", json=body, headers=headers) as r:
        for line in r.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            for choice in chunk.get("choices") or []:
                text = (choice.get("delta") or {}).get("content")
                if text:
                    sys.stdout.write(text)
                    sys.stdout.flush()
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(*sys.argv[1:4])
