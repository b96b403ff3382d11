"""The steps of the GitHub Action (action.yml at the repository root), stdlib only.

    python3 scripts/github_action.py message   choose the message: the `message` input, else
                                               the comment's text after the trigger word
    python3 scripts/github_action.py run       picobot agent -m … --ephemeral --output-format
                                               json; its answer, exit code and result file
                                               become the step's outputs (never fails the step:
                                               the last step exits with picobot's code)
    python3 scripts/github_action.py post      post the answer on the issue or pull request

Inputs come as environment variables (action.yml maps them), outputs go to $GITHUB_OUTPUT.
tests/headless/test_github_action.py runs these steps' command lines against the local test
server and a local stand-in for the GitHub API.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any


def _output(**values: str) -> None:
    """Append step outputs to $GITHUB_OUTPUT (a random delimiter: a value may hold lines)."""
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        for name, value in values.items():
            print(f"{name}={value}")
        return
    with open(path, "a", encoding="utf-8") as f:
        for name, value in values.items():
            mark = f"EOF_{secrets.token_hex(8)}"
            f.write(f"{name}<<{mark}\n{value}\n{mark}\n")


def choose_message() -> int:
    given = os.environ.get("INPUT_MESSAGE", "").strip()
    trigger = os.environ.get("INPUT_TRIGGER", "/picobot").strip()
    comment = os.environ.get("COMMENT_BODY", "").strip()
    message = given
    if not message and comment:
        head, _, tail = comment.partition("\n")
        words = head.split(maxsplit=1)
        if words and words[0] == trigger:  # "/picobot review this" and any lines after it
            message = ((words[1] if len(words) > 1 else "") + "\n" + tail).strip()
    if not message:
        print("picobot: nothing to run (no message input, no comment starting with "
              f"{trigger!r})")  # fmt: skip
    _output(message=message)
    return 0


def run() -> int:
    message = os.environ.get("MESSAGE", "")
    if not message.strip():
        _output(answer="", **{"exit-code": "0"}, result="")
        return 0
    temp = Path(os.environ.get("RUNNER_TEMP") or os.environ.get("TMPDIR") or "/tmp")
    result = temp / "picobot-result.json"
    argv = ["picobot", "agent", f"--message={message}", "--ephemeral", "--output-format", "json"]
    if os.environ.get("MODEL"):
        argv.append(f"--model={os.environ['MODEL']}")
    if os.environ.get("WORKSPACE"):
        argv.append(f"--workspace={os.environ['WORKSPACE']}")
    with open(result, "w", encoding="utf-8") as out:
        code = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, check=False).returncode
    answer = ""
    try:
        answer = json.loads(result.read_text(encoding="utf-8"))["answer"]
    except (OSError, ValueError, KeyError, TypeError):
        print(f"picobot: exit {code} without a result object", file=sys.stderr)
    _output(answer=answer, **{"exit-code": str(code)}, result=str(result))
    return 0


def comment_body(result: dict[str, Any]) -> str:
    usage = result.get("usage") or {}
    cost = result.get("cost")
    parts = [f"{usage.get('total_tokens', 0):,} tokens"]
    if cost is not None:
        parts.append(f"${cost:.4f}")
    footer = f"\n\n<sub>picobot · {' · '.join(parts)}</sub>"
    if result.get("outcome") == "final":
        return result.get("answer", "") + footer
    why = result.get("error") or "no answer"
    return (
        f"picobot did not answer ({result.get('outcome')}, exit {result.get('exit_code')}): {why}"
        + footer
    )


def post() -> int:
    if os.environ.get("POST", "true") != "true":
        return 0
    number, path = os.environ.get("NUMBER", ""), os.environ.get("RESULT", "")
    if not path:
        return 0  # nothing ran
    if not number:
        print("picobot: not an issue or pull-request event: the answer is not posted")
        return 0
    result = json.loads(Path(path).read_text(encoding="utf-8"))
    api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    repo = os.environ["GITHUB_REPOSITORY"]
    request = urllib.request.Request(
        f"{api}/repos/{repo}/issues/{number}/comments",
        data=json.dumps({"body": comment_body(result)}).encode(),
        method="POST",
        headers={
            "Authorization": f"Bearer {os.environ.get('GITHUB_TOKEN', '')}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "Content-Type": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            print(f"picobot: posted the answer ({response.status})")
    except (urllib.error.URLError, OSError) as e:
        print(f"picobot: could not post the answer: {e}", file=sys.stderr)
        return 1
    return 0


STEPS = {"message": choose_message, "run": run, "post": post}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in STEPS:
        print(f"usage: github_action.py {'|'.join(STEPS)}", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(STEPS[sys.argv[1]]())
