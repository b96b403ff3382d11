"""core/json_input: the one parser of untrusted JSON (issue 21 point 4).

The nesting scan is checked against a plain character-by-character scanner on any JSON value
and on random text; the parse against `json.loads` wherever both accept; each refusal (too
deep, NaN/Infinity, overflowing floats, integers over the digit limit, invalid UTF-8, over
the size) against the text that provokes it.
"""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from picobot_tui.core import json_input
from picobot_tui.core.json_input import MAX_DEPTH, JsonInputError, loads, loads_lines, nesting_depth

# Strings full of what could fool a scan: brackets, quotes, backslashes, escapes.
tricky_text = st.text(alphabet=st.sampled_from('[]{}"\\/ a\n\t\u00e9\u2028\U0001f600'), max_size=12)
values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        tricky_text,
    ),
    lambda kids: st.one_of(
        st.lists(kids, max_size=4), st.dictionaries(tricky_text, kids, max_size=4)
    ),
    max_leaves=30,
)


def reference_depth(text: str) -> int:
    """The running maximum of open brackets outside strings, one character at a time."""
    depth = best = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            best = max(best, depth)
        elif ch in "]}":
            depth -= 1
    return best


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=values, indent=st.sampled_from([None, 1]))
def test_depth_of_any_json_value_is_exact(value, indent) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    assert nesting_depth(text) == reference_depth(text)
    assert nesting_depth(text.encode()) == reference_depth(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(alphabet=st.sampled_from('[]{}"ax'), max_size=60))
def test_depth_of_any_text_bounds_how_deep_a_parser_goes(text) -> None:
    """Not JSON: the figure is at least as deep as a parser would get before it fails.
    (Escapes are left out here: outside a string a backslash is an error at which a parser
    stops, so what follows it is never reached; the case below checks what comes before.)"""
    assert nesting_depth(text) >= reference_depth(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=values)
def test_what_json_loads_reads_within_the_limits_loads_reads_the_same(value) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert loads(text) == json.loads(text)
    assert loads(text.encode()) == json.loads(text)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 400_000,  # the attack: one 400 KB line
        nested(MAX_DEPTH + 1),
        '{"a":' * 5_000 + "1" + "}" * 5_000,
        '["]", ' * 200 + "[" * 200,  # brackets inside strings do not count, these do
    ],
)
def test_nesting_over_the_limit_is_refused_before_parsing(text: str) -> None:
    with pytest.raises(JsonInputError) as refused:
        loads(text)
    assert refused.value.kind == "depth"
    assert str(refused.value) == f"nested more than {MAX_DEPTH} levels deep"


def test_a_stray_escape_hides_no_bracket_a_parser_reaches() -> None:
    for text in ("[" * 300 + '\\"' + "]" * 300, "[" * 300 + '\\\\"', '"\\\\"' + "[" * 300):
        with pytest.raises(JsonInputError) as refused:
            loads(text)
        assert refused.value.kind == "depth", text[-5:]


def test_nesting_at_the_limit_parses() -> None:
    value = loads(nested(MAX_DEPTH))
    for _ in range(MAX_DEPTH - 1):
        value = value[0]
    assert value == []
    assert loads('["' + "[" * 10_000 + '"]') == ["[" * 10_000]  # inside a string: no nesting


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("NaN", "NaN is not a JSON number"),
        ('{"id": Infinity}', "Infinity is not a JSON number"),
        ("[-Infinity]", "-Infinity is not a JSON number"),
        ('{"id": 1e400}', "too large"),
        ("-1e400", "too large"),
        ("9" * 100_000, f"more than {sys.get_int_max_str_digits():,} digits"),
    ],
)
def test_numbers_json_cannot_carry_are_refused(text: str, said: str) -> None:
    """json.loads reads NaN and 1e400 (as nan and inf), and json.dumps writes them back as
    `NaN`/`Infinity`, which no JSON parser reads; a 100,000-digit integer raised a bare
    ValueError that `except JSONDecodeError` did not catch."""
    with pytest.raises(JsonInputError) as refused:
        loads(text)
    assert refused.value.kind == "number"
    assert said in str(refused.value)
    assert loads("[1e300, -2.5, 12345678901234567890]") == [1e300, -2.5, 12345678901234567890]


def test_syntax_errors_say_where() -> None:
    with pytest.raises(JsonInputError) as bad:
        loads('{"a": 1,\n "b": }')
    e = bad.value
    assert (e.kind, e.line, e.column, e.detail) == ("syntax", 2, 7, "Expecting value")
    assert str(e) == "Expecting value at line 2 column 7"


def test_invalid_utf8_and_size() -> None:
    with pytest.raises(JsonInputError) as bad:
        loads(b'{"a": "\xff"}')
    assert bad.value.kind == "utf8" and "byte 7" in str(bad.value)
    with pytest.raises(JsonInputError) as big:
        loads(b"[" + b"1," * 100 + b"1]", max_bytes=100)
    assert big.value.kind == "size" and "over the limit of 100" in str(big.value)


def test_lone_surrogates_become_replacement_characters() -> None:
    """`"\\ud800"` loads as a str no UTF-8 writer accepts (an echoed JSON-RPC id raised
    UnicodeEncodeError): U+FFFD instead; a proper pair is kept."""
    assert loads('{"id": "\\ud800", "k\\udc00": ["\\ud83d\\ude00"]}') == {
        "id": "\ufffd",
        "k\ufffd": ["\U0001f600"],
    }
    for value in (loads('"\\udfff x"'), loads(b'["a\\uDBFF"]')):
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # no UnicodeEncodeError


def test_loads_lines_keeps_the_good_lines_in_order() -> None:
    good = [b'{"a": 1}', b'{"b": "[[["}', b"[2]"]
    assert loads_lines(good) == [{"a": 1}, {"b": "[[["}, [2]]
    mixed = [
        good[0],
        b"[" * 50_000,
        b'{"c": NaN}',
        b"\xff",
        nested(200).encode(),
        good[1],
        b'{"s": "\\ud800"}',
    ]
    assert loads_lines(mixed) == [{"a": 1}, {"b": "[[["}, {"s": "\ufffd"}]
    # `1,2` is two values in one batch, and no JSON document on its own line
    assert loads_lines([b'{"a": 1}', b"1,2", b"[3]"]) == [{"a": 1}, [3]]


def test_the_module_is_the_one_parser_of_protocol_lines() -> None:
    """Both stdio protocols read through run.json_lines, which parses with json_input."""
    from picobot_tui.run import json_lines

    line = json_lines.parse_line(b"[" * 400_000)
    assert line.problem is not None and "nested" in line.problem and not line.too_long
    assert json_lines.parse_line(b'{"x": 1}').value == {"x": 1}
    big = json_lines.parse_line(b"[1, 2, 3]", max_bytes=4)
    assert big.too_long and big.problem
    assert json_input.MAX_DEPTH == 128
