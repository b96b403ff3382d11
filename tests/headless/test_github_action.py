"""The GitHub Action (action.yml) cannot rot: its steps' command lines are run here as a
runner would run them (`bash -e`, each step's `env` with its `${{ … }}` values filled in from
the event, the inputs and earlier steps' `$GITHUB_OUTPUT`), against the local test server
for the model and a local stand-in for GitHub's REST API that records the comment.

The install step runs its two pip commands for real but offline and as a dry run
(PIP_DRY_RUN, PIP_NO_INDEX, no build isolation): every pin of requirements/app.lock must
already be what this environment holds, and picobot's own build must succeed; the picobot
it would install is the one this environment has, from this tree."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.headless.conftest import SECRET
from tests.support.openai_server import OpenAITestServer, text_reply

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class GitHubStub:
    """POST /repos/{owner}/{repo}/issues/{n}/comments, recorded; 201 like GitHub."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.posts.append(
                    {"path": self.path, "auth": self.headers["Authorization"], "body": body}
                )
                data = b'{"id": 1}'
                self.send_response(201)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def github() -> Iterator[GitHubStub]:
    stub = GitHubStub()
    yield stub
    stub.close()


def lookup(path: str, context: dict[str, Any]) -> Any:
    value: Any = context
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return ""
        value = value[part]
    return value


def evaluate(expression: str, context: dict[str, Any]) -> str:
    """The expressions action.yml uses: a context path, or `a || b` (the first non-empty)."""
    for alternative in expression.split("||"):
        value = lookup(alternative.strip(), context)
        if value not in ("", None, 0, False):
            return str(value)
    return ""


def fill(text: str, context: dict[str, Any]) -> str:
    return EXPR.sub(lambda m: evaluate(m.group(1), context), str(text))


def read_outputs(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    i = 0
    while i < len(lines):
        name, _, mark = lines[i].partition("<<")
        end = lines.index(mark, i + 1)
        out[name] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return out


def run_action(
    tmp: Path, home: Path, github: GitHubStub, event: dict[str, Any], inputs: dict[str, str]
) -> tuple[int, dict[str, dict[str, str]], str]:
    """Run every step in order, as a runner would; (the last step's code, outputs, logs)."""
    defaults = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
    context: dict[str, Any] = {
        "github": {"action_path": str(ROOT), "event": event, "token": "ghs-test-token"},
        "inputs": {},
        "steps": {},
    }
    context["inputs"] = {k: fill(v, context) for k, v in {**defaults, **inputs}.items()}
    temp = tmp / "runner-temp"
    temp.mkdir(exist_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith("PICOBOT_") and "KEY" not in k}
    base.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        PICOBOT_HOME=str(home),
        PICOBOT_SERVER="0",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        RUNNER_TEMP=str(temp),
        GITHUB_API_URL=github.url,
        GITHUB_REPOSITORY="octo/repo",
        OPENAI_API_KEY=SECRET,  # the caller's `env:`, which composite steps inherit
        # The install step offline: resolve and build, install nothing (see the docstring).
        PIP_DRY_RUN="1",
        PIP_NO_INDEX="1",
        PIP_NO_BUILD_ISOLATION="0",
    )
    log, code = [], 0
    for n, step in enumerate(ACTION["runs"]["steps"]):
        assert step["shell"] == "bash" and "if" not in step
        assert "${{" not in step["run"], "values reach a script as env, never spliced into it"
        out_file = temp / f"output-{n}"
        env = {**base, "GITHUB_OUTPUT": str(out_file)}
        env.update({k: fill(v, context) for k, v in step.get("env", {}).items()})
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=tmp, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        log.append(f"## {step['name']}: {done.returncode}\n{done.stdout}{done.stderr}")
        code = done.returncode
        if "id" in step:
            context["steps"][step["id"]] = {"outputs": read_outputs(out_file)}
        if code != 0:
            break
    return code, context["steps"], "\n".join(log)


def test_a_comment_runs_picobot_and_the_answer_is_posted(
    configured_home: Path, llm_server: OpenAITestServer, github: GitHubStub, tmp_path: Path
) -> None:
    llm_server.script([text_reply("The change looks right.")])
    event = {"comment": {"body": "/picobot review the diff\nplease"}, "issue": {"number": 7}}
    code, steps, log = run_action(tmp_path, configured_home, github, event,
                                  {"model": "openai/test-model"})  # fmt: skip
    assert code == 0, log
    assert "Would install picobot-tui" in log  # the install step really resolved and built
    [user] = [m for m in llm_server.completions[0].body["messages"] if m["role"] == "user"]
    assert str(user["content"]).startswith("review the diff\nplease")
    assert steps["run"]["outputs"]["answer"] == "The change looks right."
    assert steps["run"]["outputs"]["exit-code"] == "0"
    [post] = github.posts
    assert post["path"] == "/repos/octo/repo/issues/7/comments"
    assert post["auth"] == "Bearer ghs-test-token"
    assert post["body"]["body"].startswith("The change looks right.\n\n<sub>picobot · 15 tokens")
    assert SECRET not in json.dumps(github.posts) + log
    assert not (configured_home / "sessions").exists()  # --ephemeral


def test_a_failed_run_posts_why_and_fails_the_job(
    configured_home: Path, llm_server: OpenAITestServer, github: GitHubStub, tmp_path: Path
) -> None:
    event = {"pull_request": {"number": 3}}
    code, steps, log = run_action(
        tmp_path, configured_home, github, event,
        {"message": "hi", "model": "openai/test-model", "workspace": "/no/such/dir"},
    )  # fmt: skip
    assert code == 2, log
    assert steps["run"]["outputs"]["exit-code"] == "2"
    [post] = github.posts
    assert post["path"] == "/repos/octo/repo/issues/3/comments"
    assert "picobot did not answer (not_started, exit 2)" in post["body"]["body"]
    assert not llm_server.completions


def test_a_comment_without_the_trigger_runs_nothing(
    configured_home: Path, llm_server: OpenAITestServer, github: GitHubStub, tmp_path: Path
) -> None:
    event = {"comment": {"body": "looks good to me; /picobot later"}, "issue": {"number": 1}}
    code, steps, log = run_action(tmp_path, configured_home, github, event, {})
    assert code == 0, log
    assert "nothing to run" in log
    assert steps["run"]["outputs"]["exit-code"] == "0"
    assert github.posts == [] and not llm_server.completions
