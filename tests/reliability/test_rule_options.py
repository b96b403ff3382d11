"""Attacks on saved exec prefix rules through the real `picobot` console script (issue 21,
point 2): under rules picobot itself offered (`exec(git grep:*)`, `exec(git log:*)`,
`exec(make test:*)`, …, saved the old way, to config.json), an option that runs another
program, loads another config or plugin, or writes a file is put to the user, which headless
without a terminal refuses. Every attack is shown real first: the same calls under `--yes`
plant every marker, overwrite the Makefile and `.git/config`. Then, with the rules, none
runs; the ordinary calls the rules are for still run unasked."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.headless.conftest import run_cli
from tests.reliability.support import Router, write_config
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

pytestmark = pytest.mark.e2e

RULES = [
    "exec(git grep:*)",
    "exec(git log:*)",
    "exec(git diff:*)",
    "exec(git show:*)",
    "exec(git rev-list:*)",
    "exec(git blame:*)",
    "exec(git fetch:*)",
    "exec(git ls-remote:*)",
    "exec(git:*)",  # a broad rule written by hand: options before the subcommand still ask
    "exec(make test:*)",
    "exec(npm test:*)",
    "exec(python -m pytest:*)",
    "exec(pip list:*)",
    "exec(pip:*)",  # by hand, like git:*
    "exec(sort:*)",
    "exec(kubectl get:*)",
]

# id -> (command, what shows it ran: a marker file made, or a watched file changed)
ATTACKS: dict[str, tuple[str, str]] = {
    # git grep -O: the matches are opened with the "pager" it names, through the shell.
    "g1": ("git grep -O'touch PWNED_g1' hello", "PWNED_g1"),
    "g2": ("git grep --open-files-in-pager='touch PWNED_g2' hello", "PWNED_g2"),
    "g3": ("git grep --open-files='touch PWNED_g3' hello", "PWNED_g3"),  # an abbreviation
    "g4": ("git grep -iO'touch PWNED_g4' hello", "PWNED_g4"),  # in a cluster of short flags
    # transports run the upload-pack program they are given.
    "t1": ("git fetch --upload-pack='touch PWNED_t1; git-upload-pack' .", "PWNED_t1"),
    "t2": ("git ls-remote --upload-pack='touch PWNED_t2; git-upload-pack' .", "PWNED_t2"),
    # before the subcommand, under `git:*`: -c sets any config, -C another repository's.
    "c1": ("git -c alias.pw='!touch PWNED_c1' pw", "PWNED_c1"),
    "c2": ("git -C other_c2 status", "PWNED_c2"),
    "c3": ("git --git-dir=other_c3/.git status", "PWNED_c3"),
    "c4": ("git config core.fsmonitor 'touch PWNED_c4'", ".git/config"),  # not a listed sub
    # make: another makefile, make code, another folder, another target, a variable.
    "m1": ("make test --eval='$(shell touch PWNED_m1)'", "PWNED_m1"),
    "m2": ("make test -E '$(shell touch PWNED_m2)'", "PWNED_m2"),
    "m3": ("make test -f evil_m3.mk", "PWNED_m3"),
    "m4": ("make test --file=evil_m4.mk", "PWNED_m4"),
    "m5": ("make test -C sub", "PWNED_m5"),
    "m6": ("make test other", "PWNED_m6"),
    "m7": ("make test 'MSG=$(shell touch PWNED_m7)'", "PWNED_m7"),
    "m8": ("make test '--eval=$(shell touch PWNED_m8)'", "PWNED_m8"),
    # npm test: npm reads any --name=value as config; the rest goes to the script.
    "n1": ("npm test --script-shell=./evil_n1.sh", "PWNED_n1"),
    "n2": ("npm test --prefix=sub", "PWNED_n2"),
    # pytest: a plugin, another config (its addopts), a warning category's module, writes.
    "p1": ("python -m pytest -p evil_p1 --co -q", "PWNED_p1"),
    "p2": ("python -m pytest -pevil_p2 --co -q", "PWNED_p2"),
    "p3": ("python -m pytest -c evil.ini --co -q", "PWNED_p3"),
    "p4": ("python -m pytest -W error::evil_p4.W --co -q", "PWNED_p4"),
    "p5": ("python -m pytest --junitxml=w_p5.txt --co -q", "w_p5.txt"),
    "p6": ("python -m pytest --basetemp=keep tests_p6.py -q", "keep/precious.txt"),
    # pip: another interpreter (before the subcommand, under `pip:*`); a log to any file.
    "i1": ("pip --python=./evil_i1.sh list", "PWNED_i1"),
    "i2": ("pip list --log=w_i2.txt", "w_i2.txt"),
    # sort -o writes the file it names.
    "s1": ("sort -o w_s1.txt hello.txt", "w_s1.txt"),
    # kubectl --kubeconfig: its exec credential plugin runs before any request.
    "k1": ("kubectl get pods --kubeconfig=evil-kube.yaml", "PWNED_k1"),
    # --output writes the diff to any file: the Makefile, with or without "=".
    "d1": ("git diff --output=Makefile", "Makefile"),
    "d2": ("git diff --output w_d2.txt", "w_d2.txt"),
    "d4": ("git show --output=w_d4.txt", "w_d4.txt"),
    # rev-list and blame take the diff options too (git 2.39 writes the file)
    "d5": ("git rev-list HEAD --output=w_d5.txt", "w_d5.txt"),
    "d6": ("git blame hello.txt --output=w_d6.txt", "w_d6.txt"),
    # last: git log --output plants core.fsmonitor in .git/config, which runs at the
    # user's next `git status`.
    "l1": (
        "git log -1 --output=.git/config '--format=[core]%n  fsmonitor = touch PWNED_l1'",
        ".git/config",
    ),
}
ALLOWED = {
    "ok1": "git grep hello",
    "ok2": "git log --oneline -1",
    "ok3": "git diff --stat",
    "ok4": "make test",
    "ok5": "npm test --silent",
    "ok6": "python -m pytest --version",
    "ok7": "pip --version",
    "ok8": "sort hello.txt",
    "ok9": "git status --short",
}
WATCHED = (
    "Makefile",
    ".git/config",
    "keep/precious.txt",
    *(f"w_{i}.txt" for i in ("d2", "d4", "d5", "d6", "p5", "i2", "s1")),
)


def _git(ws: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x", *args],
        cwd=ws,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


def _exe(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def _workspace(ws: Path) -> None:
    """A git repository with a Makefile, a package.json and the attacks' helpers."""
    ws.mkdir(parents=True)
    (ws / "hello.txt").write_text("hello world\n")
    (ws / "Makefile").write_text("test:\n\t@echo make tests ok $(MSG)\nother:\n\t@touch PWNED_m6\n")
    for i in ("m3", "m4"):
        (ws / f"evil_{i}.mk").write_text(f"test:\n\t@touch PWNED_{i}\n")
    for i in ("d2", "d4", "d5", "d6", "p5", "i2", "s1"):
        (ws / f"w_{i}.txt").write_text("the user's file\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "Makefile").write_text("test:\n\t@touch ../PWNED_m5\n")
    (ws / "package.json").write_text(
        json.dumps({"name": "w", "version": "1.0.0", "scripts": {"test": "echo npm tests ok"}})
    )
    (ws / "sub" / "package.json").write_text(
        json.dumps({"name": "s", "version": "1.0.0", "scripts": {"test": "touch ../PWNED_n2"}})
    )
    _exe(ws / "evil_n1.sh", '#!/bin/sh\ntouch PWNED_n1\nexec /bin/sh "$@"\n')
    for i in ("p1", "p2", "p3"):
        (ws / f"evil_{i}.py").write_text(f"open('PWNED_{i}', 'w').close()\n")
    (ws / "evil.ini").write_text("[pytest]\naddopts = -p evil_p3\n")
    (ws / "evil_p4.py").write_text("open('PWNED_p4', 'w').close()\nclass W(Warning): ...\n")
    (ws / "tests_p6.py").write_text("def test_tmp(tmp_path):\n    assert tmp_path.exists()\n")
    (ws / "keep").mkdir()
    (ws / "keep" / "precious.txt").write_text("the user's file\n")
    _exe(ws / "evil_i1.sh", "#!/bin/sh\ntouch PWNED_i1\n")
    _exe(ws / "evil_k1.sh", "#!/bin/sh\ntouch PWNED_k1\nexit 1\n")
    (ws / "evil-kube.yaml").write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        "clusters: [{name: x, cluster: {server: 'https://127.0.0.1:9'}}]\n"
        "contexts: [{name: x, context: {cluster: x, user: x}}]\n"
        "users: [{name: x, user: {exec: {apiVersion: client.authentication.k8s.io/v1,"
        " command: ./evil_k1.sh, interactiveMode: Never}}}]\n"
    )
    _git(ws, "init", "-q")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "init")
    (ws / "hello.txt").write_text("hello world, changed\n")  # so `git diff` has something
    for i in ("c2", "c3"):  # other repositories whose config runs a program at `git status`
        other = ws / f"other_{i}"
        other.mkdir()
        _git(other, "init", "-q")
        _git(other, "config", "core.fsmonitor", f"touch {ws}/PWNED_{i}; false")


def _home(tmp_path: Path, name: str, url: str) -> Path:
    home = tmp_path / name
    path = write_config(home, url, maxToolIterations=60)
    config = json.loads(path.read_text())
    config["tools"] = {"alwaysAllow": RULES, "exec": {"timeout": 20}}
    config["checkpoints"] = {"enabled": False}  # not what is tested: ~1 s less per call
    path.write_text(json.dumps(config))
    _workspace(home / "workspace")
    return home


def _results(bodies: list[dict]) -> dict[str, str]:
    """tool_call_id -> result, over every request (a long run's history is trimmed)."""
    return {
        m["tool_call_id"]: m["content"]
        for body in bodies
        for m in body["messages"]
        if m.get("role") == "tool"
    }


def _snapshot(ws: Path) -> dict[str, str]:
    return {name: (ws / name).read_text() for name in WATCHED if (ws / name).exists()}


def _run(tmp_path: Path, name: str, calls: dict[str, str], *args: str) -> tuple[Path, dict]:
    """One `picobot agent -m` whose model calls exec with each command in turn: (the
    picobot home, the result of the run and what each call returned)."""
    router = Router()
    router.add(
        name,
        [tool_call_reply("exec", {"command": c}, id=i) for i, c in calls.items()]
        + [text_reply(f"{name}: done")],
    )
    with OpenAITestServer(default=router) as server:
        home = _home(tmp_path, name, server.url)
        done = run_cli(home, "agent", *args, "-m", f"{name}: run them", timeout=240)
    assert done.returncode == 0, done.stderr
    return home, {"stderr": done.stderr, "results": _results(router.of(name))}


NEEDS = pytest.mark.skipif(
    not all(shutil.which(p) for p in ("git", "make", "npm", "kubectl")),
    reason="git, make, npm, kubectl",
)


@NEEDS
def test_an_option_that_runs_a_program_or_writes_a_file_is_asked_under_a_rule(tmp_path) -> None:
    pristine = tmp_path / "pristine"
    _workspace(pristine)
    before = _snapshot(pristine)
    calls = {**{i: c for i, (c, _) in ATTACKS.items()}, **ALLOWED}
    home, run = _run(tmp_path, "rules", calls)
    ws = home / "workspace"
    assert sorted(p.name for p in ws.glob("PWNED*")) == []
    assert _snapshot(ws) == before
    results = run["results"]
    assert set(results) == set(calls)
    refused = [i for i in ATTACKS if results[i].startswith("Denied")]
    assert refused == list(ATTACKS), {i: results[i][:200] for i in ATTACKS if i not in refused}
    for call_id in ALLOWED:  # what the rules are for still runs unasked
        assert not results[call_id].startswith("Denied"), (call_id, results[call_id])
    assert "make tests ok" in results["ok4"] and "npm tests ok" in results["ok5"]
    assert run["stderr"].count("no terminal to ask for approval") == len(ATTACKS)
    # The user's next `git status` runs no planted command.
    _git(ws, "status")
    assert not (ws / "PWNED_l1").exists()


@pytest.mark.slow  # ~25 s: 36 real commands, six of them a Python start-up in the sandbox
@NEEDS
def test_every_attack_is_real(tmp_path) -> None:
    """The control of the test above: under --yes each call does what its comment says."""
    pristine = tmp_path / "pristine"
    _workspace(pristine)
    before = _snapshot(pristine)
    home, run = _run(tmp_path, "yes", {i: c for i, (c, _) in ATTACKS.items()}, "--yes")
    ws = home / "workspace"
    after = _snapshot(ws)
    for call_id, (_, mark) in ATTACKS.items():
        shown = (call_id, mark, run["results"][call_id][:300])
        assert (after.get(mark) != before[mark]) if mark in WATCHED else (ws / mark).exists(), shown
    _git(ws, "status")  # the user's next `git status` runs what `git log --output` planted
    assert (ws / "PWNED_l1").exists()
