"""The published protocol schema (headless/schema.py): built from the code's types, shipped
unchanged in the package and docs/, versioned by its shape, printed by `picobot schema`, and
used by the suite to check every protocol line (tests/support/protocol_tap.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from picobot_tui.headless import schema
from picobot_tui.headless.protocol import PROTOCOL_VERSION
from tests.headless.conftest import run_cli
from tests.support import protocol_tap
from tests.support.openai_server import OpenAITestServer, text_reply

ROOT = Path(__file__).resolve().parents[2]
CHANGELOG = ROOT / "docs" / "protocol-changelog.md"


def test_the_shipped_files_are_what_the_code_builds() -> None:
    built = schema.dump(schema.build())
    for path in (ROOT / "picobot_tui" / "headless" / schema.SCHEMA_FILE, schema_doc()):
        assert path.read_text(encoding="utf-8") == built, (
            f"{path.relative_to(ROOT)} is out of date: run python scripts/protocol_schema.py"
        )
    Draft202012Validator.check_schema(json.loads(built))


def schema_doc() -> Path:
    return ROOT / "docs" / schema.SCHEMA_FILE


def test_a_changed_shape_needs_a_new_version_and_a_changelog_entry() -> None:
    entries = re.findall(
        r"^## Protocol (\d+)\n\nShape sha256 `([0-9a-f]{64})`", CHANGELOG.read_text(), re.M
    )
    versions = [int(v) for v, _ in entries]
    assert versions and versions == sorted(versions, reverse=True), "newest first, each once"
    assert versions[0] == PROTOCOL_VERSION, (
        f"PROTOCOL_VERSION is {PROTOCOL_VERSION}: add its entry to {CHANGELOG.name}"
    )
    digest = schema.shape_digest(schema.build())
    assert entries[0][1] == digest, (
        f"the protocol's shape changed (sha256 {digest}): bump PROTOCOL_VERSION in "
        f"picobot_tui/headless/protocol.py, add '## Protocol {PROTOCOL_VERSION + 1}' with "
        f"that sha256 and what changed to docs/{CHANGELOG.name}, and run "
        "python scripts/protocol_schema.py"
    )


def test_the_digest_sees_a_new_field_but_not_a_reworded_description() -> None:
    built = schema.build()
    reworded = json.loads(json.dumps(built))
    reworded["$defs"]["TurnFinished"]["description"] = "said differently"
    assert schema.shape_digest(reworded) == schema.shape_digest(built)
    grown = json.loads(json.dumps(built))
    grown["$defs"]["TurnFinished"]["properties"]["extra"] = {"type": "string"}
    assert schema.shape_digest(grown) != schema.shape_digest(built)


def test_picobot_schema_prints_the_shipped_file(picobot_home: Path) -> None:
    res = run_cli(picobot_home, "schema")
    assert res.returncode == 0, res.stderr
    assert res.stdout == schema_doc().read_text(encoding="utf-8")
    assert json.loads(res.stdout)["x-protocol-version"] == PROTOCOL_VERSION


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ('{"type": "text_delta", "protocol": 1, "text": "hi"}', None),
        ('{"type": "text_delta", "protocol": 1}', "'text' is a required property"),
        ('{"type": "text_delta", "text": "hi"}', "'protocol' is a required property"),
        ('{"type": "text_delta", "protocol": 2, "text": "hi"}', "1 was expected"),
        ('{"type": "text_delta", "protocol": 1, "text": "hi", "x": 1}', "Additional properties"),
        ('{"type": "made_up", "protocol": 1}', "no event type 'made_up'"),
        ('{"type": "turn_finished", "protocol": 1, "outcome": "won", "content": "", '
         '"session": "s", "usage": {}}', "'won'"),
        ("not json", "not JSON"),
    ],
)  # fmt: skip
def test_the_check_rejects_what_the_schema_does_not_allow(line: str, why: str | None) -> None:
    problem = protocol_tap.problem_of(line.encode())
    if why is None:
        assert problem is None
    else:
        assert problem is not None and why in problem, problem


def test_the_tap_fails_a_test_that_received_a_bad_line(tmp_path: Path) -> None:
    """A stand-in console script named `picobot` writes one good and one bad line: the tap
    passes the bytes through unchanged and reports the bad one."""
    fake = tmp_path / "picobot"
    good = '{"type": "notice", "protocol": 1, "kind": "k", "message": "m"}'
    fake.write_text(
        f'import sys\nprint({good!r})\nprint(\'{{"type": "notice"}}\')\nsys.stdout.flush()\n'
    )
    protocol_tap.start()
    res = subprocess.run(
        [sys.executable, str(fake), "agent", "--json"], capture_output=True, text=True
    )
    problems = protocol_tap.finish()
    assert res.stdout == good + '\n{"type": "notice"}\n'
    assert len(problems) == 1 and "'kind' is a required property" in problems[0]
    protocol_tap.start()
    proc = subprocess.Popen(
        [sys.executable, str(fake), "agent", "-m", "x", "--output-format", "stream-json"],
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().decode() == good + "\n"
    proc.stdout.read()
    proc.wait()
    proc.stdout.close()
    assert len(protocol_tap.finish()) == 1


def test_a_request_naming_another_protocol_version_is_refused(
    configured_home: Path, llm_server: OpenAITestServer
) -> None:
    llm_server.script([text_reply("pinned")])
    lines = [
        {"type": "message", "content": "hi", "protocol": 2},
        {"type": "message", "content": "hi", "protocol": PROTOCOL_VERSION},
    ]
    res = run_cli(
        configured_home, "agent", "--json", input="".join(json.dumps(x) + "\n" for x in lines)
    )
    assert res.returncode == 0, res.stderr
    events = [json.loads(x) for x in res.stdout.splitlines()]
    assert all(e["protocol"] == PROTOCOL_VERSION for e in events)
    errors = [e for e in events if e["type"] == "error"]
    assert len(errors) == 1 and "speaks protocol 1" in errors[0]["message"], errors
    assert [e["outcome"] for e in events if e["type"] == "turn_finished"] == ["final"]
    assert len(llm_server.completions) == 1
