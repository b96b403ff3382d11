"""#11 Compaction over a long session: 200 turns at a 16k budget with a 2x token ratio.

The real console script (`picobot agent --json`, LiteLLM) against the local test server,
run in this process on a thread because its answers depend on the request: it reports
twice chars/4 of each request as `prompt_tokens` (a provider whose tokens are denser than
chars/4, like CJK text or dense code), answers the summary call with a short summary, and
every tenth turn asks for a tool (list_dir) before answering. 200 messages go in on stdin;
every turn must end `final` and no request may exceed the budget in the provider's tokens.

A: `agents.defaults.compaction` "summarize" (the default). B: "drop". Reported: how many
compactions each ran and the mean extra cost of a compaction call (prompt + completion
tokens of the summary call, as the provider reported them; drop makes no call: 0).
Not timed: the figure is counts and tokens, the same on any machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from bench.common import Result, bench_env, console_script, median, report, temp_dir

TURNS = 200
BUDGET = 16_000
RATIO = 2.0
SUMMARY = (
    "The user is working through a long list of numbered questions about a project; each "
    "was answered in turn. Nothing is open except the current question."
)


def _answer(n: int) -> str:
    return f"Answer {n}: " + " ".join(f"point {n}.{k} explained briefly." for k in range(40))


def _question(n: int) -> str:
    ask = "List the workspace first, then answer. " if n % 10 == 9 else ""
    return f"Question {n}: {ask}" + " ".join(f"detail {n}.{k}" for k in range(60))


def _step(body: dict[str, Any]):  # type: ignore[no-untyped-def]
    from picobot_tui.core.budget import estimate_text
    from tests.support.openai_server import text_reply, tool_call_reply

    messages = body["messages"]
    raw = estimate_text(json.dumps(messages)) + estimate_text(json.dumps(body.get("tools") or []))
    usage = (int(raw * RATIO), 0)
    last = messages[-1]
    if not body.get("tools") and last["role"] == "user" and "summary" in last["content"]:
        return text_reply(SUMMARY, usage=(usage[0], len(SUMMARY) // 2))
    users = [m for m in messages if m["role"] == "user"]
    n = int(users[-1]["content"].split(":")[0].split()[-1]) if users else 0
    answer = _answer(n)
    if last["role"] == "user" and "List the workspace" in last["content"]:
        return tool_call_reply("list_dir", {"path": "."}, usage=(usage[0], 10))
    return text_reply(answer, chunk_size=400, usage=(usage[0], len(answer) // 2))


def _session(strategy: str) -> dict[str, Any]:
    from tests.support.openai_server import OpenAITestServer

    with temp_dir() as home, OpenAITestServer(default=_step) as server:
        config = {
            "agents": {
                "defaults": {
                    "model": "openai/test-model",
                    "tokenBudget": BUDGET,
                    "compaction": strategy,
                }
            },
            "providers": {"openai": {"apiKey": "sk-bench", "apiBase": server.url}},
            "tools": {"approval": "auto"},
        }
        (home / "config.json").write_text(json.dumps(config))
        lines = "".join(
            json.dumps({"type": "message", "content": _question(n)}) + "\n" for n in range(TURNS)
        )
        t0 = time.perf_counter()
        proc = subprocess.run(
            [console_script(), "agent", "--json"],
            input=lines,
            capture_output=True,
            text=True,
            env=bench_env(home),
            timeout=900,
        )
        seconds = time.perf_counter() - t0
        events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        bodies = [r.body for r in server.completions]
    outcomes = [e["outcome"] for e in events if e["type"] == "turn_finished"]
    done = [e for e in events if e["type"] == "history_compressed"]
    fallbacks = [e for e in events if e["type"] == "notice" and e.get("kind") == "compaction"]
    from picobot_tui.core.budget import estimate_text

    main_calls = [b for b in bodies if b.get("tools")]
    real = [
        int(
            RATIO
            * (estimate_text(json.dumps(b["messages"])) + estimate_text(json.dumps(b["tools"])))
        )
        for b in main_calls
    ]
    extra = [e["extra_tokens"] for e in done]
    return {
        "exit": proc.returncode,
        "final": outcomes.count("final"),
        "turns": len(outcomes),
        "compactions": len(done),
        "summarized": sum(1 for e in done if e["strategy"] == "summarize"),
        "fallbacks": len(fallbacks),
        "mean_extra": sum(extra) / len(extra) if extra else 0.0,
        "median_extra": median(extra) if extra else 0.0,
        "requests": len(bodies),
        "max_real_prompt": max(real) if real else 0,
        "mean_real_prompt": sum(real) / len(real) if real else 0.0,
        "seconds": seconds,
        "stderr": proc.stderr[-500:],
    }


def run(reps: int = 1) -> Result:
    started = time.perf_counter()
    a = _session("summarize")
    b = _session("drop")
    ok = all(
        s["exit"] == 0 and s["final"] == TURNS == s["turns"] and s["max_real_prompt"] < BUDGET
        for s in (a, b)
    )
    for s in (a, b):
        if s["exit"] != 0:
            print(f"    stderr: {s['stderr']}", flush=True)
    return report(
        Result(
            "11",
            f"compaction: {TURNS} turns at a {BUDGET // 1000}k budget, {RATIO:g}x token ratio "
            "(compactions, summarize vs drop)",
            float(a["compactions"]),
            float(b["compactions"]),
            "compactions",
            a["compactions"] / b["compactions"] if b["compactions"] else 0.0,
            "report it; every turn final, no call over the budget",
            ok,
            detail=(
                f"summarize: {a['compactions']} compactions ({a['summarized']} summarised, "
                f"{a['fallbacks']} fell back), mean extra cost of a compaction call "
                f"{a['mean_extra']:,.0f} tokens (median {a['median_extra']:,.0f}), "
                f"{a['requests']} requests, mean prompt {a['mean_real_prompt']:,.0f} / max "
                f"{a['max_real_prompt']:,} tokens; drop: {b['compactions']} compactions, "
                f"0 extra tokens, {b['requests']} requests, mean prompt "
                f"{b['mean_real_prompt']:,.0f} / max {b['max_real_prompt']:,} tokens; "
                f"final turns {a['final']}/{TURNS} and {b['final']}/{TURNS}"
            ),
            extra={
                "summarize": {k: v for k, v in a.items() if k != "stderr"},
                "drop": {k: v for k, v in b.items() if k != "stderr"},
            },
            seconds=time.perf_counter() - started,
        )
    )


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
