"""Hooks: the user's commands run at points of a session, which can block what comes next.

- `config` — the `hooks` settings (Claude Code's shape, plus `failOpen`);
- `run` — one command: JSON on stdin, its exit and stdout read as a decision;
- `fire` — `Hooks`, what the loop and the tool step call: every matching hook of an event, in
  config order (the user's, then the project's), and what they say together.

**Fail closed.** For PreToolUse and UserPromptSubmit, exit 2 blocks, and so does any other
exit, a crash, a timeout, invalid JSON or a command that cannot be launched (unless that
hook says `failOpen: true`); each failure is shown. For the other events a failure is shown
and nothing is blocked. Hooks run in the clean exec environment (no credentials), with the
workspace as cwd; what they say is scrubbed before the model or the screen sees it.
"""
