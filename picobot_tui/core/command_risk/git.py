"""git: the subcommands a prefix rule may name, and their options that run a program, load
another repository's config or write a file. Reviewed against git 2.39-2.47's documentation
(git-*.txt) and parse-options (which accepts any unambiguous prefix of a long option).

Not listed, so only ever remembered as an exact command: `config` (any config value:
`core.fsmonitor`, `alias.*`, `core.pager` run programs), `checkout`/`switch`/`restore`/
`reset`/`clean`/`rm`/`mv`/`stash push|pop|apply|drop` (they overwrite or delete the user's
files), `merge`/`rebase` (`-x`/`--exec` runs a command)/`cherry-pick`/`revert`/`am`/`apply`,
`bisect` (`bisect run` runs any command), `submodule` (other than `status`: `foreach` runs
any command), `filter-branch`, `difftool`/`mergetool` (`-x`/`--extcmd`), `send-email`
(`--smtp-server=<program>`), `archive`/`bundle`/`format-patch` (they write files),
`worktree add`, `init`/`clone --template` (hooks), `gc`, `prune`, `notes`, `replace`,
`update-ref`, `update-index`, aliases and external `git-*` commands.

What no table can judge: hooks in `.git/hooks` (commit and push run them) and the
repository's own `.git/config` (`core.fsmonitor` runs at every `git status`). They are the
workspace's content; the rules below keep a covered command from writing them.
"""

from __future__ import annotations

from picobot_tui.core.command_risk.spec import Command, Opt

GLOBAL = (
    # -c name=value: any config value for this run: core.pager, core.fsmonitor, alias.x=!cmd,
    # diff.external, core.sshCommand all run programs.
    Opt(("-c",), "runs", "sets a config value for this run (core.pager, alias.*, … run programs)"),
    # --config-env=name=ENVVAR: the same, the value taken from the environment.
    Opt(("--config-env",), "runs", "sets a config value for this run from a variable"),
    # -C <dir>: runs in another folder, under that repository's .git/config and hooks.
    Opt(("-C",), "config", "runs in another folder, under that repository's config and hooks"),
    # --git-dir / --work-tree: another repository's config (core.fsmonitor runs at status).
    Opt(("--git-dir",), "config", "uses another repository, with its config and hooks"),
    Opt(("--work-tree",), "config", "works on another folder, with the config given"),
    # --exec-path=<dir>: git's helper programs (git-upload-pack, …) are taken from <dir>.
    Opt(("--exec-path",), "runs", "takes git's helper programs from the folder it names"),
    # -p / --paginate: output through the pager (core.pager, GIT_PAGER).
    Opt(("-p", "--paginate"), "runs", "pipes the output through the pager program"),
)
BEFORE_OK = frozenset(
    {
        "--no-pager",
        "-P",
        "--bare",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-replace-objects",
        "--no-optional-locks",
        "--no-lazy-fetch",
        "--no-advice",
        "--version",
    }
)
BEFORE_VALUES = frozenset(
    {"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}
)

DIFF = (
    # --output=<file>: the diff or log goes to <file> instead of stdout: any file, say
    # .git/config with a core.fsmonitor line, or the Makefile.
    Opt(("--output",), "writes", "writes the output to the file it names"),
    # --ext-diff: the external diff program of diff.external / GIT_EXTERNAL_DIFF runs.
    Opt(("--ext-diff",), "runs", "runs the external diff program of the config"),
    # --textconv: the textconv program of each file's diff driver runs on it.
    Opt(("--textconv",), "runs", "runs the diff drivers' textconv programs"),
)
TEXT = frozenset({"--text"})  # -a/--text (treat files as text) begins --textconv
DIFF_CMD = Command(danger=DIFF, real=TEXT)
# The options of a transport: the program run on the other side (for a local path or ssh,
# a shell command here).
UPLOAD_PACK = Opt(
    ("--upload-pack",), "runs", "runs the program it names as the other side's upload-pack"
)
RECEIVE_PACK = Opt(
    ("--receive-pack", "--exec"), "runs", "runs the program it names as the other side's receiver"
)
GPG = Opt(("-S", "--gpg-sign"), "runs", "signs with gpg.program")
EDITOR = Opt(("-e", "--edit"), "runs", "opens the editor program")

SUBCOMMANDS: dict[str, Command] = {
    "status": Command(),
    "log": DIFF_CMD,
    "show": DIFF_CMD,
    "diff": DIFF_CMD,
    "diff-tree": DIFF_CMD,
    "diff-files": DIFF_CMD,
    "diff-index": DIFF_CMD,
    "whatchanged": DIFF_CMD,
    "shortlog": DIFF_CMD,
    "range-diff": DIFF_CMD,
    # -O[<pager>] / --open-files-in-pager[=<pager>]: opens the matching files with <pager>,
    # through the shell: `-O'sh -c …'` is any command.
    "grep": Command(
        danger=(
            Opt(
                ("-O", "--open-files-in-pager"),
                "runs",
                "opens the matching files with the program it names",
            ),
            DIFF[2],
        ),
        real=TEXT,
    ),
    # blame and annotate take the diff options too: --output writes (git 2.39, measured).
    "blame": DIFF_CMD,
    "annotate": DIFF_CMD,
    # --textconv / --filters: the textconv or smudge/clean filter programs of the config.
    "cat-file": Command(
        danger=(DIFF[2], Opt(("--filters",), "runs", "runs the config's filter programs"))
    ),
    "ls-files": Command(),
    "ls-tree": Command(),
    "rev-parse": Command(),
    "rev-list": DIFF_CMD,  # takes the diff options: --output writes (git 2.39, measured)
    "describe": Command(),
    "show-ref": Command(),
    "name-rev": Command(),
    "merge-base": Command(),
    "count-objects": Command(),
    "check-ignore": Command(),
    "check-attr": Command(),
    "version": Command(),
    # branch: --edit-description opens the editor; creating, renaming or deleting a branch
    # changes refs only (the reflog keeps them).
    "branch": Command(danger=(Opt(("--edit-description",), "runs", "opens the editor program"),)),
    # tag: -s/-u sign with gpg.program, -e/-a (without -m) open the editor.
    "tag": Command(
        danger=(
            Opt(("-s", "--sign", "-u", "--local-user"), "runs", "signs with gpg.program"),
            EDITOR,
            Opt(("-a", "--annotate"), "runs", "opens the editor program unless -m is given"),
        )
    ),
    # remote: listing only; add, set-url, rename and remove change the config.
    "remote": Command(operands="none", operands_why="changes the remotes in .git/config"),
    "stash": Command(
        subcommands={"list": DIFF_CMD, "show": DIFF_CMD},
        bare="stashes the user's changes away (git stash push)",
    ),
    "worktree": Command(subcommands={"list": Command()}),
    "submodule": Command(subcommands={"status": Command()}),
    # add: -e opens the editor (the config's clean filters run whatever is added).
    "add": Command(danger=(EDITOR,)),
    # commit: -S signs with gpg.program; -e, -c (reedit) open the editor. Hooks run.
    "commit": Command(
        danger=(GPG, EDITOR, Opt(("-c", "--reedit-message"), "runs", "opens the editor program"))
    ),
    "fetch": Command(danger=(UPLOAD_PACK,)),
    "ls-remote": Command(danger=(UPLOAD_PACK, RECEIVE_PACK)),
    # pull: fetch, then merge: -s/--strategy runs the program git-merge-<strategy>.
    "pull": Command(
        danger=(
            UPLOAD_PACK,
            GPG,
            Opt(("-s", "--strategy"), "runs", "runs the merge strategy program git-merge-<name>"),
        )
    ),
    "push": Command(danger=(RECEIVE_PACK,)),
    # clone: -u runs a program; -c/--config and --template set the new repository's
    # config and hooks (post-checkout runs at once); --separate-git-dir writes elsewhere.
    "clone": Command(
        danger=(
            Opt(("-u", "--upload-pack"), "runs", "runs the program it names as upload-pack"),
            Opt(("-c", "--config"), "runs", "sets the new repository's config"),
            Opt(("--template",), "runs", "copies the hooks of the folder it names"),
            Opt(("--separate-git-dir",), "writes", "writes the repository to another folder"),
        )
    ),
}

GIT = Command(danger=GLOBAL, before=BEFORE_OK, before_values=BEFORE_VALUES, subcommands=SUBCOMMANDS)
