"""The reviewed table of exec rules (core/command_risk, issue 21 point 2): what a saved prefix
rule covers, in every option syntax the programs accept, and what the approval offers."""

from __future__ import annotations

import pytest

from picobot_tui.core import command_risk
from picobot_tui.core.command_risk.spec import RISK_WORDS, Command
from picobot_tui.core.command_rules import check_command, describe, literal_words, offered


def covered(rule: str, command: str) -> bool:
    return check_command([rule], command).allowed


# (rule, command): each must NOT be covered -- an option that runs a program, loads other
# config or plugins, writes a file or sends data, in each spelling the program accepts.
NOT_COVERED = [
    # git grep -O: attached, separate value impossible (-O takes it attached), in a cluster,
    # the long name, abbreviations git accepts
    ("exec(git grep:*)", "git grep -O'sh -c x' foo"),
    ("exec(git grep:*)", "git grep -O foo"),  # the default pager
    ("exec(git grep:*)", "git grep -niO'x' foo"),
    ("exec(git grep:*)", "git grep --open-files-in-pager=x foo"),
    ("exec(git grep:*)", "git grep --open-files-in-pager foo"),
    ("exec(git grep:*)", "git grep --open-f=x foo"),
    ("exec(git grep:*)", "git grep --op=x foo"),
    ("exec(git grep:*)", "git grep --textconv foo"),
    # git log/diff/show --output, with "=", as the next word, abbreviated
    ("exec(git log:*)", "git log --output=.git/config"),
    ("exec(git log:*)", "git log -1 --output .git/config --format=x"),
    ("exec(git log:*)", "git log --outp=x"),
    ("exec(git diff:*)", "git diff --output=Makefile"),
    ("exec(git diff:*)", "git diff --ext-diff"),
    ("exec(git diff:*)", "git diff --ext=x"),
    ("exec(git show:*)", "git show --textconv HEAD:a"),
    ("exec(git stash list:*)", "git stash list --output=x"),
    ("exec(git diff:*)", "git diff -- --output=x"),  # after --, still asked (never fewer)
    # transports
    ("exec(git fetch:*)", "git fetch --upload-pack=x origin"),
    ("exec(git pull:*)", "git pull -s ours origin"),
    ("exec(git pull:*)", "git pull --strategy=x"),
    ("exec(git push:*)", "git push --receive-pack=x origin"),
    ("exec(git push:*)", "git push --exec=x origin"),
    ("exec(git ls-remote:*)", "git ls-remote --upload-pack x ."),
    ("exec(git clone:*)", "git clone -u x a b"),
    ("exec(git clone:*)", "git clone --template=t a b"),
    ("exec(git clone:*)", "git clone -c core.fsmonitor=x a b"),
    ("exec(git clone:*)", "git clone --config=core.hooksPath=h a b"),
    # editors, signing
    ("exec(git commit:*)", "git commit -S -m x"),
    ("exec(git commit:*)", "git commit -am x -e"),
    ("exec(git commit:*)", "git commit --gpg-sign=k -m x"),
    ("exec(git commit:*)", "git commit -c HEAD"),
    ("exec(git tag:*)", "git tag -s v1 -m x"),
    ("exec(git branch:*)", "git branch --edit-description"),
    ("exec(git add:*)", "git add -e"),
    ("exec(git cat-file:*)", "git cat-file --filters HEAD:a"),
    # rev-list, blame and annotate take the diff options: --output writes (git 2.39)
    ("exec(git rev-list:*)", "git rev-list HEAD --output=Makefile"),
    ("exec(git blame:*)", "git blame a --output=Makefile"),
    ("exec(git annotate:*)", "git annotate a --output=Makefile"),
    # before the subcommand, under a broad rule
    ("exec(git:*)", "git -c core.pager=x log"),
    ("exec(git:*)", "git -c 'alias.x=!sh' x"),
    ("exec(git:*)", "git --config-env=core.pager=X log"),
    ("exec(git:*)", "git -C ../other status"),
    ("exec(git:*)", "git --git-dir=x status"),
    ("exec(git:*)", "git --work-tree x status"),
    ("exec(git:*)", "git --exec-path=. status"),
    ("exec(git:*)", "git -p log"),
    ("exec(git:*)", "git --paginate log"),
    ("exec(git:*)", "git --namespace x log"),  # not reviewed: asked
    ("exec(git:*)", "git config core.fsmonitor x"),  # a subcommand not in the table
    ("exec(git:*)", "git checkout -- ."),
    ("exec(git:*)", "git rebase -x 'sh' HEAD^"),
    ("exec(git:*)", "git bisect run sh"),
    ("exec(git:*)", "git stash"),  # = stash push: changes the user's files
    ("exec(git:*)", "git stash pop"),
    ("exec(git:*)", "git submodule foreach x"),
    ("exec(git:*)", "git remote add x y"),
    ("exec(git remote:*)", "git remote set-url origin x"),
    ("exec(git:*)", "git archive --output=x HEAD"),
    ("exec(git:*)", "git format-patch HEAD^"),
    ("exec(git:*)", "git st"),  # an alias
    # make
    ("exec(make test:*)", "make test --eval=x"),
    ("exec(make test:*)", "make test --ev=x"),
    ("exec(make test:*)", "make test -E x"),
    ("exec(make test:*)", "make test -f evil.mk"),
    ("exec(make test:*)", "make test -fevil.mk"),
    ("exec(make test:*)", "make test -kf evil.mk"),
    ("exec(make test:*)", "make test --file evil.mk"),
    ("exec(make test:*)", "make test --makefile=evil.mk"),
    ("exec(make test:*)", "make test -C sub"),
    ("exec(make test:*)", "make test --directory=sub"),
    ("exec(make test:*)", "make test -I inc"),
    ("exec(make test:*)", "make test -e"),
    ("exec(make test:*)", "make test deploy"),  # another target
    ("exec(make test:*)", "make test SHELL=/bin/evil"),  # a variable
    ("exec(make test:*)", "make test CC=x"),
    ("exec(make test:*)", "make test -j 4 deploy"),
    ("exec(make:*)", "make -f evil.mk"),
    ("exec(make:*)", "make --eval=x test"),
    # npm and friends: only the listed flags; no arguments to the script
    ("exec(npm test:*)", "npm test --script-shell=./x"),
    ("exec(npm test:*)", "npm test --prefix=sub"),
    ("exec(npm test:*)", "npm test --prefix sub"),
    ("exec(npm test:*)", "npm test --node-options=--require=./x.js"),
    ("exec(npm test:*)", "npm test --userconfig=x"),
    ("exec(npm test:*)", "npm test -- --config=x"),
    ("exec(npm test:*)", "npm test x"),
    ("exec(npm test:*)", "npm test -w other"),
    ("exec(npm test:*)", "npm test -sd"),
    ("exec(npm run build:*)", "npm run build -- --watch"),
    ("exec(npm run build:*)", "npm run build --script-shell=x"),
    ("exec(npm:*)", "npm install x"),
    ("exec(npm:*)", "npm exec x"),
    ("exec(npm:*)", "npm --prefix=x test"),
    ("exec(pnpm test:*)", "pnpm test --filter x"),
    ("exec(yarn test:*)", "yarn test --cwd x"),
    ("exec(bun test:*)", "bun test --preload ./x.ts"),
    # pytest (also through python -m, uv run)
    ("exec(pytest:*)", "pytest -p evil"),
    ("exec(pytest:*)", "pytest -pevil"),
    ("exec(pytest:*)", "pytest -vp evil"),
    ("exec(pytest:*)", "pytest -c other.ini"),
    ("exec(pytest:*)", "pytest --config-file=other.ini"),
    ("exec(pytest:*)", "pytest --conf=x"),  # an abbreviation argparse takes
    ("exec(pytest:*)", "pytest --rootdir=/"),
    ("exec(pytest:*)", "pytest --confcutdir=/"),
    ("exec(pytest:*)", "pytest -o addopts=-pevil"),
    ("exec(pytest:*)", "pytest --override-ini=x=y"),
    ("exec(pytest:*)", "pytest -W error::evil.W"),
    ("exec(pytest:*)", "pytest --pythonwarnings=x"),
    ("exec(pytest:*)", "pytest --pdbcls=evil:X"),
    ("exec(pytest:*)", "pytest --pyargs os"),
    ("exec(pytest:*)", "pytest --basetemp=src"),
    ("exec(pytest:*)", "pytest --junitxml=Makefile"),
    ("exec(pytest:*)", "pytest --junit-xml Makefile"),
    ("exec(pytest:*)", "pytest --report-log=x"),
    ("exec(pytest:*)", "pytest --debug=x"),
    ("exec(pytest:*)", "pytest --html=x"),
    ("exec(pytest:*)", "pytest --cov-report=html:x"),
    ("exec(pytest:*)", "pytest --log-file=x"),
    ("exec(pytest:*)", "pytest --pastebin=all"),
    ("exec(python -m pytest:*)", "python -m pytest -p evil"),
    ("exec(python3 -m pytest:*)", "python3 -m pytest --basetemp=x"),
    ("exec(uv run pytest:*)", "uv run pytest -p evil"),
    ("exec(python:*)", "python -c 'import os'"),  # python is not in the table
    ("exec(python -m pytest:*)", "python -m pytest -p evil"),
    # mypy, ruff
    ("exec(mypy:*)", "mypy --config-file=x ."),
    ("exec(mypy:*)", "mypy --python-executable=./x ."),
    ("exec(mypy:*)", "mypy --install-types"),
    ("exec(mypy:*)", "mypy --html-report x ."),
    ("exec(ruff check:*)", "ruff check --fix ."),
    ("exec(ruff check:*)", "ruff check --config=x ."),
    ("exec(ruff check:*)", "ruff check -o Makefile ."),
    ("exec(ruff format:*)", "ruff format --cache-dir=x ."),
    # cargo
    ("exec(cargo build:*)", "cargo build --config build.rustc-wrapper='x'"),
    ("exec(cargo build:*)", "cargo build --config=x.toml"),
    ("exec(cargo test:*)", "cargo test -Zunstable-options"),
    ("exec(cargo test:*)", "cargo test -- --logfile=Makefile"),
    ("exec(cargo check:*)", "cargo check --manifest-path=../x/Cargo.toml"),
    ("exec(cargo build:*)", "cargo build --target-dir=/tmp/x"),
    ("exec(cargo doc:*)", "cargo doc --open"),
    ("exec(cargo clippy:*)", "cargo clippy --fix --allow-dirty"),
    ("exec(cargo:*)", "cargo install x"),
    ("exec(cargo:*)", "cargo run"),
    ("exec(cargo:*)", "cargo +nightly build"),
    ("exec(cargo:*)", "cargo --config=x build"),
    # go: -name and --name, "=" or the next word, -test.name
    ("exec(go test:*)", "go test -exec=./x ./..."),
    ("exec(go test:*)", "go test -exec ./x ./..."),
    ("exec(go test:*)", "go test --exec=./x ./..."),
    ("exec(go build:*)", "go build -toolexec='x y' ."),
    ("exec(go build:*)", "go build -ldflags=-extld=./x ."),
    ("exec(go build:*)", "go build -gcflags=-cpuprofile=x ."),
    ("exec(go build:*)", "go build -o Makefile ."),
    ("exec(go build:*)", "go build -overlay=x.json ."),
    ("exec(go build:*)", "go build -modfile=x.mod ."),
    ("exec(go build:*)", "go build -C ../x ."),
    ("exec(go test:*)", "go test -coverprofile=Makefile"),
    ("exec(go test:*)", "go test -test.coverprofile=Makefile"),
    ("exec(go test:*)", "go test -cpuprofile x"),
    ("exec(go test:*)", "go test -test.gocoverdir=x"),
    ("exec(go vet:*)", "go vet -vettool=./x"),
    ("exec(go env:*)", "go env -w GOFLAGS=-toolexec=x"),
    ("exec(go:*)", "go run ."),
    ("exec(go:*)", "go generate ./..."),
    ("exec(go mod:*)", "go mod tidy"),
    # pip: install runs build code; --python, --log
    ("exec(pip:*)", "pip install x"),
    ("exec(pip:*)", "pip --python=./x list"),
    ("exec(pip list:*)", "pip list --log=Makefile"),
    ("exec(pip list:*)", "pip list --log-file x"),
    ("exec(pip3:*)", "pip3 download x"),
    ("exec(python -m pip:*)", "python -m pip install x"),
    # docker, kubectl
    ("exec(docker:*)", "docker run -v /:/h alpine"),
    ("exec(docker:*)", "docker run --privileged alpine"),
    ("exec(docker:*)", "docker exec c sh"),
    ("exec(docker:*)", "docker -H tcp://x ps"),
    ("exec(docker:*)", "docker --config=x ps"),
    ("exec(docker:*)", "docker compose up"),
    ("exec(kubectl get:*)", "kubectl get pods --kubeconfig=x"),
    ("exec(kubectl get:*)", "kubectl get pods --kubeconfig x"),
    ("exec(kubectl get:*)", "kubectl get pods --context=prod"),
    ("exec(kubectl get:*)", "kubectl get pods -s https://x"),
    ("exec(kubectl get:*)", "kubectl get pods --as=admin"),
    ("exec(kubectl:*)", "kubectl exec p -- sh"),
    ("exec(kubectl:*)", "kubectl config set-context x"),
    ("exec(kubectl:*)", "kubectl cluster-info dump"),
    ("exec(kubectl config view:*)", "kubectl config view --raw"),
    ("exec(kubectl config view:*)", "kubectl config view --flatten"),
    # everyday tools
    ("exec(sort:*)", "sort -o Makefile x"),
    ("exec(sort:*)", "sort -uo Makefile x"),
    ("exec(sort:*)", "sort --output=x y"),
    ("exec(sort:*)", "sort --out=x y"),
    ("exec(sort:*)", "sort --compress-program=x y"),
    ("exec(rg:*)", "rg --pre=./x foo"),
    ("exec(rg:*)", "rg --pre ./x foo"),
    ("exec(rg:*)", "rg --hostname-bin=./x foo"),
    ("exec(tree:*)", "tree -o Makefile"),
    ("exec(tree:*)", "tree -R -H ."),
    ("exec(file:*)", "file -C -m x"),
    ("exec(date:*)", "date -s 2020-01-01"),
    # a program not in the table: its options are never covered, nor settings
    ("exec(cp:*)", "cp -r a b"),
    ("exec(cp:*)", "cp --target-directory=x a"),
    ("exec(dd:*)", "dd of=Makefile"),
    ("exec(gcc:*)", "gcc @args"),
    ("exec(./build.sh:*)", "./build.sh --prefix=x"),
    ("exec(env:*)", "env GIT_PAGER=x git log"),
]
# Rule words count as seen: only what follows them is judged, and these are covered.
COVERED = [
    ("exec(git grep:*)", "git grep -n -i foo -- src"),
    ("exec(git grep:*)", "git grep -e -x"),  # -x is the pattern... and not dangerous anyway
    ("exec(git log:*)", "git log --oneline -5 --format=%H --stat --output-indicator-new=+"),
    ("exec(git log:*)", "git log --no-ext-diff --no-textconv -p"),
    ("exec(git diff:*)", "git diff --text --stat HEAD^"),
    ("exec(git diff:*)", "git diff -a --cached"),
    ("exec(git status:*)", "git status --short --porcelain=v2"),
    ("exec(git rev-list:*)", "git rev-list --count HEAD"),
    ("exec(git blame:*)", "git blame -L 1,5 a"),
    ("exec(kubectl config view:*)", "kubectl config view --minify"),
    ("exec(cargo clippy:*)", "cargo clippy --all-targets"),
    ("exec(tree:*)", "tree -L 2 -a"),
    ("exec(git stash list:*)", "git stash list --oneline"),
    ("exec(git remote:*)", "git remote -v"),
    ("exec(git:*)", "git --no-pager log -1"),
    ("exec(git:*)", "git -P status"),
    ("exec(git:*)", "git log -S foo"),  # pickaxe, not -S signing
    ("exec(git commit:*)", "git commit -am 'x y'"),
    ("exec(git commit:*)", "git commit --no-verify -m x"),
    ("exec(git log --output=x:*)", "git log --output=x -1"),  # the user wrote the option
    ("exec(git log --output=x)", "git log --output=x"),  # an exact rule
    ("exec(make test:*)", "make test"),
    ("exec(make test:*)", "make test -j4 -k -s"),
    ("exec(make test:*)", "make test -j 4"),
    ("exec(make test:*)", "make test -o build.stamp --trace"),
    ("exec(npm test:*)", "npm test --silent"),
    ("exec(npm test:*)", "npm test -s --if-present --loglevel=warn"),
    ("exec(npm run build:*)", "npm run build --ignore-scripts"),
    ("exec(npm ls:*)", "npm ls --all --depth=2 react"),
    ("exec(pytest:*)", "pytest -x -q tests/test_a.py::test_b -k 'not slow'"),
    ("exec(pytest:*)", "pytest --co -q"),
    ("exec(pytest:*)", "pytest --pdb --cov --lf -n 2"),
    ("exec(pytest:*)", "pytest -p no:cacheprovider"),
    ("exec(pytest:*)", "pytest -pno:randomly"),
    ("exec(python -m pytest:*)", "python -m pytest -vv tests"),
    ("exec(uv run pytest:*)", "uv run pytest -x"),
    ("exec(mypy:*)", "mypy --strict --python-version 3.11 src"),
    ("exec(ruff check:*)", "ruff check --select E . --output-format=json"),
    ("exec(cargo test:*)", "cargo test --target x86_64-unknown-linux-gnu -- --nocapture"),
    ("exec(cargo build:*)", "cargo build --release --color=always"),
    ("exec(go test:*)", "go test -v -run TestX -count=1 ./..."),
    ("exec(go test:*)", "go test -json -race -cover ./..."),
    ("exec(pip list:*)", "pip list --outdated --format=json"),
    ("exec(pip:*)", "pip --version"),
    ("exec(kubectl get:*)", "kubectl get pods -n default -o yaml"),
    ("exec(docker ps:*)", "docker ps -a --format '{{.ID}}'"),
    ("exec(sort:*)", "sort -u -k2 x"),
    ("exec(ls:*)", "ls -la src"),
    ("exec(cat:*)", "cat a b"),
    ("exec(cp:*)", "cp a b"),  # a program not in the table: plain operands only
]


@pytest.mark.parametrize(("rule", "command"), NOT_COVERED)
def test_a_prefix_rule_never_covers_an_option_that_runs_writes_or_loads(rule, command) -> None:
    assert literal_words(command) is not None, "the test's command must be literal words"
    verdict = check_command([rule], command)
    assert not verdict.allowed
    if literal_words(command)[: len(literal_words(rule[5:-3]))] == literal_words(rule[5:-3]):
        assert verdict.why_not, "a rule that matched the first words says why it did not cover"


@pytest.mark.parametrize(("rule", "command"), COVERED)
def test_what_a_rule_is_for_is_still_covered(rule, command) -> None:
    assert covered(rule, command), check_command([rule], command).why_not


@pytest.mark.parametrize(
    "command",
    [
        "GIT_EXTERNAL_DIFF=x git diff",
        "GIT_PAGER=x git log",
        "PAGER=x git log",
        "GIT_SSH_COMMAND=x git fetch",
        "LD_PRELOAD=./x.so git status",
        "MAKEFLAGS=--eval=x make test",
        "PYTEST_ADDOPTS=-pevil pytest",
        "git status > Makefile",
        "git status 2>Makefile",
        "git status >>x",
        "git status <x",
        "git diff | sh",
        "alias git=x; git status",
        "git() { x; }; git status",
        "git status\ntouch x",
        "git status $(touch x)",
    ],
)
def test_environment_and_redirections_never_match_a_rule(command) -> None:
    rules = ["exec(git:*)", "exec(git diff:*)", "exec(make test:*)", "exec(pytest:*)"]
    assert not check_command(rules, command).allowed
    assert offered(command) is None  # and no rule is offered for them


@pytest.mark.parametrize(
    ("command", "rule", "prefix"),
    [
        ("git status --short", "exec(git status:*)", "git status"),
        ("git log --oneline", "exec(git log:*)", "git log"),
        ("git stash list", "exec(git stash list:*)", "git stash list"),
        ("npm test", "exec(npm test:*)", "npm test"),
        ("npm run build --silent", "exec(npm run build:*)", "npm run build"),
        ("make test -j4", "exec(make test:*)", "make test"),
        ("python -m pytest -x", "exec(python -m pytest:*)", "python -m pytest"),
        ("uv run pytest", "exec(uv run pytest:*)", "uv run pytest"),
        ("cargo test", "exec(cargo test:*)", "cargo test"),
        ("go test ./...", "exec(go test:*)", "go test"),
        ("ls -la", "exec(ls:*)", "ls"),
        ("cat README.md", "exec(cat:*)", "cat"),
        # a dangerous option, an unlisted program or subcommand, an option first: exact only
        ("git log --output=x", "exec(git log --output=x)", None),
        ("make test deploy", "exec(make test deploy)", None),
        ("git -c core.pager=less log", "exec(git -c core.pager=less log)", None),
        ("git --no-pager log", "exec(git --no-pager log)", None),
        ("git", "exec(git)", None),
        ("git config --list", "exec(git config --list)", None),
        ("make", "exec(make)", None),
        ("npm install", "exec(npm install)", None),
        ("pip install requests", "exec(pip install requests)", None),
        ("python build.py", "exec(python build.py)", None),
        ("python -c 'print(1)'", "exec(python -c 'print(1)')", None),
        ("sh -c 'echo x'", "exec(sh -c 'echo x')", None),
        ("env FOO=1 make", "exec(env FOO=1 make)", None),
        ("docker run alpine", "exec(docker run alpine)", None),
        ("cp a b", "exec(cp a b)", None),
        ("rm -rf build", "exec(rm -rf build)", None),
    ],
)
def test_the_offer_is_a_reviewed_prefix_or_the_exact_command(command, rule, prefix) -> None:
    got = offered(command)
    assert got is not None and (got.rule, got.prefix) == (rule, prefix)
    assert covered(got.rule, command)  # what is offered covers the command it was offered for


@pytest.mark.parametrize(
    "command",
    [
        "gіt status",  # Cyrillic і: a lookalike program name
        "./build.sh",
        "/usr/bin/git status",
        "echo a | wc",
        "a; b",
        "echo $HOME",
        "x" * 5000,
    ],
)
def test_no_rule_is_offered_for_what_a_rule_could_not_name_plainly(command) -> None:
    assert offered(command) is None


def test_the_table_is_well_formed() -> None:
    seen = 0

    def walk(cmd: Command, path: str) -> None:
        nonlocal seen
        for opt in cmd.danger:
            seen += 1
            assert opt.risk in RISK_WORDS and opt.why, path
            for name in opt.names:
                assert name.startswith("-") and " " not in name, (path, name)
                if cmd.style == "gnu" and not name.startswith("--"):
                    assert len(name) == 2, (path, name)  # a short option: one letter
        for name, sub in (cmd.subcommands or {}).items():
            walk(sub, f"{path} {name}")
        if cmd.named is not None:
            walk(cmd.named, f"{path} <name>")

    for program, cmd in command_risk.TABLE.items():
        walk(cmd, program)
    assert seen > 100  # the review covers this many options


def test_permissions_describes_each_kind_of_rule() -> None:
    assert describe("write_file") == "every write_file call"
    assert describe("exec(git log)") == "exactly git log"
    assert describe("exec(git log:*)").startswith("commands starting with git log; options")
    assert "every option still asks (cp is not in picobot's reviewed table)" in describe(
        "exec(cp:*)"
    )
