"""exec's workspace guard (issue 10, point 10): it judges the words the shell will see.

Each escape spelling below is first shown to work in a real shell (dash as /bin/sh, or bash)
with no guard, then shown refused by exec with the guard on. ESCAPE_SPELLINGS is counted for
RELIABILITY.md (the reliability summary prints the tally).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from picobot_tui.core.settings import ExecConfig, ToolsConfig
from picobot_tui.core.tools.base import ToolContext, ToolError
from picobot_tui.core.tools.exec.confine import take_heredocs
from picobot_tui.core.tools.exec.guard import check_confined
from picobot_tui.core.tools.registry import default_registry
from tests.core.test_tools_paths import SECRET, layout, snapshot_outside
from tests.reliability.fuzz import fuzz, tally

__all__ = ["layout"]  # the fixture, reused

# layout: ws/link_out -> outside/ (secret.txt), ws/out_link (the name) -> outside/.
ESCAPE_SPELLINGS: dict[str, str] = {
    "backslash-slash": r"cat \{outside}/secret.txt",
    "quoted-dot": "cat '.'./outside/secret.txt",
    "escaped-dot": r"cat .\./outside/secret.txt",
    "double-quoted-dots": 'cat ".."/outside/secret.txt',
    "quoted-link-prefix": 'cat "o"ut_link/secret.txt',
    "escaped-link-letter": r"cat l\ink_out/secret.txt",
    "ansi-c-link": "cat $'out_link'/secret.txt",
    "line-continuation": "cat out_\\\nlink/secret.txt",
    "glob-question": "cat out_lin?/secret.txt",
    "glob-bracket": "cat out_lin[k]/secret.txt",
    "glob-star": "cat ou*_link/secret.txt",
    "glob-dotstar": "cat .*/outside/secret.txt",  # dash's .* matches ..
    "brace": "cat {out_link,x}/secret.txt",
    "pwd-strip-suffix": "cat ${PWD%/*}/outside/secret.txt",
    "pwd-strip-longest": "cat ${PWD%%/ws}/outside/secret.txt",
    "pwd-default": "cat ${NOPE:-..}/outside/secret.txt",
    "pwd-alternate": "cat ${PWD:+..}/outside/secret.txt",
    "dirname-pwd": "cat $(dirname $PWD)/outside/secret.txt",
    "dirname-pwd-backticks": "cat `dirname $PWD`/outside/secret.txt",
    "echo-subst-dots": 'cat "$(echo ..)"/outside/secret.txt',
    "realpath-link": "cat $(realpath out_link)/secret.txt",
    "pwd-subst-then-dots": "x=$(pwd)/..; cat $x/outside/secret.txt",
    "ansi-c-hex-dots": r"cat $'\x2e\x2e'/outside/secret.txt",
    "ansi-c-octal-dots": r"cat $'\056\056'/outside/secret.txt",
    "printf-subst": r"cat $(printf '\056\056')/outside/secret.txt",
    "var-dots": "d=..; cat $d/outside/secret.txt",
    "var-concat": "a=.; cat $a$a/outside/secret.txt",
    "var-link": "d=out_link; cat $d/secret.txt",
    "tilde-plus": "cat ~+/../outside/secret.txt",
    "cd-into-link": "cd out_link && cat secret.txt",
    "cd-var-link": "d=out_link; cd $d; cat secret.txt",
    "for-glob-link": "for d in out_*; do cat $d/secret.txt; done",
    "for-list-dots": "for d in . ..; do cat $d/outside/secret.txt; done",
    "read-var": "echo .. > d; read x < d; cat $x/outside/secret.txt",
    "eval-string": 'eval "cat ../outside/secret.txt"',
    "eval-escaped": r"eval cat \.\./outside/secret.txt",
    "sh-c-quoted-dots": "sh -c 'cat \"..\"/outside/secret.txt'",
    "bash-c-glob": 'bash -c "cat out_lin?/secret.txt"',
    "sh-c-nested-subst": "sh -c 'cat $(dirname $PWD)/outside/secret.txt'",
    "heredoc-to-sh": "sh <<EOF\ncat ../outside/secret.txt\nEOF",
    "pipe-to-sh": 'echo "cat ../outside/secret.txt" | sh',
    "heredoc-subst": "cat <<EOF\n$(cat out_link/secret.txt)\nEOF",
    "echo-subst-reads": 'echo "$(cat out_link/secret.txt)"',
    "process-subst": "cat <(cat out_link/secret.txt)",
    "redirect-glob": "cat < out_lin?/secret.txt",
    "function-arg-link": 'f() { cat "$1/secret.txt"; }; f out_link',
    "trap-body": "trap 'cat ../outside/secret.txt' EXIT",
    "alias-body": "alias c='cat ../outside/secret.txt'\nc",
    "python-heredoc": "python3 - <<'PY'\nprint(open('../outside/secret.txt').read())\nPY",
    "env-prefix-dots": "D=.. sh -c 'cat $D/outside/secret.txt'",
    "cd-double-dash": "cd -- ../outside && cat secret.txt",
    "cdpath": "CDPATH=.. cd outside > /dev/null && cat secret.txt",
    "ifs-split": "IFS=Q; x=catQ../outside/secret.txt; $x",
    "strip-ops-hidden-dots": "y=.Q.; cat ${y%Q*}${y#*Q}/outside/secret.txt",
    "home-then-bare-cd": "HOME=$(dirname $PWD); cd; cat outside/secret.txt",
    "set-positional": 'set -- ../outside/secret.txt; cat "$1"',
    "bash-process-subst-script": "bash <(echo 'cat ../outside/secret.txt')",
}


@pytest.fixture
def ws(layout):
    (layout["ws"] / "out_link").symlink_to(layout["outside"])
    return layout


def _command(name: str, L) -> str:
    return ESCAPE_SPELLINGS[name].replace("{outside}", str(L["outside"]))


@pytest.mark.parametrize("name", list(ESCAPE_SPELLINGS))
def test_each_spelling_really_escapes_without_the_guard(ws, name):
    """The control: in a real shell, unguarded, every spelling reads the secret outside."""
    command = _command(name, ws)
    leaked = []
    for shell in ("sh", "bash"):
        done = subprocess.run(
            [shell, "-c", command], cwd=ws["ws"], capture_output=True, text=True, timeout=30,
            env={"PATH": "/usr/bin:/bin", "PWD": str(ws["ws"]), "HOME": str(ws["home"])},
        )  # fmt: skip
        leaked.append(SECRET in done.stdout)
    assert any(leaked), f"{name}: no shell leaked the secret ({command!r})"


@pytest.mark.parametrize("name", list(ESCAPE_SPELLINGS))
async def test_each_spelling_is_refused_by_exec(ws, name):
    tally("workspace escapes: exec spellings (test_shell_guard)")
    reg = default_registry(ToolContext(ws["ws"], ToolsConfig(exec=ExecConfig(sandbox="none"))))
    before = snapshot_outside(ws["tmp"], ws["ws"])
    result = await reg.execute("exec", {"command": _command(name, ws)})
    assert not result.ok
    assert result.content.startswith("Error: command refused"), result.content
    assert "restrictToWorkspace is on" in result.content
    assert SECRET not in result.content
    assert snapshot_outside(ws["tmp"], ws["ws"]) == before


CANNOT_ANALYSE = {
    "arithmetic": "cat $((1+1)).txt",
    "case": "case x in a) cat /etc/passwd;; esac",
    "double-brackets": "[[ -f a.txt ]] && cat a.txt",
    "array": "a=(x y); cat ${a[0]}",
    "time": "time cat a.txt",
    "unterminated-quote": "cat 'a.txt",
    "bashlex-misreads": "cat <<<",
}


@pytest.mark.parametrize("command", list(CANNOT_ANALYSE.values()), ids=list(CANNOT_ANALYSE))
def test_what_the_guard_cannot_analyse_is_refused_saying_so(ws, command):
    tally("workspace guard: commands refused as unanalysable")
    with pytest.raises(ToolError) as err:
        check_confined(command, ws["ws"].resolve())
    assert "could not analyse" in str(err.value), str(err.value)


UNKNOWABLE = {
    "subst-of-a-program": "cat $(cat list.txt)",
    "for-over-subst": "for f in $(ls); do cat $f; done",
    "read-into-path": "read f < list.txt; cat $f",
    "indirect": "cat ${!name}",
    "pattern-substitution": "cat ${PWD/ws/outside}/secret.txt",
    "positional-in-function": 'f() { cat "$1"; }; f a.txt',
    "unknown-command-name": "$(cat cmd.txt) a.txt",
}


@pytest.mark.parametrize("command", list(UNKNOWABLE.values()), ids=list(UNKNOWABLE))
def test_words_whose_value_cannot_be_known_are_refused(ws, command):
    tally("workspace guard: commands refused as unknowable")
    with pytest.raises(ToolError, match="cannot know") as err:
        check_confined(command, ws["ws"].resolve())
    assert "restrictToWorkspace is on" in str(err.value)


ORDINARY = [
    "ls -la",
    "python -m pytest -q",
    "grep -rn foo .",
    "git status",
    "git log --oneline -5 | cat",
    "git diff HEAD~1..HEAD -- a.txt",
    "ls | wc -l && echo ok",
    "cat a.txt | grep -v '^#' | sort | uniq -c > counts.txt",
    "echo hi > out.txt 2>&1",
    "echo hi >> sub/log.txt 2>/dev/null",
    "for f in *.txt; do echo $f; wc -l $f; done",
    'for f in sub/*.txt; do cat "$f"; done',
    "cat > f.py <<'EOF'\nimport os\nprint(os.getcwd(), '/etc is fine in data')\nEOF",
    "python3 - <<'PY'\nprint(1 + 1)\nPY",
    "git commit -m \"$(cat <<'EOF'\nfix: the thing\nEOF\n)\"",
    "cd sub && ls",
    "mkdir -p build && cd build && ls",
    'echo "files: $(ls | wc -l)"',
    "x=$(pwd); ls $x",
    "ls $PWD",
    "cat $PWD/a.txt",
    "cat ${PWD}/sub/b.txt",
    "export PATH=$PATH:./bin",
    "if [ -f a.txt ]; then cat a.txt; fi",
    "test -d sub || mkdir sub",
    "while read l; do echo $l; done < a.txt",
    "/usr/bin/env python3 -c 'print(1)'",
    "pip install -e . 2>&1 | tail -3",
    "sed -i 's/a/b/g' a.txt",
    "rm -rf build",
    "curl -s https://example.com/a/b",
    "echo $HOME",
    "cat link_in/b.txt",
    "sh -c 'ls sub'",
    "find . -name '*.txt' -exec grep -l inside {} +",
    "cat <(ls) | sort",
    "a=1; b=2; echo $a$b",
    "echo ${HOME:+set}",
    "f() { echo hi; }; f",
    "ls 'sub'/\"b.txt\"",
    "npm test -- --watch=false",
    "make -j2 test",
]


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_commands_pass(ws, command):
    tally("workspace guard: ordinary commands allowed")
    check_confined(command, ws["ws"].resolve(), {"PATH": "/usr/bin:/bin", "HOME": "/root"})


async def test_ordinary_commands_really_run(ws):
    reg = default_registry(ToolContext(ws["ws"], ToolsConfig()))
    r = await reg.execute("exec", {"command": "for f in *.txt; do cat $f; done; cd sub && ls"})
    assert r.ok, r.content
    assert "inside" in r.content and "b.txt" in r.content
    heredoc = "cat > f.py <<'EOF'\nprint('hi from f')\nEOF\npython3 f.py"
    r = await reg.execute("exec", {"command": heredoc})
    assert r.ok and "hi from f" in r.content, r.content


def test_heredocs_are_taken_out_with_positions_kept():
    command = "cat > a <<'EOF'\n$(not run)\nEOF\necho done"
    prepared, bodies = take_heredocs(command)
    assert len(prepared) == len(command)
    assert prepared.startswith("cat > a <h0___")
    assert bodies == [("$(not run)", False)]
    assert prepared.endswith("echo done") and "not run" not in prepared


# -- any text: a verdict, never an exception or a runaway parse --------------------------------

_PIECES = [*"abc ./$'\"\\`(){}[]<>|&;*?~#=:-\n\t!%^@+,", "$(", "${", "<<", "<<'E'", "\nE\n",
           "EOF", "cd ", "sh -c ", "eval ", "for x in ", "; do ", "; done", "case ", "$((",
           "${x%", "${x:-", "'.'", "..", "link_out", "IFS=", "<(", "f() {", "}", "$'\\x2e'"]  # fmt: skip


@fuzz(300, 5000)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_any_text_gets_a_verdict(layout, command):
    tally("workspace guard: fuzzed commands judged")
    try:
        check_confined(command, layout["ws"].resolve(), {"HOME": "/root", "PATH": "/bin"})
    except ToolError as e:
        assert str(e).startswith("command refused")


def test_an_unclosed_brace_in_single_quotes_does_not_run_bashlex_away():
    """bashlex 0.18 allocates without end on `'${'c`: the inside of quotes is masked first.
    Run in a child with a memory cap, so a regression fails instead of exhausting memory."""
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (800_000_000,) * 2)\n"
        "from pathlib import Path\n"
        "from picobot_tui.core.tools.base import ToolError\n"
        "from picobot_tui.core.tools.exec.guard import check_confined\n"
        "for c in [\"'${'c .&:\", \"echo '${x%case 'c\", \"sed 's/${/x/' a.txt\"]:\n"
        "    try:\n"
        "        check_confined(c, Path('.').resolve(), {})\n"
        "    except ToolError:\n"
        "        pass\n"
        "print('judged')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0 and "judged" in done.stdout, done.stderr[-2000:]
