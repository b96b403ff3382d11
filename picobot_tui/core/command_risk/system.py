"""Containers, clusters and the everyday read-only tools.

docker and podman: reviewed against the docker CLI 24-27 reference. `run`, `exec`, `create`,
`start`, `build`, `compose`, `cp`, `save`/`load`/`export`/`import`, `context`, `plugin`
and the rest are not listed: their arguments are the image and the command it runs, and
`-v`/`--mount`, `--privileged`, `--pid=host`, `--device`, `--cap-add` give it the host, so a
prefix rule on them would run anything (each is remembered as an exact command only).

kubectl: reviewed against kubectl 1.28-1.31. `exec`, `run`, `apply`, `delete`, `edit`,
`patch`, `cp`, `debug`, `port-forward`, `proxy`, plugins (`kubectl-*`) are not listed.
Everywhere, `--kubeconfig` and the client's identity options are asked about: a kubeconfig's
`exec` credential plugin is a program that runs before any request.

The read-only tools: GNU coreutils 9, grep 3, ripgrep 14, tree 2, file 5, jq 1.7. Not
listed (exact commands only): anything that runs what it is given (`find -exec`, `xargs`,
`env`, `sh`, `awk`, `sed`, `tar`, `rsync`, `timeout`, `nice`, `sudo`, …), interpreters
(`python script.py`: the script is the program), and writers (`cp`, `mv`, `rm`, `tee`,
`touch`, `dd`, `uniq IN OUT`, `xxd`).
"""

from __future__ import annotations

from picobot_tui.core.command_risk.spec import Command, Opt

# -- docker, podman --------------------------------------------------------------------------
DOCKER_GLOBAL = (
    # -H / --host, -c / --context: another daemon, maybe another machine's.
    Opt(("-H", "--host", "-c", "--context"), "config", "talks to another daemon"),
    # --config DIR: its config.json names credential helpers and CLI plugins, programs.
    Opt(("--config",), "runs", "reads another config folder (credential helpers run)"),
)
DOCKER_CMD = Command(abbrev=False)  # cobra/pflag take no abbreviations
DOCKER = Command(
    danger=DOCKER_GLOBAL,
    abbrev=False,
    before=frozenset({"-D", "--debug"}),
    before_values=frozenset({"-H", "--host", "-c", "--context", "--config", "-l", "--log-level"}),
    subcommands={
        name: DOCKER_CMD
        for name in (
            "ps",
            "images",
            "logs",
            "inspect",
            "version",
            "info",
            "top",
            "port",
            "history",
            "diff",
            "stats",
        )
    },
)

# -- kubectl ---------------------------------------------------------------------------------
KUBE_SHARED = (
    # --kubeconfig: its users' exec plugins run (a program, before any request).
    Opt(("--kubeconfig",), "runs", "reads another kubeconfig (its exec plugins run)"),
    # acting on another cluster, or as another user.
    Opt(
        (
            "--context",
            "--cluster",
            "--user",
            "-s",
            "--server",
            "--token",
            "--as",
            "--as-group",
            "--as-uid",
            "--certificate-authority",
            "--client-certificate",
            "--client-key",
        ),
        "config",
        "acts on another cluster or as another user",
    ),
    Opt(
        ("--cache-dir", "--log-file", "--log-dir", "--profile-output"),
        "writes",
        "writes to the file or folder it names",
    ),
)
KUBE_CMD = Command(danger=KUBE_SHARED, abbrev=False)  # pflag: no abbreviations
KUBECTL = Command(
    danger=KUBE_SHARED,
    abbrev=False,
    subcommands={
        **{
            name: KUBE_CMD
            for name in (
                "get",
                "describe",
                "logs",
                "explain",
                "version",
                "api-resources",
                "api-versions",
                "top",
                "events",
            )
        },
        # cluster-info dump --output-directory writes.
        "cluster-info": Command(
            danger=KUBE_SHARED
            + (Opt(("--output-directory",), "writes", "writes to the folder it names"),),
            operands="none",
            operands_why="cluster-info dump writes files",
            abbrev=False,
        ),
        # config: reading only; set-*, use-context, delete-* write the kubeconfig. view
        # --raw / --flatten print its keys and tokens, which the model then reads.
        "config": Command(
            danger=KUBE_SHARED,
            abbrev=False,
            subcommands={
                "view": Command(
                    danger=KUBE_SHARED
                    + (Opt(("--raw", "--flatten"), "sends", "shows the kubeconfig's secrets"),),
                    abbrev=False,
                ),
                **{name: KUBE_CMD for name in ("get-contexts", "current-context", "get-clusters")},
            },
        ),
    },
)

# -- read-only tools -------------------------------------------------------------------------
PLAIN = Command()
READ_ONLY: dict[str, Command] = {
    name: PLAIN
    for name in (
        "ls",
        "cat",
        "head",
        "tail",
        "wc",
        "grep",
        "egrep",
        "fgrep",
        "pwd",
        "echo",
        "stat",
        "du",
        "df",
        "diff",
        "cmp",
        "which",
        "uname",
        "cut",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "whoami",
        "id",
        "nl",
        "jq",
    )
}
READ_ONLY |= {
    # sort -o writes the file it names; --compress-program runs one for its temp files.
    "sort": Command(
        danger=(
            Opt(("-o", "--output"), "writes", "writes the sorted lines to the file it names"),
            Opt(("--compress-program",), "runs", "runs the program it names"),
            Opt(("-T", "--temporary-directory"), "writes", "writes temp files to that folder"),
        )
    ),
    # rg --pre runs a program on every file; --hostname-bin runs one for the host name.
    "rg": Command(
        danger=(
            Opt(("--pre",), "runs", "runs the program it names on every file"),
            Opt(("--hostname-bin",), "runs", "runs the program it names"),
        )
    ),
    # tree -o writes its listing to the file it names; -R runs tree again in every folder
    # with `-o 00Tree.html`, writing a file in each.
    "tree": Command(
        danger=(
            Opt(("-o",), "writes", "writes the listing to the file it names"),
            Opt(("-R",), "writes", "writes a listing file into every folder"),
        )
    ),
    # file -C compiles a magic file (writes NAME.mgc); -m reads another magic file.
    "file": Command(
        danger=(
            Opt(("-C", "--compile"), "writes", "writes a compiled magic file"),
            Opt(("-m", "--magic-file"), "config", "reads another magic file"),
        )
    ),
    # date -s / --set sets the system clock.
    "date": Command(danger=(Opt(("-s", "--set"), "writes", "sets the system clock"),)),
}
