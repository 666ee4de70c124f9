"""Constraints: Heat's checks, messages, type fit, API shape and parsing."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

from convection.common.diagnostics import Diagnostics, Mark
from convection.hot.constraints import (
    MASK,
    AllowedPattern,
    AllowedValues,
    Constraint,
    CustomConstraint,
    InvalidConstraint,
    Length,
    Modulo,
    Range,
    bool_from_string,
    check_all,
    custom_constraint_names,
    parse_constraints,
    register_custom_constraint,
    str_to_num,
    to_schema_type,
    unregister_custom_constraint,
)
from convection.hot.loader import load

# --- helpers ---------------------------------------------------------------


def parse(
    text: str, param_type: str = "string", *, allow_modulo: bool = True, prefix: str = ""
) -> tuple[tuple[Constraint, ...] | None, Diagnostics]:
    """Parse ``constraints:`` of the single parameter ``p`` in a YAML snippet."""
    doc = load(textwrap.dedent(text), "c.yaml")
    diags = Diagnostics()
    data = doc.data["parameters"]["p"]["constraints"]
    path = ("parameters", "p", "constraints")
    found = parse_constraints(
        data, param_type, path, doc.source, diags, allow_modulo=allow_modulo, fit_prefix=prefix
    )
    return found, diags


def one_error(diags: Diagnostics) -> str:
    assert len(diags.errors) == 1, [str(d) for d in diags]
    return diags.errors[0].message


@pytest.fixture
def zero() -> Iterator[str]:
    register_custom_constraint("test.zero", lambda v: v == "0")
    yield "test.zero"
    unregister_custom_constraint("test.zero")


# --- number and boolean reading ---------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("3", 3), ("3.5", 3.5), (" 7 ", 7), ("1e3", 1000.0), (4, 4), (2.5, 2.5), (True, True)],
)
def test_str_to_num_reads_int_then_float(raw: Any, expected: Any) -> None:
    result = str_to_num(raw)
    assert result == expected
    assert type(result) is type(expected)


def test_str_to_num_errors_are_pythons() -> None:
    with pytest.raises(ValueError, match="could not convert string to float: 'abc'"):
        str_to_num("abc")
    with pytest.raises(TypeError, match="not 'list'"):
        str_to_num(["1"])


@pytest.mark.parametrize("raw", ["1", "t", "true", "on", "y", "yes", " YES ", "True", True, 1])
def test_bool_from_string_true(raw: Any) -> None:
    assert bool_from_string(raw) is True


@pytest.mark.parametrize("raw", ["0", "f", "false", "off", "n", "no", "FALSE", False, 0])
def test_bool_from_string_false(raw: Any) -> None:
    assert bool_from_string(raw) is False


def test_bool_from_string_message_lists_acceptable_values() -> None:
    with pytest.raises(ValueError) as err:
        bool_from_string("maybe")
    assert str(err.value) == (
        "Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', "
        "'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"
    )
    with pytest.raises(ValueError, match=r"Unrecognized value '\*\*\*\*\*\*'"):
        bool_from_string("secret", shown=MASK)


def test_to_schema_type_by_type_name() -> None:
    assert to_schema_type(5, "string") == "5"
    assert to_schema_type("5", "number") == 5
    assert to_schema_type("5", "Integer") == 5
    assert to_schema_type("yes", "boolean") is True
    assert to_schema_type([1], "comma_delimited_list") == [1]
    with pytest.raises(ValueError, match=r'Value "5\.5" is invalid for data type "Integer"\.'):
        to_schema_type("5.5", "Integer")
    with pytest.raises(ValueError, match=r'Value "x" is invalid for data type "number"\.'):
        to_schema_type("x", "number")


# --- range -----------------------------------------------------------------


def test_range_bounds_inclusive() -> None:
    r = Range(30000, 50000)
    assert r.validate(29999) == "29999 is out of range (min: 30000, max: 50000)"
    assert r.validate(50001) == "50001 is out of range (min: 30000, max: 50000)"
    assert all(r.validate(v) is None for v in (30000, 40000, 50000, "40000"))


def test_range_one_sided_and_description() -> None:
    assert Range(min=4).validate("3") == "3 is out of range (min: 4, max: None)"
    assert Range(max=2).validate(3.5) == "3.5 is out of range (min: None, max: 2)"
    assert Range(max=2, description="wibble").validate(3) == "wibble"
    assert Range(max=2, description="wibble").validate(1) is None


def test_range_unreadable_value_reports_conversion_not_description() -> None:
    r = Range(1, 2, description="wibble")
    assert r.validate("abc") == "could not convert string to float: 'abc'"
    assert r.validate("abc", redact=True) == "could not convert string to float: '******'"


def test_range_redacts_value() -> None:
    assert Range(max=2).validate(3, redact=True) == "****** is out of range (min: None, max: 2)"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "A range constraint must have a min value and/or a max value specified."),
        ({"min": "1"}, "min/max must be numeric"),
    ],
)
def test_range_definition_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidConstraint, match=message):
        Range(**kwargs)


# --- length ----------------------------------------------------------------


def test_length_strings_lists_maps() -> None:
    c = Length(2, 3)
    assert c.validate("ab") is None
    assert c.validate("a") == "length (1) is out of range (min: 2, max: 3)"
    assert c.validate(["a", "b", "c", "d"]) == "length (4) is out of range (min: 2, max: 3)"
    assert c.validate({"a": 1, "b": 2}) is None
    assert Length(min=4, description="too short").validate("foo") == "too short"


def test_length_message_never_shows_value() -> None:
    assert Length(max=2).validate("secret", redact=True) == (
        "length (6) is out of range (min: None, max: 2)"
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "A length constraint must have a min value and/or a max value specified."),
        ({"min": 1.5}, "min/max length must be integral"),
        ({"max": "2"}, "min/max must be numeric"),
    ],
)
def test_length_definition_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidConstraint, match=message):
        Length(**kwargs)


# --- modulo ----------------------------------------------------------------


def test_modulo_odd_numbers() -> None:
    m = Modulo(2, 1, description="Value must be an odd number")
    assert [m.validate(v) for v in (1, 3, 777, "5")] == [None] * 4
    assert m.validate(2) == "Value must be an odd number"
    assert m.validate(100) == "Value must be an odd number"


def test_modulo_message_keeps_heats_stray_parenthesis() -> None:
    assert Modulo(2, 1).validate(2) == "2 is not a multiple of 2 with an offset of 1)"


def test_modulo_negative_step_and_offset() -> None:
    m = Modulo(-3, -1)
    assert m.validate(5) is None  # 5 % -3 == -1, as Python (and Heat) compute it
    assert m.validate(4) == "4 is not a multiple of -3 with an offset of -1)"


@pytest.mark.parametrize(
    ("step", "offset", "message"),
    [
        (None, 1, "A modulo constraint must have a step value and an offset value specified."),
        (2, None, "A modulo constraint must have a step value and an offset value specified."),
        ("2", 1, "step/offset must be numeric"),
        (2.5, 1, "step/offset must be integer"),
        (0, 0, "step cannot be 0."),
        (2, 2, r"offset must be smaller \(by absolute value\) than step."),
        (3, -1, "step and offset must be both positive or both negative."),
    ],
)
def test_modulo_definition_errors(step: Any, offset: Any, message: str) -> None:
    with pytest.raises(InvalidConstraint, match=message):
        Modulo(step, offset)


def test_modulo_integral_floats_are_accepted() -> None:
    assert Modulo(2.0, 1.0).validate(3) is None


# --- allowed values ---------------------------------------------------------


def test_allowed_values_strings() -> None:
    c = AllowedValues(["foo", "bar", "baz"])
    assert c.validate("bar", "string") is None
    assert c.validate("blarg", "string") == '"blarg" is not an allowed value [foo, bar, baz]'
    assert AllowedValues(["a"], description="wibble").validate("b", "string") == "wibble"


def test_allowed_values_compare_in_the_schema_type() -> None:
    assert AllowedValues(["1", "3", "5"]).validate("5", "number") is None
    assert AllowedValues([1, 3, 5]).validate("5", "number") is None
    assert AllowedValues(["1", "3"]).validate("2", "number") == '"2" is not an allowed value [1, 3]'
    assert AllowedValues([111]).validate("111", "string") is None
    assert AllowedValues([True]).validate("yes", "boolean") is None
    assert AllowedValues([False]).validate("yes", "boolean") is not None


def test_allowed_values_list_needs_every_item() -> None:
    c = AllowedValues(["foo", "bar", "baz"])
    assert c.validate(["baz", "foo"], "comma_delimited_list") is None
    assert c.validate(["foo", "blarg"], "comma_delimited_list") == (
        "\"['foo', 'blarg']\" is not an allowed value [foo, bar, baz]"
    )


def test_allowed_values_unreadable_value_and_redaction() -> None:
    c = AllowedValues([1, 2], description="wibble")
    assert c.validate("x", "number") == 'Value "x" is invalid for data type "number".'
    assert c.validate("x", "number", redact=True) == (
        'Value "******" is invalid for data type "number".'
    )
    assert AllowedValues(["a"]).validate("pw", "string", redact=True) == (
        '"******" is not an allowed value [a]'
    )


@pytest.mark.parametrize("bad", ["abc", {"a": 1}, 5])
def test_allowed_values_must_be_a_list(bad: Any) -> None:
    with pytest.raises(InvalidConstraint, match="AllowedValues must be a list"):
        AllowedValues(bad)


def test_allowed_values_stores_a_tuple() -> None:
    assert AllowedValues(["a", "b"]).values == ("a", "b")


# --- allowed pattern --------------------------------------------------------


def test_allowed_pattern_matches_whole_value() -> None:
    c = AllowedPattern("[a-z]*")
    assert c.validate("foo") is None
    assert c.validate("1foo") == '"1foo" does not match pattern "[a-z]*"'
    assert c.validate("foo1") == '"foo1" does not match pattern "[a-z]*"'


def test_allowed_pattern_is_match_then_end_not_fullmatch() -> None:
    # re.fullmatch("a|ab", "ab") succeeds; Heat's match-then-check-end does not.
    assert AllowedPattern("a|ab").validate("ab") == '"ab" does not match pattern "a|ab"'
    assert AllowedPattern("ab|a").validate("ab") is None


def test_allowed_pattern_description_and_redaction() -> None:
    assert AllowedPattern("[a-z]+", description="letters").validate("1") == "letters"
    assert AllowedPattern("[a-z]+").validate("S3cret", redact=True) == (
        '"******" does not match pattern "[a-z]+"'
    )


def test_allowed_pattern_non_string_value() -> None:
    assert AllowedPattern("[0-9]+", description="d").validate(8080) == (
        "expected string or bytes-like object, got 'int'"
    )


def test_allowed_pattern_definition_errors() -> None:
    with pytest.raises(InvalidConstraint, match="AllowedPattern must be a string"):
        AllowedPattern(["foo", "bar"])  # type: ignore[arg-type]
    with pytest.raises(InvalidConstraint, match="not a valid regular expression"):
        AllowedPattern("[a-")


# --- custom constraints -----------------------------------------------------


def test_custom_constraint_registered(zero: str) -> None:
    c = CustomConstraint(zero)
    assert c.validate("0") is None
    assert c.validate("1") == f'"1" does not validate {zero}'
    assert CustomConstraint(zero, description="Value must be zero").validate("2") == (
        "Value must be zero"
    )


def test_custom_constraint_unregistered_name_fails_when_checked() -> None:
    c = CustomConstraint("no.such")  # built in Python, bypassing the template check
    assert c.validate("m1.small") == '"m1.small" does not validate no.such (constraint not found)'
    assert c.validate("x", redact=True) == (
        '"******" does not validate no.such (constraint not found)'
    )


def test_heat_service_constraints_are_known_and_accept_any_value() -> None:
    # Convection cannot ask Nova whether a flavor exists; the name must still
    # validate, since every Heat template using it does.
    assert CustomConstraint("nova.flavor").validate("m1.small") is None
    assert CustomConstraint("glance.image").validate("anything") is None


def test_custom_constraint_reasons_and_redaction() -> None:
    register_custom_constraint("test.reason", lambda v: "it is bad: " + str(v))
    register_custom_constraint("test.noreason", lambda v: "")
    try:
        assert CustomConstraint("test.reason").validate("x") == (
            "Error validating value 'x': it is bad: x"
        )
        assert CustomConstraint("test.reason").validate("pw", redact=True) == (
            "Error validating value '******': it is bad: ******"
        )
        assert CustomConstraint("test.noreason").validate("x") == "Error validating value 'x'"
    finally:
        unregister_custom_constraint("test.reason")
        unregister_custom_constraint("test.noreason")


def test_registry_refuses_silent_replacement(zero: str) -> None:
    with pytest.raises(ValueError, match="already registered"):
        register_custom_constraint(zero, lambda v: True)
    register_custom_constraint(zero, lambda v: True, replace=True)
    assert CustomConstraint(zero).validate("anything") is None
    assert zero in custom_constraint_names()


def test_custom_constraint_name_must_be_a_string() -> None:
    with pytest.raises(InvalidConstraint):
        CustomConstraint(["a"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("ip_addr", "10.0.0.1", None),
        ("ip_addr", "::1", None),
        ("ip_addr", "010.0.0.1", "Error validating value '010.0.0.1': Invalid IP address"),
        ("ip_addr", "10.0.0", "Error validating value '10.0.0': Invalid IP address"),
        ("ip_addr", 5, "Error validating value '5': Invalid IP address"),
        ("mac_addr", "fa:16:3e:00:00:01", None),
        ("mac_addr", "fa-16-3e-00-00-01", None),
        ("mac_addr", "fa16.3e00.0001", None),
        ("mac_addr", "fa163e000001", None),
        (
            "mac_addr",
            "fa:16:3e:00:00",
            "Error validating value 'fa:16:3e:00:00': Invalid MAC address.",
        ),
        ("net_cidr", "10.0.0.0/24", None),
        ("net_cidr", "10.0.0.1/24", None),
        ("net_cidr", "2001:db8::/32", None),
        (
            "net_cidr",
            "10.0.0.1",
            "Error validating value '10.0.0.1': '10.0.0.1' isn't a recognized IP subnet cidr, "
            "'10.0.0.1/32' is recommended",
        ),
        (
            "net_cidr",
            "nope",
            "Error validating value 'nope': Invalid net cidr invalid IPNetwork nope ",
        ),
        ("iso_8601", "2015-10-10T10:10:10Z", None),
        ("iso_8601", "2015-10-10 10:10:10.5+05:30", None),
        ("iso_8601", "20151010", None),
        ("iso_8601", "2015-02-30", "Error validating value '2015-02-30'"),
        ("iso_8601", "yesterday", "Error validating value 'yesterday'"),
        ("timezone", "Europe/Paris", None),
        ("timezone", "europe/paris", None),
        ("timezone", "", None),
        (
            "timezone",
            "Mars/Base",
            "Error validating value 'Mars/Base': Invalid timezone: 'Mars/Base'",
        ),
    ],
)
def test_built_in_custom_constraints(name: str, value: Any, message: str | None) -> None:
    assert CustomConstraint(name).validate(value) == message


def test_built_in_reason_is_redacted() -> None:
    assert CustomConstraint("net_cidr").validate("10.0.0.9", redact=True) == (
        "Error validating value '******': '******' isn't a recognized IP subnet cidr, "
        "'******/32' is recommended"
    )


# --- type fit, API shape, value semantics ------------------------------------

FIT = {
    Length(1, 2): {"string", "comma_delimited_list", "json", "String", "List", "Map"},
    Range(1, 2): {"number", "Number", "Integer"},
    Modulo(2, 1): {"number", "Number", "Integer"},
    AllowedValues(["a"]): {"string", "number", "boolean", "comma_delimited_list"}
    | {"String", "Number", "Integer", "Boolean", "List"},
    AllowedPattern("a"): {"string", "String"},
    CustomConstraint("x"): {"string", "number", "boolean", "comma_delimited_list"}
    | {"String", "Number", "Integer", "Boolean", "List"},
}
ALL_TYPES = ["string", "number", "comma_delimited_list", "json", "boolean"]
ALL_TYPES += ["String", "Number", "Integer", "Boolean", "List", "Map", "Any"]


@pytest.mark.parametrize("constraint", list(FIT))
def test_which_constraint_fits_which_type(constraint: Constraint) -> None:
    assert {t for t in ALL_TYPES if constraint.fits_type(t)} == FIT[constraint]


def test_to_api_shapes() -> None:
    assert Range(max=10, description="a range").to_api() == {
        "range": {"max": 10},
        "description": "a range",
    }
    assert Length(5, 10).to_api() == {"length": {"min": 5, "max": 10}}
    assert Modulo(2, 1, description="a modulo").to_api() == {
        "modulo": {"step": 2, "offset": 1},
        "description": "a modulo",
    }
    assert AllowedValues(["foo", "bar"]).to_api() == {"allowed_values": ["foo", "bar"]}
    assert AllowedPattern("[A-Za-z0-9]", description="").to_api() == {
        "allowed_pattern": "[A-Za-z0-9]",
        "description": "",
    }
    assert CustomConstraint("ip_addr").to_api() == {"custom_constraint": "ip_addr"}


def test_empty_description_does_not_replace_the_message() -> None:
    assert Range(max=1, description="").validate(2) == "2 is out of range (min: None, max: 1)"


def test_constraints_are_frozen_values() -> None:
    r = Range(1, 2)
    assert r == Range(1, 2)
    assert hash(r) == hash(Range(1, 2))
    with pytest.raises(AttributeError):
        r.min = 5  # type: ignore[misc]


def test_check_all_stops_at_first_and_can_skip_custom() -> None:
    cs: list[Constraint] = [Length(min=8), AllowedPattern("[a-z]+"), CustomConstraint("nope")]
    assert check_all(cs, "abc", "string") == "length (3) is out of range (min: 8, max: None)"
    assert check_all(cs, "abcdefghi", "string") == (
        '"abcdefghi" does not validate nope (constraint not found)'
    )
    assert check_all(cs, "abcdefghi", "string", skip_custom=True) is None


# --- parsing from a template -------------------------------------------------


def test_parse_every_kind() -> None:
    found, diags = parse(
        """\
        parameters:
          p:
            constraints:
              - length: {min: 6, max: 16}
                description: six to sixteen
              - allowed_pattern: "[a-z]+"
              - allowed_values: [abcdefg, hijklmn]
              - custom_constraint: ip_addr
        """
    )
    assert not diags.items
    assert found == (
        Length(6, 16, description="six to sixteen"),
        AllowedPattern("[a-z]+"),
        AllowedValues(["abcdefg", "hijklmn"]),
        CustomConstraint("ip_addr"),
    )


def test_parse_numbers_given_as_strings() -> None:
    found, diags = parse(
        """\
        parameters:
          p:
            constraints:
              - range: {min: "1", max: "2.5"}
              - modulo: {step: 2, offset: 1}
        """,
        "number",
    )
    assert not diags.items
    assert found == (Range(1, 2.5), Modulo(2, 1))


@pytest.mark.parametrize(
    ("entry", "ptype", "message", "where"),
    [
        ("[foo]", "string", "Invalid parameter constraints, expected a mapping", "c.yaml:5:8"),
        (
            "[{allowed_valus: [foo, bar]}]",
            "string",
            "Invalid key 'allowed_valus' for parameter constraints",
            "c.yaml:5:9",
        ),
        ("[{description: a constraint}]", "string", "No constraint expressed", "c.yaml:5:8"),
        ("[{range: foo}]", "number", "Invalid range constraint, expected a mapping", "c.yaml:5:9"),
        ("[{range: {min: 1, foo: bar}}]", "number", "Invalid key 'foo' for range constraint", ""),
        ("[{length: foo}]", "string", "Invalid length constraint, expected a mapping", ""),
        ("[{length: {min: 1, foo: b}}]", "string", "Invalid key 'foo' for length constraint", ""),
        ("[{length: {min: 1.5}}]", "string", "min/max length must be integral", ""),
        ("[{range: {}}]", "number", "A range constraint must have a min value", ""),
        ("[{range: {min: abc}}]", "number", "could not convert string to float: 'abc'", ""),
        ("[{allowed_pattern: [foo, bar]}]", "string", "AllowedPattern must be a string", ""),
        ("[{allowed_values: foo}]", "string", "AllowedValues must be a list", ""),
        ("[{modulo: {step: 2}}]", "number", "A modulo constraint must have a step value", ""),
        ("[{modulo: {step: 2, offset: 1, x: 1}}]", "number", "Invalid key 'x' for modulo", ""),
        ("[{modulo: {step: 0, offset: 0}}]", "number", "step cannot be 0.", ""),
    ],
)
def test_parse_errors_are_heats_and_located(
    entry: str, ptype: str, message: str, where: str
) -> None:
    text = f"parameters:\n  p:\n    constraints:\n\n      {entry}\n"
    found, diags = parse(text, ptype)
    assert found is None
    assert one_error(diags).startswith(message)
    if where:
        assert str(diags.errors[0].mark) == where


def test_parse_error_path_points_into_the_entry() -> None:
    _, diags = parse(
        """\
        parameters:
          p:
            constraints:
              - range: {min: 1, foo: bar}
        """,
        "number",
    )
    d = diags.errors[0]
    assert d.path == ("parameters", "p", "constraints", 0, "range", "foo")
    assert d.mark == Mark("c.yaml", 4, 25)


def test_parse_reports_every_bad_entry() -> None:
    found, diags = parse(
        """\
        parameters:
          p:
            constraints:
              - foo: 1
              - length: {}
              - allowed_values: [a]
        """
    )
    assert found is None
    assert [d.path[-2:] for d in diags.errors] == [(0, "foo"), (1, "length")]


def test_constraints_must_be_a_list() -> None:
    found, diags = parse("parameters: {p: {constraints: 1}}")
    assert found is None
    assert one_error(diags) == "Invalid constraints, expected a list"


def test_misfit_is_reported_with_prefix() -> None:
    found, diags = parse(
        """\
        parameters:
          p:
            constraints:
              - range: {min: 1}
        """,
        "string",
        prefix="Parameter 'p' is invalid: ",
    )
    assert found is None
    assert one_error(diags) == "Parameter 'p' is invalid: Range constraint invalid for string"
    assert diags.errors[0].mark == Mark("c.yaml", 4, 9)  # the entry


def test_unknown_type_name_skips_the_fit_check() -> None:
    found, diags = parse("parameters: {p: {constraints: [{range: {min: 1}}]}}", "Unicode")
    assert not diags.items
    assert found == (Range(min=1),)


def test_modulo_before_2017_is_no_constraint() -> None:
    text = "parameters: {p: {constraints: [{modulo: {step: 2, offset: 1}}]}}"
    found, diags = parse(text, "number", allow_modulo=False)
    assert found is None
    assert one_error(diags) == "No constraint expressed"
    assert "2017-02-24" in diags.warnings[0].message


def test_modulo_before_2017_beside_another_is_ignored() -> None:
    text = "parameters: {p: {constraints: [{modulo: {step: 2, offset: 1}, range: {min: 1}}]}}"
    found, diags = parse(text, "number", allow_modulo=False)
    assert found == (Range(min=1),)
    assert not diags.errors
    assert len(diags.warnings) == 1


def test_one_entry_naming_two_constraints_uses_heats_precedence() -> None:
    text = "parameters: {p: {constraints: [{length: {min: 1}, range: {min: 2}}]}}"
    found, diags = parse(text, "number")
    assert found == (Range(min=2),)
    assert diags.warnings[0].message == "Heat uses only range here and ignores length"


def test_non_string_description_becomes_text() -> None:
    found, _ = parse("parameters: {p: {constraints: [{length: {min: 1}, description: 5}]}}")
    assert found == (Length(min=1, description="5"),)
