"""The `exec` tool: a shell command in the workspace, and everything that guards it.

A call goes through these modules in this order:

| module | what it holds |
|---|---|
| `tool` | `ExecTool`: runs the command, its timeout and cancellation, the stop of its process tree |
| `guard` | the checks before running: deny patterns, then the workspace guard |
| `confine` | the workspace guard's walk over bashlex's parse: which words are judged |
| `heredoc` | heredoc bodies taken out (and single quotes masked) before bashlex reads the command |
| `words` | what the shell makes of one word: quotes, escapes, `$'...'`, parameters, `~` |
| `shell_paths` | the path rules for one expanded word: outside, `..`, symlinks, globs, `file://` |
| `sandbox` | bubblewrap: whether exec runs inside it, and its argv (the policy) |
| `env` | the environment a command gets (`tools.exec.env`: credentials stripped by default) |
| `reaper` | a script run as the shell's parent when unsandboxed: a child subreaper that kills every descendant |
| `output` | the capture of stdout/stderr: masked of secrets, then its head and tail kept |

Approval happens before any of it (the loop asks; `core.command_rules` decides what a saved
rule covers). Nothing here is imported until the registry builds the exec tool: bashlex is
loaded only when a command is judged.
"""
