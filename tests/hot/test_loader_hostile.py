"""Inputs found by fuzzing (tests/test_fuzz.py) that once escaped the loader
as tracebacks or hung a later phase; each must now be a located error."""

from __future__ import annotations

import json

import pytest

from convection.common.errors import InvalidInput, LimitExceeded
from convection.common.limits import Limits
from convection.hot.loader import load
from convection.model.compiler import StackInputs
from convection.service.validate import validate_template


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("9" * 5000, "'99999999999999999999'... (5000 characters) cannot be read as a YAML int"),
        ("0x" + "f" * 5000, "cannot be read as a YAML int"),  # reads, but would not print
        ("1:" * 3000 + "1", "cannot be read as a YAML int"),  # base 60
        ("0b_", "'0b_' cannot be read as a YAML int"),
        ("!!int abc", "'abc' cannot be read as a YAML int"),
        ('!!float ""', "'' cannot be read as a YAML float"),
        ("!!bool maybe", "'maybe' cannot be read as a YAML bool"),
    ],
)
def test_numbers_python_cannot_read_are_located_errors(value: str, needle: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        load(f"a:\n  b: {value}\n", "n.yaml")
    (diag,) = caught.value.diagnostics
    assert needle in diag.message
    assert str(diag).startswith("n.yaml:2:6 a.b: ")


def test_a_bad_number_as_a_key_is_a_located_error() -> None:
    with pytest.raises(InvalidInput) as caught:
        load("!!int x: 1\n", "k.yaml")
    assert "'x' cannot be read as a YAML int" in str(caught.value)


def _laughs(levels: int) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_aliases_that_expand_past_the_size_limit_are_refused_before_any_walk() -> None:
    # Loading shared the data, but parsing functions (and every other walk)
    # visited each node once per path to it: this hung template validate.
    text = (
        "heat_template_version: 2021-04-16\n"
        + _laughs(8)
        + "resources:\n  r:\n    type: OS::Heat::Value\n    properties: {value: *a7}\n"
    )
    with pytest.raises(LimitExceeded) as caught:
        load(text, "laughs.yaml")
    assert "aliases expand the document to more than 524288 nodes" in str(caught.value)


def test_aliases_within_the_limit_still_load() -> None:
    doc = load(_laughs(5), "ok.yaml")  # 10^5 nodes when expanded
    assert doc.data["a4"][0] is doc.data["a3"]


def _deep_json(depth: int) -> str:
    value = "[" * depth + "]" * depth
    return (
        '{"heat_template_version": "2021-04-16", "resources": {"r": '
        '{"type": "OS::Heat::Value", "properties": {"value": ' + value + "}}}}"
    )


def test_json_has_the_same_depth_limit_as_yaml() -> None:
    # JSON bypassed the YAML builder's check, and 900 levels then overflowed
    # the stack of the function parser.
    with pytest.raises(LimitExceeded) as caught:
        load(_deep_json(900), "deep.json")
    (diag,) = caught.value.diagnostics
    assert diag.message == "nesting is deeper than 100 levels"
    assert diag.path[:5] == ("resources", "r", "properties", "value", 0)


def test_json_within_the_depth_limit_validates() -> None:
    body, _ = validate_template(StackInputs(load(_deep_json(90), "ok.json")))
    assert body["Description"] == "No description"  # Heat's, for none given
    assert json.loads(_deep_json(90))


@pytest.mark.parametrize(
    ("text", "where", "code"),
    [
        ("a: 1\nb: \x00x\n", "c.yaml:2:4", "#x0000"),
        ("a: \u00e9\u00e9\nb: \x07\n", "c.yaml:2:4", "#x0007"),  # counted in characters
        ("\x1b", "c.yaml:1:1", "#x001b"),
    ],
)
def test_a_control_character_is_a_located_error(text: str, where: str, code: str) -> None:
    """Found by tests/fuzz/fuzz_hot.py: YAML's reader error carried no mark
    (its position was a byte offset inside the message)."""
    with pytest.raises(InvalidInput) as caught:
        load(text, "c.yaml")
    (diag,) = caught.value.diagnostics
    assert str(diag) == (
        f"{where}: Error parsing template c.yaml unacceptable character {code}: "
        "control characters are not allowed"
    )


@pytest.mark.parametrize(
    ("text", "where", "code"),
    [("a: \ud800\n", "s.yaml:1:4", "D800"), ("a: 1\nb: x\udcff", "s.yaml:2:5", "DCFF")],
)
def test_a_lone_surrogate_is_a_located_error(text: str, where: str, code: str) -> None:
    """Found by tests/fuzz/fuzz_hot.py: a string template (a JSON body's
    ``"\\ud800"`` decodes to one) with an unpaired surrogate escaped the
    loader as UnicodeEncodeError."""
    with pytest.raises(InvalidInput) as caught:
        load(text, "s.yaml")
    (diag,) = caught.value.diagnostics
    assert str(diag) == f"{where}: the file is not UTF-8 text (an unpaired surrogate, U+{code})"


def test_the_size_limit_counts_utf8_bytes_not_characters() -> None:
    """Heat's max_template_size is in bytes: 40 two-byte characters are
    80 bytes, over a 64-byte limit, though they are 44 characters."""
    text = "a: " + "\u00e9" * 40 + "\n"
    with pytest.raises(LimitExceeded, match=r"Template size \(84 bytes\) exceeds maximum"):
        load(text, "u.yaml", limits=Limits(max_template_size=64))
    assert load(text, "u.yaml", limits=Limits(max_template_size=84)).data == {"a": "\u00e9" * 40}
