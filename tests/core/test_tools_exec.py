"""exec: exit codes, timeout, output cap, deny patterns, cancellation, and nothing it starts
outliving the call (point 11 of issue 10), sandboxed (bwrap) and unsandboxed (the reaper)."""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
from pathlib import Path

import pytest

from picobot_tui.core.settings import ExecConfig, ToolsConfig
from picobot_tui.core.tools.base import ToolContext, ToolError
from picobot_tui.core.tools.exec.env import clean_env, exec_env, is_secret_name
from picobot_tui.core.tools.exec.guard import check_denied
from picobot_tui.core.tools.exec.sandbox import bwrap_argv, sandbox_status, toolchain_dirs
from picobot_tui.core.tools.registry import ToolRegistry, default_registry

HAVE_BWRAP = sandbox_status(ExecConfig(sandbox="bwrap")).active
NO_BWRAP = "bwrap (bubblewrap) is not installed or does not work here; CI installs it"
MODES = [
    "none",
    pytest.param("bwrap", marks=pytest.mark.skipif(not HAVE_BWRAP, reason=NO_BWRAP)),
]
_marks = itertools.count(1)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    return w


def make(ws: Path, **tools_kw) -> ToolRegistry:
    return default_registry(ToolContext(ws, ToolsConfig(**tools_kw)))


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in {"Z", "X"}


async def wait_gone(pid: int) -> bool:
    """Wait (bounded) for a killed process to disappear; True when it did."""
    for _ in range(200):
        if not alive(pid):
            return True
        await asyncio.sleep(0.025)
    return False


async def wait_for_file(path: Path) -> str:
    for _ in range(400):
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.025)
    raise AssertionError(f"{path} never appeared")


async def test_exit_code_zero_and_output(ws):
    r = await make(ws).execute("exec", {"command": "echo hello; echo oops >&2"})
    assert r.ok and r.status == "ok"
    assert r.content.splitlines() == ["exit code: 0", "hello", "oops"]


async def test_nonzero_exit_is_an_error_result_with_output(ws):
    r = await make(ws).execute("exec", {"command": "echo partial; exit 3"})
    assert not r.ok and r.status == "error"
    assert r.content.splitlines() == ["exit code: 3", "partial"]


async def test_runs_in_the_workspace_without_stdin(ws):
    (ws / "marker").write_text("")
    r = await make(ws).execute("exec", {"command": "ls; pwd; cat; echo done"})
    assert r.ok
    assert "marker" in r.content
    assert str(ws.resolve()) in r.content
    assert r.content.rstrip().endswith("done")  # `cat` read EOF from /dev/null


async def test_no_output(ws):
    r = await make(ws).execute("exec", {"command": "true"})
    assert r.content == "exit code: 0\n(no output)"


def marker() -> str:
    """A `sleep` duration no other process uses: found in /proc/*/cmdline, in any namespace."""
    return f"{3000 + os.getpid() % 1000}.{next(_marks):04d}"


def procs_with(mark: str) -> list[int]:
    """Host pids of live processes whose command line holds `mark`."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if mark.encode() in argv and alive(int(name)):
            out.append(int(name))
    return out


async def wait_no_procs(mark: str) -> list[int]:
    """Wait (bounded) until no process carries `mark`; return the ones still there."""
    for _ in range(200):
        left = procs_with(mark)
        if not left:
            return []
        await asyncio.sleep(0.025)
    return procs_with(mark)


async def wait_procs(mark: str) -> list[int]:
    for _ in range(400):
        if found := procs_with(mark):
            return found
        await asyncio.sleep(0.025)
    raise AssertionError(f"no process with {mark} ever appeared")


# Ways a command leaves something behind: plain, its own session, nohup, a double fork.
ESCAPES = {
    "background": "sleep {m} &",
    "setsid": "setsid sleep {m} > /dev/null 2>&1 &",
    "setsid-f": "setsid -f sleep {m} > /dev/null 2>&1",
    "nohup": "nohup sleep {m} > /dev/null 2>&1 &",
    "double-fork": "(sleep {m} > /dev/null 2>&1 &)",
    "daemon-keeps-pipe": "(setsid sleep {m} &) ; echo started",
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", list(ESCAPES), ids=list(ESCAPES))
async def test_nothing_outlives_the_call(ws, mode, how):
    m = marker()
    reg = make(ws, exec=ExecConfig(sandbox=mode))
    r = await reg.execute("exec", {"command": ESCAPES[how].format(m=m) + "\necho done"})
    assert r.ok, r.content
    assert "done" in r.content
    assert await wait_no_procs(m) == []
    if mode == "none":  # the reaper says so; in bwrap the kernel ends them silently
        assert "background processes it left were killed" in r.content


@pytest.mark.parametrize("mode", MODES)
async def test_timeout_kills_everything_it_started(ws, mode):
    m = marker()
    cmd = f"setsid sleep {m} & sleep {m} & echo started; wait"
    r = await make(ws, exec=ExecConfig(sandbox=mode)).execute(
        "exec", {"command": cmd, "timeout": 0.5}
    )
    assert not r.ok
    assert "timed out after 0.5 s" in r.content and "started" in r.content
    assert await wait_no_procs(m) == []


async def test_timeout_from_config(ws):
    r = await make(ws, exec=ExecConfig(timeout=0.3)).execute("exec", {"command": "sleep 5"})
    assert not r.ok
    assert "timed out after 0.3 s" in r.content


@pytest.mark.parametrize("mode", MODES)
async def test_cancellation_kills_everything_and_reraises(ws, mode):
    m = marker()
    reg = make(ws, exec=ExecConfig(sandbox=mode))
    cmd = f"setsid sleep {m} & nohup sleep {m} > /dev/null 2>&1 & wait"
    task = asyncio.create_task(reg.execute("exec", {"command": cmd}))
    for _ in range(400):
        if len(procs_with(m)) == 2:
            break
        await asyncio.sleep(0.025)
    assert len(procs_with(m)) == 2
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_no_procs(m) == []


def _open_pipes() -> list[asyncio.ReadTransport]:
    import gc

    return [
        o
        for o in gc.get_objects()
        if isinstance(o, asyncio.ReadTransport)
        and o.get_extra_info("pipe") is not None
        and not o.is_closing()
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_a_cancelled_command_leaves_no_pipe_open(ws, mode):
    """Round three: SIGTERM during exec printed "RuntimeError: Event loop is closed" under
    load: the output pipe's transport was left open on cancel and closed by the garbage
    collector after asyncio.run had closed the loop."""
    before = _open_pipes()
    task = asyncio.create_task(
        make(ws, exec=ExecConfig(sandbox=mode)).execute(
            "exec", {"command": "touch ran && sleep 30"}
        )
    )
    await wait_for_file_exists(ws / "ran")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [p for p in _open_pipes() if p not in before] == []


async def wait_for_file_exists(path: Path) -> None:
    for _ in range(800):
        if path.exists():
            return
        await asyncio.sleep(0.025)
    raise AssertionError(f"{path} never appeared")


async def test_unsandboxed_shell_pids_are_real_and_reaped(ws):
    """Unsandboxed, $$ and $! are host pids (no PID namespace): both gone after a timeout."""
    cmd = "sleep 30 & echo $! > child.pid; echo $$ > shell.pid; echo started; wait"
    reg = make(ws, exec=ExecConfig(sandbox="none"))
    r = await reg.execute("exec", {"command": cmd, "timeout": 0.5})
    assert "timed out" in r.content
    child, shell = int((ws / "child.pid").read_text()), int((ws / "shell.pid").read_text())
    assert await wait_gone(shell)
    assert await wait_gone(child)


@pytest.mark.skipif(shutil.which("setsid") is None, reason="util-linux setsid is missing")
async def test_exit_code_of_the_shell_is_reported_through_the_reaper(ws):
    reg = make(ws, exec=ExecConfig(sandbox="none"))
    r = await reg.execute("exec", {"command": "setsid sleep 30 & exit 7"})
    assert r.content.splitlines()[0].startswith("exit code: 7")


async def test_output_cap_keeps_head_and_tail(ws):
    reg = make(ws, exec=ExecConfig(max_output_chars=1000))
    r = await reg.execute("exec", {"command": "seq 1 20000"})
    assert r.ok
    lines = r.content.splitlines()
    assert lines[0] == "exit code: 0"
    assert lines[1] == "1"
    assert lines[-1] == "20000"
    total = sum(len(f"{i}\n") for i in range(1, 20001))
    assert f"chars of output cut; {total} in all" in r.content
    assert len(r.content) < 1200


async def test_output_cap_follows_the_result_cap(ws):
    # exec cuts inside toolResultMaxChars so the tail (usually the error) is not lost.
    reg = make(ws, tool_result_max_chars=600, exec=ExecConfig(max_output_chars=20000))
    r = await reg.execute("exec", {"command": "seq 1 5000; echo THE-END"})
    assert "THE-END" in r.content
    assert "[truncated" not in r.content


async def test_ansi_and_controls_are_stripped(ws):
    r = await make(ws).execute(
        "exec", {"command": r"printf '\033[31mred\033[0m \033]0;title\007ok\r\n\001'"}
    )
    assert r.ok
    assert r.content.rstrip("\n") == "exit code: 0\nred ok"


async def test_binary_output_is_decoded_safely(ws):
    r = await make(ws).execute("exec", {"command": r"printf '\377\376abc\000'"})
    assert r.ok
    assert "abc" in r.content and "\x00" not in r.content


def test_preview_shows_the_command(ws):
    text = make(ws).preview("exec", {"command": "make test", "timeout": 5})
    assert text.splitlines()[0] == "$ make test"
    assert "timeout 5 s" in text


DENIED = [
    "rm -rf /",
    "rm -rf /*",
    "rm -fr ~",
    "rm -rf ~/",
    "rm -r -f $HOME",
    'rm -rf "$HOME"',
    "sudo rm -rf --no-preserve-root /",
    "cd build && rm -rf /",
    "mkfs.ext4 /dev/sda1",
    "sudo mkfs -t ext4 /dev/sdb",
    "dd if=/dev/zero of=/dev/sda bs=1M",
    ":(){ :|:& };:",
    "bomb(){ bomb|bomb& }; bomb",
    "shutdown -h now",
    "sudo reboot",
    "echo x; poweroff",
    "systemctl reboot",
    "echo garbage > /dev/sda",
    "cat x >/dev/nvme0n1",
    "chmod -R 777 /",
    "sudo chown -R nobody /",
    "git push --force origin main",
    "git push -f",
    "git push origin main -f",
]


@pytest.mark.parametrize("command", DENIED)
async def test_deny_patterns_refuse_even_unrestricted(ws, command):
    reg = make(ws, restrict_to_workspace=False)
    r = await reg.execute("exec", {"command": command})
    assert not r.ok
    assert r.content.startswith("Error: command refused")
    assert "deny pattern" in r.content


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",
        "rm -rf ./dist/*",
        "rm -f /tmp/x.txt",
        "echo shutdown",
        "grep reboot log.txt",
        "git push origin main",
        "git push --force-with-lease origin main",
        "git push --follow-tags",
        "git push origin main; rm -f x",
        "dd if=in.img of=out.img",
        "dd if=/dev/zero of=/dev/null count=1",
        "chmod -R 755 build/",
        "cat /dev/sda.log",
    ],
)
def test_ordinary_commands_are_not_denied(command):
    check_denied(command)


async def test_config_deny_patterns(ws):
    reg = make(ws, exec=ExecConfig(deny_patterns=[r"\bcurl\b"]))
    r = await reg.execute("exec", {"command": "curl -s https://example.com"})
    assert not r.ok
    assert "configured deny pattern" in r.content
    assert (await reg.execute("exec", {"command": "echo curly"})).ok


def test_invalid_config_deny_pattern_is_a_clear_error():
    with pytest.raises(ToolError, match="invalid regular expression"):
        check_denied("ls", ["(unclosed"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"command": ""}, "breaks minLength"),
        ({"command": "ls", "timeout": 0}, "exclusiveMinimum"),
        ({"command": "ls", "timeout": "5"}, "must be number"),
        ({"command": "   "}, "command is empty"),
        ({"command": "echo a\x00b"}, "NUL"),
    ],
)
async def test_bad_exec_arguments(ws, args, message):
    r = await make(ws).execute("exec", args)
    assert not r.ok
    assert message in r.content


async def test_missing_workspace_is_created(tmp_path):
    ws = tmp_path / "not-yet"
    r = await make(ws).execute("exec", {"command": "pwd"})
    assert r.ok and os.path.isdir(ws)


# -- the environment (point 6) --------------------------------------------------------------

CREDENTIAL_NAMES = [
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENROUTER_APIKEY",
    "GITHUB_TOKEN", "GH_TOKEN", "NPM_TOKEN", "HF_TOKEN", "SLACK_BOT_TOKEN",
    "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN", "AWS_PROFILE",
    "AZURE_CLIENT_SECRET", "GOOGLE_APPLICATION_CREDENTIALS", "MY_APP_SECRET",
    "DB_PASSWORD", "PGPASSWORD", "MYSQL_PWD_PASSWD", "STRIPE_SECRET_KEY", "SIGNING_KEY",
    "SSH_AUTH_SOCK", "XAUTHORITY", "VAULT_ADDR", "DOCKER_AUTH_CONFIG", "SENTRY_DSN",
    "PICOBOT_PROVIDERS__OPENAI__API_KEY", "GITLAB_PAT",
]  # fmt: skip
ORDINARY_NAMES = ["PATH", "HOME", "LANG", "TERM", "USER", "SHELL", "TZ", "VIRTUAL_ENV",
                  "PYTHONPATH", "EDITOR", "CI", "KEYBOARD_LAYOUT", "MONKEY", "GIT_AUTHOR_NAME",
                  "GIT_AUTHOR_EMAIL", "TOKENIZERS_PARALLELISM"]  # fmt: skip


@pytest.mark.parametrize("name", CREDENTIAL_NAMES)
def test_clean_env_drops_credentials_by_name(name):
    assert is_secret_name(name)
    assert name not in clean_env({name: "some-value-123456", "PATH": "/bin"})


@pytest.mark.parametrize("name", ORDINARY_NAMES)
def test_clean_env_keeps_ordinary_variables(name):
    assert not is_secret_name(name)
    assert clean_env({name: "/usr/bin:/bin"}) == {name: "/usr/bin:/bin"}


def test_clean_env_drops_by_value_and_by_shape():
    env = {
        "INNOCENT": "sk-config-key-0123456789",  # a config secret under any name
        "WRAPPED": "Bearer sk-config-key-0123456789",
        "COPY_OF_ENV_KEY": "ghp_abcdefghijklmnop",  # the value of a dropped variable
        "GITHUB_TOKEN": "ghp_abcdefghijklmnop",
        "DATABASE_URL": "postgres://app:pw@db/app",  # a URL with a password
        "HOMEPAGE": "https://example.com/a",  # a URL without one stays
        "SHORT": "abc",
    }
    out = clean_env(env, ["sk-config-key-0123456789", "tiny"])
    assert out == {"HOMEPAGE": "https://example.com/a", "SHORT": "abc"}


def test_exec_env_settings():
    environ = {"PATH": "/bin", "GITHUB_TOKEN": "ghp_x123456789", "OLDPWD": "/elsewhere"}
    clean = exec_env("clean", environ, (), "/ws")
    assert clean == {"PATH": "/bin", "PWD": "/ws"}
    assert exec_env("inherit", environ, (), "/ws") == {
        "PATH": "/bin", "GITHUB_TOKEN": "ghp_x123456789", "PWD": "/ws"
    }  # fmt: skip
    listed = exec_env(["GITHUB_TOKEN", "ABSENT"], environ, (), "/ws")
    assert listed == {"PATH": "/bin", "GITHUB_TOKEN": "ghp_x123456789", "PWD": "/ws"}


@pytest.mark.parametrize("mode", MODES)
async def test_exec_runs_with_the_clean_env(ws, monkeypatch, mode):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unit-ENVKEY-123456789")
    monkeypatch.setenv("LOOKS_HARMLESS", "cfg-secret-abcdefgh")
    ctx = ToolContext(ws, ToolsConfig(exec=ExecConfig(sandbox=mode)),
                      secrets=("cfg-secret-abcdefgh",))  # fmt: skip
    r = await default_registry(ctx).execute("exec", {"command": "env"})
    assert r.ok and "PATH=" in r.content
    assert "OPENAI_API_KEY" not in r.content and "LOOKS_HARMLESS" not in r.content
    assert "sk-unit-ENVKEY" not in r.content and "cfg-secret" not in r.content


# -- the sandbox's command line (point 12) ----------------------------------------------------


def test_bwrap_argv_hides_then_binds_then_hides_again(tmp_path):
    home = tmp_path / "home"
    ws = home / "proj"
    pb = ws / ".picobot"
    pb.mkdir(parents=True)
    argv = bwrap_argv("/usr/bin/bwrap", ws, network=False, hidden=[home, pb])
    # Under /tmp: the fresh /tmp already hides home; the workspace is bound; pb hidden again.
    assert argv[:5] == ["/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev"]
    bind = argv.index("--bind")
    assert argv[bind : bind + 3] == ["--bind", str(ws.resolve()), str(ws.resolve())]
    assert argv[bind + 3 : bind + 5] == ["--tmpfs", str(pb)]
    assert ["--tmpfs", str(home)] != argv[bind - 2 : bind]
    assert "--unshare-net" in argv and "--die-with-parent" in argv and "--unshare-pid" in argv
    assert argv[-3:] == ["--chdir", str(ws.resolve()), "--"]
    assert "--unshare-net" not in bwrap_argv("bwrap", ws, network=True, hidden=[])


def test_bwrap_argv_outside_tmp_hides_the_outer_dir_once(tmp_path):
    argv = bwrap_argv("bwrap", tmp_path, network=False,
                      hidden=[Path("/home"), Path("/root"), Path("/root/.picobot")])  # fmt: skip
    tmpfs = [argv[i + 1] for i, a in enumerate(argv) if a == "--tmpfs"]
    assert tmpfs == ["/tmp", "/home", "/root"]  # /root/.picobot is under /root already


def test_sandbox_status_modes(monkeypatch):
    assert not sandbox_status(ExecConfig(sandbox="none")).active
    monkeypatch.setenv("PATH", "/nonexistent")
    auto = sandbox_status(ExecConfig(sandbox="auto"))
    assert not auto.active and "not installed" in auto.reason and "unsandboxed" in auto.reason
    strict = sandbox_status(ExecConfig(sandbox="bwrap"))
    assert not strict.active and "install bubblewrap" in strict.reason


async def test_sandbox_bwrap_without_bwrap_refuses_to_run(ws, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    reg = make(ws, exec=ExecConfig(sandbox="bwrap"))
    r = await reg.execute("exec", {"command": "touch ran"})
    assert not r.ok and 'tools.exec.sandbox is "bwrap"' in r.content
    assert "install bubblewrap" in r.content and not (ws / "ran").exists()
    assert "refused: bwrap is not available" in reg.preview("exec", {"command": "touch ran"})


def test_toolchains_on_path_under_a_hidden_dir_are_shown_read_only(tmp_path):
    home = tmp_path / "home"
    for d in (".pyenv/shims", ".pyenv/versions/3.11/bin", ".local/bin", ".cargo/bin",
              ".rustup/toolchains", "venvs/x/bin", ".ssh"):  # fmt: skip
        (home / d).mkdir(parents=True)
    env = {
        "PATH": os.pathsep.join(
            [f"{home}/.pyenv/shims", f"{home}/.local/bin", f"{home}/.cargo/bin", "/usr/bin"]
        ),
        "VIRTUAL_ENV": f"{home}/venvs/x",
    }
    shown = toolchain_dirs([home], env)
    assert set(shown) == {home / ".pyenv", home / ".local/bin", home / ".cargo/bin",
                          home / ".rustup", home / "venvs/x"}  # fmt: skip
    assert not any(p.is_relative_to(home / ".ssh") for p in shown)


def test_every_provider_key_variable_is_kept_from_exec() -> None:
    from picobot_tui.core.shapes.providers import PROVIDER_ENV

    assert PROVIDER_ENV
    assert all(is_secret_name(var) for var in PROVIDER_ENV.values())
