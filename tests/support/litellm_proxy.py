"""The real LiteLLM Proxy (`litellm --config`), run from its own venv (tests/proxy/.venv,
installed by .ci/run from requirements/proxy.lock) in front of a local OpenAI test server.

It takes 10-40 s to start, so tests share one per module (`litellm_proxy` fixture). Where
its venv is missing the tests skip, except in CI (`CI=true`), where that is a failure.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.openai_server import OpenAITestServer

ROOT = Path(__file__).resolve().parent.parent.parent
VENV = ROOT / "tests" / "proxy" / ".venv"
EXE = VENV / "bin" / "litellm"
INSTALL = (
    "python -m venv tests/proxy/.venv && "
    "tests/proxy/.venv/bin/pip install --no-deps -r requirements/proxy.lock"
)
UPSTREAM_KEY = "sk-upstream-test"
START_TIMEOUT = 180.0  # seconds; ~40 s was seen on a loaded 2-core machine
MODEL = "gpt-4o-mini"
"""A model the proxy serves under its own name: picobot and the proxy price the same entry
of LiteLLM's price table."""
ALIAS = "team-model"
"""The same upstream model under a name only the proxy can price (it is in no table)."""
UNPRICED = "gpt-4o"
"""A name in the table whose upstream model is in none: the proxy cannot price it."""


@dataclass
class LiteLLMProxy:
    """A running proxy: its base URL (for `apiBase`), master key, log file and upstream."""

    url: str
    master_key: str
    log: Path
    upstream: OpenAITestServer
    process: subprocess.Popen[bytes]


def proxy_exe() -> Path:
    """The proxy's console script, or skip (fail in CI) with how to install it."""
    if EXE.exists():
        return EXE
    why = f"the LiteLLM Proxy is not installed: `{INSTALL}` (.ci/run does it)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI: {why}")
    pytest.skip(why)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _config(upstream: OpenAITestServer) -> str:
    routes = {MODEL: MODEL, ALIAS: MODEL, UNPRICED: "picobot-unpriced"}
    return "model_list:\n" + "".join(
        f"  - model_name: {name}\n"
        "    litellm_params:\n"
        f"      model: openai/{upstream_model}\n"
        f"      api_base: {upstream.url}\n"
        f"      api_key: {UPSTREAM_KEY}\n"
        for name, upstream_model in routes.items()
    )


def _alive(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health/liveliness", timeout=2) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start_proxy(upstream: OpenAITestServer, workdir: Path) -> LiteLLMProxy:
    """Start the proxy on a free 127.0.0.1 port and return once /health/liveliness answers
    200 (bounded by START_TIMEOUT); fail with its log's tail if it exits or never answers."""
    exe = proxy_exe()
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "proxy.yaml"
    config.write_text(_config(upstream))
    log = workdir / "proxy.log"
    key = f"sk-proxy-master-{secrets.token_hex(16)}"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.startswith(("LITELLM_", "DATABASE_"))
    }
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_MASTER_KEY=key)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [str(exe), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT)
    proxy = LiteLLMProxy(url, key, log, upstream, proc)
    deadline = time.monotonic() + START_TIMEOUT
    while not _alive(url):
        try:  # waits for the next poll, and returns at once if the proxy exited
            proc.wait(timeout=0.25)
        except subprocess.TimeoutExpired:
            if time.monotonic() < deadline:
                continue
            stop_proxy(proxy)
            pytest.fail(f"the LiteLLM Proxy did not answer in {START_TIMEOUT:.0f} s:\n{_tail(log)}")
        pytest.fail(f"the LiteLLM Proxy exited ({proc.returncode}):\n{_tail(log)}")
    return proxy


def stop_proxy(proxy: LiteLLMProxy) -> None:
    proc = proxy.process
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def _tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture(scope="module")
def litellm_proxy(
    server: OpenAITestServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiteLLMProxy]:
    """One real proxy per test module, in front of the session's OpenAI test server (each
    test scripts that server through `llm_server`, which resets it)."""
    proxy = start_proxy(server, tmp_path_factory.mktemp("litellm-proxy"))
    try:
        yield proxy
    finally:
        stop_proxy(proxy)
