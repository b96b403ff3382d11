"""Build and test tools: make, npm/pnpm/yarn/bun, pytest, mypy, ruff, cargo, go, pip.

Reviewed against GNU make 4.3-4.4, npm 10-11 (nopt reads any `--name=value` as config),
pytest 8, mypy 1.x, ruff 0.x, cargo 1.8x, go 1.22-1.23 (`go help build`, `go help
testflag`) and pip 23-24.

Never offered as a prefix (exact commands only), because a rule on their first words is
running code chosen by the arguments: `pip install`/`download`/`wheel` (a package's
setup.py or build backend runs), `npm install`/`ci`/`exec`, `npx`, `yarn dlx`, `pnpm dlx`,
`cargo install`/`run`, `go run`/`generate`/`get`/`install`/`tool`, `uv`/`poetry`/
`pipenv`/`pdm` other than `run <listed program>` (core/command_risk/__init__.py).
"""

from __future__ import annotations

from picobot_tui.core.command_risk.spec import Command, Opt

# -- make -----------------------------------------------------------------------------------
MAKE_DANGER = (
    # -f / --file / --makefile: another makefile, whose recipes run.
    Opt(("-f", "--file", "--makefile"), "runs", "reads another makefile (its recipes run)"),
    # -E / --eval=STRING: make code, and $(shell …) runs a command.
    Opt(("-E", "--eval"), "runs", "evaluates make code ($(shell …) runs commands)"),
    # -C / --directory: the makefile of another folder.
    Opt(("-C", "--directory"), "runs", "runs the makefile of another folder"),
    # -I / --include-dir: included makefiles are looked for in another folder.
    Opt(("-I", "--include-dir"), "config", "reads included makefiles from another folder"),
    # -e: the environment overrides the makefile's variables (the commands recipes run).
    Opt(("-e", "--environment-overrides"), "config", "lets the environment change recipes"),
)
_NUMBER = r"\d+(\.\d+)?"
MAKE_VALUES = {
    "-j": _NUMBER,
    "--jobs": _NUMBER,
    "-l": _NUMBER,
    "--load-average": _NUMBER,
    "--max-load": _NUMBER,
    "-o": ".*",
    "--old-file": ".*",
    "--assume-old": ".*",
    "-W": ".*",
    "--what-if": ".*",
    "--new-file": ".*",
    "--assume-new": ".*",
}
MAKE_TARGET = Command(
    danger=MAKE_DANGER,
    values=MAKE_VALUES,
    # Another target runs other recipes; NAME=value overrides a variable, so the commands
    # the recipes run (`make test CC='sh -c …'`, SHELL=…).
    operands="none",
    operands_why="another target (its recipe runs) or a variable override (it changes the "
    "commands recipes run)",
)
MAKE = Command(danger=MAKE_DANGER, values=MAKE_VALUES, named=MAKE_TARGET)

# -- npm, pnpm, yarn, bun ---------------------------------------------------------------------
# npm turns every `--name=value` into config: --script-shell, --node-options, --prefix,
# --userconfig, --git and more run programs or another package.json. So a rule covers only
# these, and no operand after a script (npm passes them to the script's command).
NPM_SAFE = frozenset(
    {
        "-s",
        "--silent",
        "-q",
        "--quiet",
        "--if-present",
        "--json",
        "--long",
        "-l",
        "--all",
        "-a",
        "--parseable",
        "-p",
        "--depth=",
        "--no-color",
        "--color=",
        "--loglevel=",
        "--offline",
        "--ignore-scripts",
        "--foreground-scripts",
    }
)
SCRIPT_WHY = "passed on to the script's command, whose options picobot cannot judge"
NPM_SCRIPT = Command(safe_only=NPM_SAFE, operands="none", operands_why=SCRIPT_WHY)
NPM_LIST = Command(safe_only=NPM_SAFE)


def runner(scripts: tuple[str, ...], run_words: tuple[str, ...], lists: tuple[str, ...]) -> Command:
    """A package manager: its script commands, `run <script>`, and its listing commands."""
    subs = {name: NPM_SCRIPT for name in scripts}
    subs |= {name: Command(safe_only=NPM_SAFE, named=NPM_SCRIPT) for name in run_words}
    subs |= {name: NPM_LIST for name in lists}
    return Command(safe_only=NPM_SAFE, before=NPM_SAFE, subcommands=subs)


NPM = runner(
    ("test", "t", "tst", "start", "stop", "restart"),
    ("run", "run-script", "rum", "urn"),
    ("ls", "list", "la", "ll", "outdated", "why", "explain", "view", "info", "show"),
)
PNPM = runner(("test", "t", "start"), ("run",), ("ls", "list", "ll", "outdated", "why"))
YARN = runner(("test", "start"), ("run",), ("list", "why", "info", "outdated"))
# bun test is bun's own runner: --preload/-r and --config load code; a rule covers file
# filters and these flags only.
BUN = Command(
    subcommands={
        "test": Command(safe_only=frozenset({"--bail", "--only", "--todo", "--watch"})),
        "run": Command(safe_only=frozenset({"--silent"}), named=NPM_SCRIPT),
    },
)

# -- pytest (also `python -m pytest`, `uv run pytest`, …) -----------------------------------
PYTEST = Command(
    danger=(
        # -p NAME: imports the plugin module NAME (from the workspace, too); -p no:NAME only
        # turns one off.
        Opt(("-p",), "runs", "imports the plugin module it names", unless=("no:",)),
        # -c / --config-file: another ini file; its addopts can load any plugin.
        Opt(("-c", "--config-file", "--inifile"), "config", "reads another config file"),
        # --rootdir / --confcutdir: conftest.py files and config from other folders.
        Opt(("--rootdir",), "config", "takes another root folder (its config and conftest.py)"),
        Opt(("--confcutdir",), "config", "loads conftest.py files from other folders"),
        # -o / --override-ini: any ini value (required_plugins, pythonpath, cache_dir).
        Opt(("-o", "--override-ini"), "config", "overrides config values"),
        # -W / --pythonwarnings: a warning category is imported by its module path.
        Opt(("-W", "--pythonwarnings"), "runs", "imports the module of the warning it names"),
        # --pdbcls=module:Class is imported; --pyargs imports installed packages as tests.
        Opt(("--pdbcls",), "runs", "imports the debugger class it names"),
        Opt(("--pyargs",), "runs", "imports installed packages as tests"),
        # --basetemp: emptied, then deleted, whatever it held.
        Opt(("--basetemp",), "writes", "deletes the folder it names, then writes to it"),
        # reports and logs to any file.
        Opt(
            (
                "--junitxml",
                "--junit-xml",
                "--resultlog",
                "--result-log",
                "--report-log",
                "--debug",
                "--html",
                "--json-report-file",
                "--cov-report",
                "--log-file",
            ),
            "writes",
            "writes a report or log to the file it names",
        ),
        # --pastebin: the session log to bpaste.net.
        Opt(("--pastebin",), "sends", "sends the output to a paste service"),
    ),
    # --co (--collect-only), --pdb and pytest-cov's --cov begin dangerous options' names.
    real=frozenset({"--co", "--pdb", "--cov"}),
)
# The type checker mypy: its config file can load plugins (code); --python-executable
# runs an interpreter.
MYPY = Command(
    danger=(
        Opt(("--config-file",), "config", "reads another config file (plugins = … load code)"),
        Opt(("--python-executable",), "runs", "runs the interpreter it names"),
        Opt(("--install-types",), "runs", "installs packages with pip (their build code runs)"),
        Opt(("--custom-typeshed-dir", "--shadow-file"), "config", "reads code from elsewhere"),
        Opt(
            (
                "--junit-xml",
                "--cache-dir",
                "--html-report",
                "--txt-report",
                "--xml-report",
                "--xslt-html-report",
                "--xslt-txt-report",
                "--linecount-report",
                "--linecoverage-report",
                "--lineprecision-report",
                "--any-exprs-report",
                "--cobertura-xml-report",
                "--memory-xml-report",
            ),
            "writes",
            "writes a report or cache to the folder or file it names",
        ),
    )
)
RUFF_SHARED = (
    Opt(("--config",), "config", "reads another config file"),
    Opt(("-o", "--output-file", "--cache-dir"), "writes", "writes to the file it names"),
)
RUFF = Command(
    abbrev=False,  # clap
    subcommands={
        # check: --fix and friends rewrite the files checked (a "check" reads only).
        "check": Command(
            danger=RUFF_SHARED
            + (
                Opt(
                    ("--fix", "--unsafe-fixes", "--add-noqa", "--fix-only"),
                    "writes",
                    "rewrites the files it checks",
                ),
            ),
            abbrev=False,
        ),
        "format": Command(danger=RUFF_SHARED, abbrev=False),
        "version": Command(),
    },
)

# -- cargo -----------------------------------------------------------------------------------
CARGO_SHARED = (
    # --config KEY=VALUE|FILE: build.rustc-wrapper, target.<triple>.runner run programs.
    Opt(("--config",), "runs", "sets config (build.rustc-wrapper, runners run programs)"),
    # -Z: unstable flags; -C <dir> (nightly): another folder's .cargo/config.toml.
    Opt(("-Z",), "config", "turns on unstable behaviour"),
    Opt(("-C",), "config", "runs in another folder, under its config"),
    # --manifest-path: another package, whose build.rs runs.
    Opt(("--manifest-path",), "runs", "builds another package (its build script runs)"),
    Opt(
        ("--target-dir", "--artifact-dir", "--out-dir", "--lockfile-path"),
        "writes",
        "writes build output to the folder it names",
    ),
    # after `--`, the test harness: --logfile writes.
    Opt(("--logfile",), "writes", "writes the test log to the file it names"),
)
CARGO_BUILD = Command(danger=CARGO_SHARED, abbrev=False)  # clap takes no abbreviations
CARGO = Command(
    abbrev=False,
    before=frozenset({"-v", "-vv", "--verbose", "-q", "--quiet", "--offline", "--frozen"}),
    subcommands={
        "build": CARGO_BUILD,
        "b": CARGO_BUILD,
        "check": CARGO_BUILD,
        "c": CARGO_BUILD,
        "test": CARGO_BUILD,
        "t": CARGO_BUILD,
        "bench": CARGO_BUILD,
        # clippy --fix rewrites the sources it checks (as ruff check --fix).
        "clippy": Command(
            danger=CARGO_SHARED + (Opt(("--fix",), "writes", "rewrites the files it checks"),),
            abbrev=False,
        ),
        "fmt": CARGO_BUILD,
        "tree": CARGO_BUILD,
        "metadata": CARGO_BUILD,
        "clean": CARGO_BUILD,
        # doc --open runs the browser (doc.browser, BROWSER).
        "doc": Command(
            danger=CARGO_SHARED + (Opt(("--open",), "runs", "opens the browser program"),),
            abbrev=False,
        ),
        "version": Command(),
    },
)

# -- go --------------------------------------------------------------------------------------
GO_BUILD = (
    # -exec xprog: runs the test or program binary through xprog.
    Opt(("-exec",), "runs", "runs the binary through the program it names"),
    # -toolexec 'cmd args': every compiler and linker call through cmd.
    Opt(("-toolexec",), "runs", "runs every compiler and linker call through a program"),
    # -ldflags: -extld=PROG and -extldflags pick the external linker: a program.
    Opt(("-ldflags",), "runs", "linker flags (-extld= names a program to run)"),
    # -gcflags / -asmflags: compiler flags (-cpuprofile= and co. write files).
    Opt(("-gcflags", "-asmflags", "-gccgoflags"), "writes", "compiler flags that write files"),
    # -vettool: runs the program it names as vet.
    Opt(("-vettool",), "runs", "runs the program it names as vet"),
    # -overlay: replaces source files with the files a JSON file names.
    Opt(("-overlay",), "config", "compiles files from elsewhere in place of the sources"),
    Opt(("-modfile",), "config", "uses (and may write) another go.mod"),
    Opt(("-C",), "config", "runs in another folder"),
    # -o, profiles, -outputdir, -pkgdir: files written where they say.
    Opt(
        (
            "-o",
            "-pkgdir",
            "-outputdir",
            "-coverprofile",
            "-cpuprofile",
            "-memprofile",
            "-blockprofile",
            "-mutexprofile",
            "-trace",
            "-gocoverdir",
        ),
        "writes",
        "writes to the file or folder it names",
    ),
)
GO_CMD = Command(danger=GO_BUILD, style="go")
GO = Command(
    style="go",
    subcommands={
        "build": GO_CMD,
        "test": GO_CMD,
        "vet": GO_CMD,
        "list": GO_CMD,
        "doc": GO_CMD,
        "fmt": GO_CMD,
        "version": GO_CMD,
        # env -w / -u write go's config file (GOFLAGS=-toolexec=… would then apply to all).
        "env": Command(
            danger=(Opt(("-w", "-u"), "writes", "writes go's config file"),), style="go"
        ),
        "mod": Command(
            style="go",
            subcommands={
                "graph": GO_CMD,
                "why": GO_CMD,
                "verify": GO_CMD,
            },
        ),
    },
)

# -- pip (also pip3, `python -m pip`) --------------------------------------------------------
PIP_SHARED = (
    # --python: pip runs under the interpreter it names (pip 22.3+): any program.
    Opt(("--python",), "runs", "runs pip with the interpreter it names"),
    # --log / --log-file: a log appended to any file.
    Opt(("--log", "--log-file", "--cache-dir"), "writes", "writes to the file it names"),
    # --isolated off means PIP_CONFIG_FILE and the config files apply anyway; --config-file
    # is not an option, but --cert/--client-cert only read.
)
PIP_CMD = Command(danger=PIP_SHARED)
PIP = Command(
    danger=PIP_SHARED,
    before=frozenset(
        {"-q", "--quiet", "-v", "--verbose", "--isolated", "--no-input", "-V", "--version"}
    ),
    subcommands={
        "list": PIP_CMD,
        "show": PIP_CMD,
        "freeze": PIP_CMD,
        "check": PIP_CMD,
        "help": PIP_CMD,
        "debug": PIP_CMD,
        "inspect": PIP_CMD,
    },
)
