"""Heredoc bodies taken out of a command before bashlex reads it (it cannot read a quoted
delimiter), and single-quoted text masked (bashlex looks for `${...}` inside it)."""

from __future__ import annotations

import re
from typing import Any

from picobot_tui.core.tools.exec.words import Unanalysable


def prepare(command: str, base: int = 0) -> tuple[str, str, list[tuple[str, bool]]]:
    """The command with every heredoc body blanked (same length, so positions hold) and its
    `<<DELIM` made a plain `<` redirect of the word `h<N>___` (N = base + its index, when it
    fits; else `___`); plus each (body, expands).

    Heredocs are found in command context only: at the top, inside `$(...)` (also within
    double quotes: `git commit -m "$(cat <<'EOF' ...)"`), not in quoted text.

    `prepare` also returns the text bashlex is given: the same, with the inside of single
    quotes (and of `$'...'`) masked, since bashlex 0.18 looks for `${...}` there too and an
    unclosed `'${'` makes it allocate without end."""
    out = list(command)
    mask: list[int] = []  # positions inside single quotes
    bodies: list[tuple[str, bool]] = []
    pending: list[tuple[str, bool, bool]] = []  # (delimiter, strip tabs, expands)
    stack: list[list[Any]] = [["cmd", 0]]  # ("cmd", open parens) / ("dq", 0) frames
    i, n = 0, len(command)
    at_word_start = True
    while i < n:
        c = command[i]
        mode = stack[-1]
        if c == "\\":
            i += 2
            at_word_start = False
            continue
        if mode[0] == "dq":
            if c == '"':
                stack.pop()
            elif command.startswith("$(", i):
                stack.append(["cmd", 0])
                i += 2
                at_word_start = True
                continue
            i += 1
            continue
        if c == "'":
            if i > 0 and command[i - 1] == "$":  # $'...': backslash escapes a quote
                end = i + 1
                while end < n and command[end] != "'":
                    end += 2 if command[end] == "\\" else 1
                end = min(end, n)
            else:
                end = command.find("'", i + 1)
                end = n if end < 0 else end
            mask.extend(range(i + 1, end))
            i = end + 1
            continue
        if c == '"':
            stack.append(["dq", 0])
            i += 1
            continue
        if c == "(":
            mode[1] += 1
        elif c == ")" and len(stack) > 1:
            if mode[1] == 0:
                stack.pop()
            else:
                mode[1] -= 1
        if c == "#" and at_word_start:
            end = command.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == "\n":
            i += 1
            for delim, strip, expands in pending:
                start = i
                body: list[str] = []
                while i < n:
                    end = command.find("\n", i)
                    line = command[i : n if end < 0 else end]
                    i = n if end < 0 else end + 1
                    if (line.lstrip("\t") if strip else line) == delim:
                        break
                    body.append(line)
                for k in range(start, i):
                    if out[k] != "\n":
                        out[k] = " "
                bodies.append(("\n".join(body), expands))
            pending = []
            at_word_start = True
            continue
        if command.startswith("<<", i) and not command.startswith("<<<", i):
            i = _heredoc_operator(command, i, out, pending, base + len(bodies) + len(pending))
            continue
        at_word_start = c in " \t;&|()"
        i += 1
    prepared = "".join(out)
    masked = list(prepared)
    for k in mask:
        if masked[k] != "\n":
            masked[k] = "x"
    return prepared, "".join(masked), bodies


def _heredoc_operator(
    command: str, i: int, out: list[str], pending: list[tuple[str, bool, bool]], index: int
) -> int:
    """Read `<<[-]WORD` at i, note it in `pending`, rewrite it in `out`; return the end."""
    n = len(command)
    j = i + 2
    strip = command.startswith("-", j)
    j += strip
    while j < n and command[j] in " \t":
        j += 1
    k = j
    while k < n and command[k] not in " \t\n;&|<>()":
        if command[k] in "'\"":
            close = command.find(command[k], k + 1)
            k = n if close < 0 else close + 1
        else:
            k += 2 if command[k] == "\\" else 1
    k = min(k, n)
    word = command[j:k]
    if not word:
        raise Unanalysable("a heredoc without a delimiter")
    expands = not any(q in word for q in "'\"\\")
    pending.append((re.sub(r"""['"\\]""", "", word), strip, expands))
    # `<<-WORD` -> `<h7____`: a plain redirect bashlex reads, naming the body it stands for.
    room = k - i - 1
    tag = f"h{index}" if len(f"h{index}") <= room else ""
    for m in range(i + 1, k):
        out[m] = "_"
    for m, ch in enumerate(tag):
        if i + 1 + m < len(out):
            out[i + 1 + m] = ch
    return k
