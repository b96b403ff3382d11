"""#16 Prompt caching (issue 24): a replayed 20-turn session with tool calls on the caching
Anthropic test server (tests/support/anthropic_server.py, which caches as Anthropic does).

The real console script (`picobot agent --json`, LiteLLM's anthropic provider) runs the 20
turns in one process; each turn reads a file (a tool call, so two model calls) and answers,
with answers and files long enough that the session passes maxHistoryMessages (50) and the
window has to move. The same session runs twice: caching on (the default) and off
(`cache.enabled` false). Not timed: the figures are token and price counts, the same on
any machine.

- **16a** share of the prompt tokens of turns 3-20 read from the cache (caching on);
  baseline: all of them. Target >= 80 %.
- **16b** the session's cost with caching on vs off, both priced with the price table's
  five rates from the server's usage. Target <= 0.4x.
- **16c** every call's reported cost (its `usage` event) against the price table's figure
  for the server's usage: the largest deviation. Target within 1 %.
- **16d** the first frame (#1) and the per-token CPU (#7) with caching on: their figures
  from the same run, compared with the rows of docs/performance.md (unchanged within
  noise); `--only 16` runs them, `python -m bench.bench_16_caching quick` skips them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from bench.common import Result, bench_env, console_script, report, temp_dir

TURNS = 20
MODEL = "anthropic/claude-sonnet-4-5"
PRICED = "claude-sonnet-4-5"


def _file(n: int) -> str:
    return f"notes {n}\n" + "".join(f"line {n}.{k}: a fact worth reading.\n" for k in range(40))


def _answer(n: int) -> str:
    return f"File {n} says: " + " ".join(f"point {n}.{k}." for k in range(30))


def _step(body: dict[str, Any]):  # type: ignore[no-untyped-def]
    from tests.support.openai_server import text_reply, tool_call_reply

    last = body["messages"][-1]
    blocks = last["content"] if isinstance(last["content"], list) else []
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
        users = [
            b["text"]
            for m in body["messages"]
            if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "text" and "Read file" in b["text"]
        ]
        n = int(users[-1].split("file ")[1].split(".")[0]) if users else 0
        return text_reply(_answer(n), chunk_size=200, usage=(0, 120))
    text = " ".join(b.get("text", "") for b in blocks if isinstance(b, dict))
    n = int(text.split("file ")[1].split(".")[0]) if "Read file " in text else 0
    return tool_call_reply("read_file", {"path": f"f{n}.txt"}, usage=(0, 30))


def _session(enabled: bool) -> dict[str, Any]:
    from tests.support.anthropic_server import AnthropicTestServer
    from tests.support.cache_checks import table_price

    with temp_dir() as home, AnthropicTestServer(default=_step) as server:
        config = {
            "agents": {"defaults": {"model": MODEL}},
            "providers": {"anthropic": {"apiKey": "sk-ant-bench", "apiBase": server.url}},
            "tools": {"approval": "auto"},
            "cache": {"enabled": enabled},
        }
        (home / "config.json").write_text(json.dumps(config))
        ws = home / "workspace"
        ws.mkdir()
        for n in range(TURNS):
            (ws / f"f{n}.txt").write_text(_file(n))
        config["agents"]["defaults"]["workspace"] = str(ws)  # type: ignore[index]
        (home / "config.json").write_text(json.dumps(config))
        lines = "".join(
            json.dumps({"type": "message", "content": f"Read file {n}. What does it say?"}) + "\n"
            for n in range(TURNS)
        )
        proc = subprocess.run(
            [console_script(), "agent", "--json"],
            input=lines,
            capture_output=True,
            text=True,
            env=bench_env(home),
            cwd=ws,
            timeout=900,
        )
        usages = server.usages
        bodies = [r.body for r in server.completions]
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    reported = [e for e in events if e["type"] == "usage"]
    turn_of: list[int] = []
    turn = 0
    for e in events:
        if e["type"] == "turn_started":
            turn = e["turn"]
        elif e["type"] == "usage":
            turn_of.append(turn)
    prompt = [
        u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
        for u in usages
    ]
    late = [i for i, t in enumerate(turn_of) if t >= 3]
    table = [table_price(PRICED, u) for u in usages]
    deviation = [
        abs(e["cost"] / t - 1) if t else 0.0 for e, t in zip(reported, table, strict=False)
    ]
    return {
        "exit": proc.returncode,
        "final": sum(1 for e in events if e.get("outcome") == "final"),
        "calls": len(usages),
        "read_late": sum(usages[i]["cache_read_input_tokens"] for i in late),
        "prompt_late": sum(prompt[i] for i in late),
        "cost": sum(table),
        "reported_cost": reported[-1]["session_cost"] if reported else None,
        "max_deviation": max(deviation) if deviation else 1.0,
        "markers_max": max(json.dumps(b).count('"cache_control"') for b in bodies),
        "messages_max": max(len(b["messages"]) for b in bodies),
        "stderr": proc.stderr[-500:],
    }


def run(reps: int = 1, *, frames: bool = True) -> list[Result]:
    started = time.perf_counter()
    on = _session(True)
    off = _session(False)
    for s in (on, off):
        if s["exit"] != 0 or s["final"] != TURNS:
            print(f"    exit {s['exit']}, {s['final']} final: {s['stderr']}", flush=True)
    share = on["read_late"] / on["prompt_late"] if on["prompt_late"] else 0.0
    detail = (
        f"{TURNS} turns, {on['calls']} calls (a tool round each); up to "
        f"{on['messages_max']} messages sent (maxHistoryMessages 50: the window moved), "
        f"at most {on['markers_max']} markers a request"
    )
    seconds = time.perf_counter() - started
    results = [
        report(
            Result(
                "16a",
                "prompt tokens read from cache, turns 3-20 (caching on)",
                float(on["read_late"]),
                float(on["prompt_late"]),
                "tokens",
                share,
                "≥ 0.80",
                share >= 0.80,
                detail=detail,
                seconds=seconds,
            )
        ),
        report(
            Result(
                "16b",
                "session cost, caching on vs off (price table)",
                on["cost"],
                off["cost"],
                "USD",
                on["cost"] / off["cost"] if off["cost"] else 0.0,
                "≤ 0.4×",
                off["cost"] > 0 and on["cost"] / off["cost"] <= 0.4,
                detail=f"reported session cost: on ${on['reported_cost']:.4f}, "
                f"off ${off['reported_cost']:.4f}",
            )
        ),
        report(
            Result(
                "16c",
                "largest deviation of a call's reported cost from the price table",
                max(on["max_deviation"], off["max_deviation"]) * 100,
                1.0,
                "%",
                max(on["max_deviation"], off["max_deviation"]) * 100,
                "≤ 1 %",
                max(on["max_deviation"], off["max_deviation"]) <= 0.01,
                detail=f"{on['calls'] + off['calls']} calls, streamed",
            )
        ),
    ]
    if frames:
        from bench import bench_01_cold_start, bench_07_token_cost

        for out in (bench_01_cold_start.run(), bench_07_token_cost.run()):
            for r in out if isinstance(out, list) else [out]:
                r.number = f"16d/{r.number}"
                r.name = f"caching on: {r.name}"
                results.append(r)
    return results


if __name__ == "__main__":
    run(frames=not (len(sys.argv) > 1 and sys.argv[1] == "quick"))
