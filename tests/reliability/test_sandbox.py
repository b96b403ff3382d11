"""exec's sandbox, environment and process lifetime, attacked through the real console script
(issue 10, points 6, 11 and 12).

The commands run with `restrictToWorkspace: false`, so the workspace guard does not stop them:
what holds is the sandbox (bwrap), the clean environment and the reaper. Each sandbox check
that a sandboxed command was stopped is tallied as a sandbox refusal for RELIABILITY.md, and
each has an unsandboxed control showing the same command succeeds without the sandbox.

The homes live under /var/tmp, not /tmp: the sandbox's fresh /tmp would hide anything under
/tmp whatever the rest of the policy says, and the test must exercise the rest.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.core.settings import ExecConfig
from picobot_tui.core.tools.exec.sandbox import hidden_dirs, sandbox_status, toolchain_dirs
from tests.headless.conftest import read_messages
from tests.reliability.fuzz import tally
from tests.reliability.support import KEY, Proc, Router, session_paths, write_config
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

HAVE_BWRAP = sandbox_status(ExecConfig(sandbox="bwrap")).active
needs_bwrap = pytest.mark.skipif(
    not HAVE_BWRAP, reason="bwrap (bubblewrap) is not installed or does not work; CI installs it"
)
SECRET = "HOME-SECRET-5d1c0a77"
pytestmark = pytest.mark.e2e


@pytest.fixture
def place() -> Iterator[Path]:
    """A scratch directory outside /tmp (see the module docstring)."""
    base = Path("/var/tmp") if os.access("/var/tmp", os.W_OK) else Path(tempfile.gettempdir())
    path = Path(tempfile.mkdtemp(prefix="picobot-sandbox-", dir=base))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def demo_home(pb: Path, workspace: Path | None = None, **exec_cfg: Any) -> Path:
    """A PICOBOT_HOME whose config holds KEY, with the guard off and exec as given."""
    pb.mkdir(parents=True, exist_ok=True)
    (pb / "workspace").mkdir(exist_ok=True)  # where the run starts: its default workspace
    defaults: dict[str, Any] = {"model": "demo"}
    if workspace is not None:
        defaults["workspace"] = str(workspace)
    config = {
        "agents": {"defaults": defaults},
        "providers": {"openai": {"apiKey": KEY}},
        "tools": {"restrictToWorkspace": False, "exec": exec_cfg},
    }
    (pb / "config.json").write_text(json.dumps(config))
    return pb


def run_exec(pb: Path, command: str, **env: str) -> str:
    """`picobot agent -m "run COMMAND" --yes` with the demo model; the exec result stored."""
    p = Proc(pb, ["agent", "-m", f"run {command}", "--yes"], **env)
    assert p.finish(timeout=120) == 0, p.stderr
    [path] = session_paths(pb)
    results = [m["content"] for m in read_messages(path) if m.get("role") == "tool"]
    assert len(results) == 1, results
    return results[0]


def home_layout(place: Path) -> dict[str, Path]:
    home = place / "home"
    home.mkdir()
    (home / "secret.txt").write_text(SECRET)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text(SECRET)
    outside = place / "outside"
    outside.mkdir()
    return {"home": home, "outside": outside, "pb": place / "pb"}


PROBE = (
    'echo "home:[$(ls -A "$HOME")]"; cat "$HOME/secret.txt" "$HOME/.ssh/id_ed25519"; '
    'cat "$PICOBOT_HOME/config.json"; echo "root:[$(ls -A /root)]"; '
    "echo written > made.txt && cat made.txt"
)


@needs_bwrap
def test_sandbox_hides_home_and_picobot_home_and_keeps_the_workspace_writable(place) -> None:
    L = home_layout(place)
    pb = demo_home(L["pb"])  # workspace: the default, the directory it runs in
    out = run_exec(pb, PROBE, HOME=str(L["home"]))
    assert "home:[]" in out, out
    assert SECRET not in out and KEY not in out
    assert out.count("No such file or directory") == 3, out
    # /root is empty but for the toolchains on PATH (pyenv, rustup, ...), shown read-only.
    tools = {d.parts[2] for d in toolchain_dirs(hidden_dirs()) if d.parts[1:2] == ("root",)}
    inside = out.split("root:[", 1)[1].split("]", 1)[0].split()
    assert set(inside) <= tools, (inside, tools)
    assert set(os.listdir("/root")) - tools, "nothing private in /root to hide on this machine"
    assert "written" in out
    assert (pb / "workspace" / "made.txt").read_text() == "written\n"
    for _ in range(4):
        tally("sandbox refusals: hidden files (home, ~/.ssh, ~/.picobot, /root)")


@needs_bwrap
def test_the_projects_toolchain_still_runs_in_the_sandbox(place) -> None:
    """`python` on PATH (pyenv under /root here, a venv elsewhere) is shown read-only, with
    the packages the project installed."""
    pb = demo_home(place / "pb")
    out = run_exec(pb, "python -c 'import bashlex, pytest; print(\"toolchain ok\")'")
    assert "toolchain ok" in out, out


@needs_bwrap
def test_a_virtualenv_under_tmp_still_runs_in_the_sandbox(place, tmp_path) -> None:
    """A virtualenv made in /tmp, run by its path (PATH holds its `bin`, no $VIRTUAL_ENV): the
    fresh /tmp hid its packages (`ModuleNotFoundError`, seen in a CI run from /tmp)."""
    venv = Path(tempfile.mkdtemp(prefix="picobot-venv-", dir="/tmp"))
    try:
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
        )
        [site] = venv.glob("lib/python*/site-packages")
        (site / "picobot_probe_mod.py").write_text("WHERE = 'the venv in /tmp'\n")
        pb = demo_home(place / "pb")
        path = f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"
        command = "python -c 'import picobot_probe_mod as m; print(m.WHERE)'"
        out = run_exec(pb, command, PATH=path, VIRTUAL_ENV="")
        assert "the venv in /tmp" in out, out
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def test_unsandboxed_control_reads_the_same_files(place) -> None:
    L = home_layout(place)
    pb = demo_home(L["pb"], sandbox="none")
    out = run_exec(pb, PROBE, HOME=str(L["home"]))
    assert SECRET in out and "secret.txt" in out  # the command does reach them unsandboxed
    assert "[REDACTED]" in out  # config.json was read; its key masked by the scrubber


@needs_bwrap
def test_workspace_that_is_home_keeps_picobot_home_hidden(place) -> None:
    """The default layout of a user who points the workspace at $HOME: ~/.picobot inside it
    stays hidden (hidden again after the workspace is bound)."""
    L = home_layout(place)
    pb = demo_home(L["home"] / ".picobot", workspace=L["home"])
    out = run_exec(pb, "ls -A; cat .picobot/config.json; echo ok > w.txt", HOME=str(L["home"]))
    assert "secret.txt" in out  # the workspace (= $HOME) is visible
    assert "No such file or directory" in out and KEY not in out and "apiKey" not in out
    assert (L["home"] / "w.txt").read_text() == "ok\n"
    tally("sandbox refusals: ~/.picobot inside the workspace")


@needs_bwrap
def test_writing_outside_the_workspace_fails(place) -> None:
    L = home_layout(place)
    pb = demo_home(L["pb"])
    tag = place.name
    targets = [
        Path(f"/etc/{tag}"),
        Path(f"/usr/{tag}"),
        L["outside"] / "new.txt",
        L["home"] / "planted.txt",  # lands in the empty tmpfs over $HOME, thrown away
        Path(f"/tmp/{tag}"),  # lands in the sandbox's own /tmp, thrown away
    ]
    command = "; ".join(f"echo x > {t} && echo WROTE-{i}" for i, t in enumerate(targets))
    out = run_exec(pb, command, HOME=str(L["home"]))
    for t in targets:
        assert not t.exists(), t
        tally("sandbox refusals: writes outside the workspace")
    assert out.count("Read-only file system") == 3, out
    assert not any(f"WROTE-{i}" in out for i in range(3)), out


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    s.setblocking(False)
    try:
        yield s
    finally:
        s.close()


def _accepted(s: socket.socket) -> bool:
    try:
        conn, _ = s.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


NET = "bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' 2>/dev/null && echo CONNECTED || echo NO-NET"


@needs_bwrap
def test_network_is_unreachable_in_the_sandbox(place, listener) -> None:
    pb = demo_home(place / "pb")
    out = run_exec(pb, NET.format(port=listener.getsockname()[1]))
    assert "NO-NET" in out and "CONNECTED" not in out, out
    assert not _accepted(listener)
    tally("sandbox refusals: network connections (host loopback)")


@needs_bwrap
def test_network_true_lets_the_sandbox_connect(place, listener) -> None:
    pb = demo_home(place / "pb", network=True)
    out = run_exec(pb, NET.format(port=listener.getsockname()[1]))
    assert "CONNECTED" in out, out
    assert _accepted(listener)


def test_sandbox_bwrap_without_bwrap_is_refused_with_how_to_install(place) -> None:
    pb = demo_home(place / "pb", sandbox="bwrap")
    bin_dir = place / "bin"  # a PATH with a shell but no bwrap
    bin_dir.mkdir()
    for tool in ("sh", "cat", "touch"):
        if found := shutil.which(tool):
            (bin_dir / tool).symlink_to(found)
    out = run_exec(pb, "touch ran.txt", PATH=str(bin_dir))
    assert out.startswith("Error: command refused"), out
    assert 'tools.exec.sandbox is "bwrap"' in out and "install bubblewrap" in out
    assert not (pb / "workspace" / "ran.txt").exists()
    tally("sandbox refusals: sandbox=bwrap without bwrap")


def test_auto_without_bwrap_falls_back_to_running_unsandboxed(place) -> None:
    pb = demo_home(place / "pb")
    bin_dir = place / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "cat", "touch"):
        if found := shutil.which(tool):
            (bin_dir / tool).symlink_to(found)
    L = home_layout(place)
    out = run_exec(
        pb, 'cat "$HOME/secret.txt"; touch ran.txt', PATH=str(bin_dir), HOME=str(L["home"])
    )
    assert SECRET in out and (pb / "workspace" / "ran.txt").exists()
    log = (pb / "data" / "logs" / "picobot.log").read_text()
    assert "exec runs unsandboxed" in log and "bwrap (bubblewrap) is not installed" in log


# -- nothing outlives the call, or picobot (point 11) ---------------------------------------


def _procs_with(mark: str) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if mark.encode() in argv and state not in ("Z", "X"):
            out.append(int(name))
    return out


def _wait(condition, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return bool(condition())


MODES = ["none", pytest.param("bwrap", marks=needs_bwrap)]
LEAVERS = "setsid sleep {m} > /dev/null 2>&1 & nohup sleep {m} > /dev/null 2>&1 & (sleep {m} &)"


@pytest.mark.parametrize("mode", MODES)
def test_what_a_command_leaves_running_is_gone_when_the_call_ends(place, mode) -> None:
    mark = f"4{os.getpid() % 1000}.{len(mode)}1"
    pb = demo_home(place / "pb", sandbox=mode)
    out = run_exec(pb, LEAVERS.format(m=mark) + "; echo started")
    assert "started" in out
    assert _wait(lambda: not _procs_with(mark)), _procs_with(mark)


@pytest.mark.parametrize("mode", MODES)
def test_what_a_command_started_dies_with_a_killed_picobot(place, mode) -> None:
    mark, hold = f"4{os.getpid() % 1000}.{len(mode)}2", f"4{os.getpid() % 1000}.{len(mode)}3"
    pb = demo_home(place / "pb", sandbox=mode)
    p = Proc(pb, ["agent", "-m", f"run {LEAVERS.format(m=mark)}; sleep {hold}", "--yes"])
    try:
        assert _wait(lambda: len(_procs_with(mark)) == 3 and _procs_with(hold), 60), p.stderr
        p.popen.send_signal(signal.SIGKILL)
        p.finish(timeout=30)
        assert _wait(lambda: not _procs_with(mark) and not _procs_with(hold)), _procs_with(
            mark
        ) + _procs_with(hold)
    finally:
        if p.popen.poll() is None:
            p.popen.kill()
            p.finish()
        for pid in _procs_with(mark) + _procs_with(hold):  # never leave them behind
            os.kill(pid, signal.SIGKILL)


# -- the environment (point 6) ----------------------------------------------------------------

OTHER_SECRETS = {
    "AWS_SECRET_ACCESS_KEY": "aws-SECRET-wJalrXUtnFEMI-K7MDENG",
    "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
    "GITHUB_TOKEN": "ghp_SECRETtoken0123456789abcdefABCDEF",
    "DATABASE_URL": "postgres://app:db-SECRET-pw@db.internal/app",
    "MY_SERVICE_PASSWORD": "pw-SECRET-hunter2-0987",
    "HF_TOKEN": "hf_SECRETabcdefghijklmnopqrstuvwxyz",
}
ENV_KEY = "sk-env-OPENAI-SECRET-a1b2c3d4e5f6a7b8"


def _leak_run(place: Path, env_setting: Any, sandbox: str) -> tuple[str, str]:
    home = place / f"pb-{sandbox}-{env_setting if isinstance(env_setting, str) else 'list'}"
    router = Router()
    command = "printenv OPENAI_API_KEY | rev; printenv CONFIG_COPY | rev; env"
    router.add("e", [tool_call_reply("exec", {"command": command}, id="x1"), text_reply("done")])
    with OpenAITestServer(default=router) as server:
        write_config(home, server.url)
        config = json.loads((home / "config.json").read_text())
        config["tools"] = {"exec": {"env": env_setting, "sandbox": sandbox}}
        (home / "config.json").write_text(json.dumps(config))
        env = {"OPENAI_API_KEY": ENV_KEY, "CONFIG_COPY": KEY, **OTHER_SECRETS}
        p = Proc(home, ["agent", "-m", "e: show env", "--yes"], **env)
        assert p.finish(timeout=120) == 0, p.stderr
    sent = json.dumps(router.of("e"))
    stored = "\n".join(f.read_text() for f in session_paths(home))
    return sent, stored


SECRET_VALUES = [KEY, ENV_KEY, *OTHER_SECRETS.values()]


@pytest.mark.parametrize("sandbox", MODES)
def test_exec_environment_carries_no_credentials(place, sandbox) -> None:
    """`printenv OPENAI_API_KEY | rev` and `env`: neither the session nor any provider request
    holds a key, reversed or not (the scrubber cannot mask a reversed key: only a clean
    environment keeps it out)."""
    sent, stored = _leak_run(place, "clean", sandbox)
    assert '"role": "tool"' in sent and "PATH=" in sent  # env really ran and was sent
    for value in SECRET_VALUES:
        for text, where in ((sent, "provider requests"), (stored, "session file")):
            assert value not in text, (value, where)
            assert value[::-1] not in text, (value[::-1], where)
        tally("secrets planted in exec's environment (found: 0)")


def test_env_inherit_passes_them_all_control(place) -> None:
    """The control: with `env: "inherit"` the reversed key does reach the provider."""
    sent, _ = _leak_run(place, "inherit", "none")
    assert ENV_KEY[::-1] in sent and KEY[::-1] in sent


def test_env_list_passes_only_the_names_given(place) -> None:
    sent, _ = _leak_run(place, ["GITHUB_TOKEN"], "none")
    assert "GITHUB_TOKEN=[REDACTED]" in sent or OTHER_SECRETS["GITHUB_TOKEN"] in sent
    assert ENV_KEY[::-1] not in sent and OTHER_SECRETS["AWS_SECRET_ACCESS_KEY"] not in sent
