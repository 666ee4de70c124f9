"""Parameters: schemas per version, coercion, resolution, values, groups,
immutability and the template-validate output, all as Heat does them."""

from __future__ import annotations

import copy
import pickle
import textwrap
from collections.abc import Mapping
from typing import Any

import pytest

from convection.common.diagnostics import Diagnostics, Mark
from convection.hot.constraints import (
    AllowedPattern,
    AllowedValues,
    Length,
    Modulo,
    Range,
    register_custom_constraint,
    unregister_custom_constraint,
)
from convection.hot.loader import Document, load
from convection.hot.parameters import (
    ParameterGroup,
    ParameterSchema,
    ParameterValues,
    changed_immutable,
    coerce,
    immutable_error,
    parse_parameter_groups,
    parse_parameters,
    resolve_parameters,
    validate_output,
)
from convection.hot.versions import TemplateVersion

# --- helpers ---------------------------------------------------------------

#: Heat's HOTParamSchema keys; 2018-03-02 adds tags.
HOT_KEYS = frozenset(
    {"type", "description", "default", "schema", "constraints", "hidden", "label", "immutable"}
)


def version(name: str, keys: frozenset[str] = HOT_KEYS) -> TemplateVersion:
    empty: frozenset[str] = frozenset()
    return TemplateVersion(
        name=name,
        aliases=(),
        functions={},
        condition_functions={},
        sections=empty,
        resource_keys=empty,
        output_keys=empty,
        parameter_keys=keys,
        deletion_policies=empty,
    )


V2013 = version("2013-05-23")
V2016 = version("2016-10-14")
V2017 = version("2017-02-24")
V2018 = version("2018-03-02", HOT_KEYS | {"tags"})


def load_doc(text: str) -> Document:
    return load(textwrap.dedent(text), "t.yaml")


def schemas_of(
    text: str, ver: TemplateVersion = V2018
) -> tuple[dict[str, ParameterSchema], Diagnostics]:
    doc = load_doc(text)
    diags = Diagnostics()
    return parse_parameters(doc.data.get("parameters"), ver, doc.source, diags), diags


def messages(diags: Diagnostics) -> list[str]:
    return [d.message for d in diags.errors]


def resolve(
    schemas: Mapping[str, ParameterSchema],
    supplied: Mapping[str, Any] | None = None,
    defaults: Mapping[str, Any] | None = None,
    *,
    strict: bool = True,
    stack_name: str = "test_stack",
) -> tuple[ParameterValues, Diagnostics]:
    diags = Diagnostics()
    values = resolve_parameters(
        schemas,
        supplied or {},
        defaults or {},
        stack_name=stack_name,
        stack_id="1234",
        project_id="proj",
        diags=diags,
        strict=strict,
    )
    return values, diags


def one(ptype: str, **extra: Any) -> dict[str, ParameterSchema]:
    return {"p": ParameterSchema("p", ptype, **extra)}


# --- the section and its keys, per version -----------------------------------


def test_a_full_parameter() -> None:
    schemas, diags = schemas_of(
        """\
        parameters:
          flavor:
            type: string
            label: Flavor
            description: which flavor
            default: m1.small
            hidden: false
            immutable: true
            tags: [compute, size]
            constraints:
              - allowed_values: [m1.small, m1.large]
                description: small or large
        """
    )
    assert not diags.items
    assert schemas["flavor"] == ParameterSchema(
        name="flavor",
        type="string",
        label="Flavor",
        description="which flavor",
        default="m1.small",
        hidden=False,
        immutable=True,
        tags=("compute", "size"),
        constraints=(AllowedValues(["m1.small", "m1.large"], description="small or large"),),
    )
    assert not schemas["flavor"].required


@pytest.mark.parametrize("ptype", ["string", "number", "comma_delimited_list", "json", "boolean"])
def test_every_type_name(ptype: str) -> None:
    schemas, diags = schemas_of(f"parameters: {{p: {{type: {ptype}}}}}")
    assert not diags.items
    assert schemas["p"].type == ptype
    assert schemas["p"].required


def test_unknown_key_is_located() -> None:
    schemas, diags = schemas_of(
        """\
        heat_template_version: 2013-05-23
        parameters:
          flavor:
            type: string
            colour: red
        """,
        V2013,
    )
    assert messages(diags) == ["Invalid key 'colour' for parameter (flavor)"]
    d = diags.errors[0]
    assert d.path == ("parameters", "flavor", "colour")
    assert d.mark == Mark("t.yaml", 5, 5)
    assert str(d).startswith("t.yaml:5:5 parameters.flavor.colour: ")
    assert not schemas["flavor"].valid


@pytest.mark.parametrize("ver", [V2013, V2016, V2017])
def test_tags_only_from_2018_03_02(ver: TemplateVersion) -> None:
    _, diags = schemas_of("parameters: {p: {type: string, tags: [a]}}", ver)
    assert messages(diags) == ["Invalid key 'tags' for parameter (p)"]
    assert "2018-03-02" in diags.warnings[0].message


def test_tags_must_be_a_list() -> None:
    _, diags = schemas_of("parameters: {p: {type: string, tags: a}}")
    assert messages(diags) == ["Tags property should be a list for parameter: p"]
    assert diags.errors[0].path == ("parameters", "p", "tags")


@pytest.mark.parametrize("ver", [V2013, V2018])
def test_immutable_hidden_label_and_schema_keys_in_every_version(ver: TemplateVersion) -> None:
    text = "parameters: {p: {type: string, immutable: true, hidden: true, label: L, schema: {}}}"
    schemas, diags = schemas_of(text, ver)
    assert not diags.items
    assert schemas["p"].immutable and schemas["p"].hidden


def test_missing_type() -> None:
    schemas, diags = schemas_of("parameters: {broken: {description: Hi!}}")
    assert messages(diags) == ["Missing parameter type for parameter: broken"]
    assert not schemas["broken"].valid


@pytest.mark.parametrize("bad", ["Unicode", "String", "list", "null"])
def test_invalid_type(bad: str) -> None:
    _, diags = schemas_of(f"parameters: {{p: {{type: {bad}}}}}")
    shown = "None" if bad == "null" else bad
    assert messages(diags) == [f"Invalid type ({shown})"]
    assert diags.errors[0].path == ("parameters", "p", "type")


def test_parameter_must_be_a_mapping() -> None:
    schemas, diags = schemas_of("parameters: {Foo: {type: string}, NoAttr: No attribute.}")
    assert messages(diags) == ["Invalid parameter (NoAttr), expected a mapping"]
    assert schemas["Foo"].valid and not schemas["NoAttr"].valid


def test_section_must_be_a_mapping() -> None:
    schemas, diags = schemas_of("parameters: [a, b]")
    assert schemas == {}
    assert messages(diags) == [
        '"parameters" must contain a map of parameter maps. Found a [list] instead'
    ]


def test_empty_section() -> None:
    assert schemas_of("parameters:")[0] == {}
    assert schemas_of("description: none")[0] == {}


def test_all_problems_of_all_parameters_are_reported() -> None:
    _, diags = schemas_of("parameters: {a: {foo: 1}, b: {type: strin, constraints: 1}}")
    assert messages(diags) == [
        "Invalid key 'foo' for parameter (a)",
        "Missing parameter type for parameter: a",
        "Invalid parameter constraints for parameter b, expected a list",
        "Invalid type (strin)",
    ]


def test_constraint_errors_keep_heats_wording() -> None:
    _, diags = schemas_of(
        """\
        parameters:
          p:
            type: string
            constraints:
               - allowed_valus: [foo, bar]
            default: foo
        """
    )
    assert messages(diags) == ["Invalid key 'allowed_valus' for parameter constraints"]
    assert diags.errors[0].mark == Mark("t.yaml", 5, 10)


@pytest.mark.parametrize(
    ("ptype", "constraint", "name"),
    [
        ("string", "range: {min: 1}", "Range"),
        ("string", "modulo: {step: 2, offset: 1}", "Modulo"),
        ("number", "length: {min: 1}", "Length"),
        ("number", "allowed_pattern: a", "AllowedPattern"),
        ("json", "allowed_values: [a]", "AllowedValues"),
        ("json", "custom_constraint: ip_addr", "CustomConstraint"),
        ("boolean", "length: {min: 1}", "Length"),
        ("comma_delimited_list", "allowed_pattern: a", "AllowedPattern"),
    ],
)
def test_constraint_that_does_not_fit_the_type(ptype: str, constraint: str, name: str) -> None:
    _, diags = schemas_of(f"parameters: {{p: {{type: {ptype}, constraints: [{{{constraint}}}]}}}}")
    assert messages(diags) == [f"Parameter 'p' is invalid: {name} constraint invalid for {ptype}"]


def test_modulo_needs_2017_02_24() -> None:
    text = "parameters: {p: {type: number, constraints: [{modulo: {step: 2, offset: 1}}]}}"
    schemas, diags = schemas_of(text, V2017)
    assert not diags.items
    assert schemas["p"].constraints == (Modulo(2, 1),)
    _, diags = schemas_of(text, V2016)
    assert messages(diags) == ["No constraint expressed"]


def test_hidden_and_immutable_follow_heats_truthiness_with_a_warning() -> None:
    schemas, diags = schemas_of("parameters: {p: {type: string, hidden: 'false', immutable: 0}}")
    assert schemas["p"].hidden is True
    assert schemas["p"].immutable is False
    assert not diags.errors
    assert [w.message for w in diags.warnings] == [
        "hidden should be a boolean; Heat reads 'false' as true",
        "immutable should be a boolean; Heat reads 0 as false",
    ]


# --- template defaults -------------------------------------------------------


@pytest.mark.parametrize(
    ("ptype", "allowed", "default"),
    [
        ("string", "[foo]", "default"),
        ("number", "[42]", "13"),
        ("comma_delimited_list", "[foo]", "d,e,f"),
        ("boolean", "[false]", "true"),
    ],
)
def test_invalid_default_uses_the_description(ptype: str, allowed: str, default: str) -> None:
    text = f"""\
        parameters:
          p:
            type: {ptype}
            default: {default}
            constraints:
              - allowed_values: {allowed}
                description: wibble
        """
    schemas, diags = schemas_of(text)
    shown = "True" if default == "true" else default
    assert messages(diags) == [f"Parameter 'p' is invalid: Invalid default {shown} (wibble)"]
    assert diags.errors[0].path == ("parameters", "p", "default")
    assert diags.errors[0].mark == Mark("t.yaml", 4, 5)
    assert schemas["p"].valid and not schemas["p"].default_valid


def test_invalid_default_messages() -> None:
    _, diags = schemas_of(
        """\
        parameters:
          port: {type: number, default: 15, constraints: [{range: {min: 30000, max: 50000}}]}
          odd: {type: number, default: 2, constraints: [{modulo: {step: 2, offset: 1}}]}
          names: {type: comma_delimited_list, default: "a,b", constraints: [{allowed_values: [a]}]}
          bad: {type: comma_delimited_list, default: 5, constraints: [{length: {min: 1}}]}
          pw: {type: string, hidden: true, default: secret, constraints: [{allowed_values: [x]}]}
        """
    )
    assert messages(diags) == [
        "Parameter 'port' is invalid: Invalid default 15 "
        "(15 is out of range (min: 30000, max: 50000))",
        "Parameter 'odd' is invalid: Invalid default 2 "
        "(2 is not a multiple of 2 with an offset of 1))",
        "Parameter 'names' is invalid: Invalid default a,b "
        "(\"['a', 'b']\" is not an allowed value [a])",
        "Parameter 'bad' is invalid: Default must be a comma-delimited list string: "
        "'int' object has no attribute 'split'",
        "Parameter 'pw' is invalid: Invalid default ****** "
        '("******" is not an allowed value [x])',
    ]


def test_default_is_checked_against_constraints_only() -> None:
    # Heat does not check a default's type until the default is used.
    schemas, diags = schemas_of("parameters: {n: {type: number, default: abc}}")
    assert not diags.items
    _, diags = resolve(schemas)
    assert messages(diags) == ["Parameter 'n' is invalid: could not convert string to float: 'abc'"]


def test_default_skips_custom_constraints() -> None:
    register_custom_constraint("test.never", lambda v: False)
    try:
        text = """\
            parameters:
              p: {type: string, default: foo, constraints: [{custom_constraint: test.never}]}
            """
        schemas, diags = schemas_of(text)
        assert not diags.items
        _, diags = resolve(schemas)  # but a used default is checked in full
        assert messages(diags) == ["Parameter 'p' is invalid: \"foo\" does not validate test.never"]
    finally:
        unregister_custom_constraint("test.never")


def test_unknown_custom_constraint_name_is_an_error_at_its_place() -> None:
    _, diags = schemas_of(
        "parameters:\n  f:\n    type: string\n    constraints:\n"
        "      - custom_constraint: nova.flavour\n"
    )
    (diag,) = diags.items
    assert diag.path == ("parameters", "f", "constraints", 0, "custom_constraint")
    assert diag.message.startswith('Unknown custom_constraint "nova.flavour"')


def test_json_default_length_counts_raw_text_as_heat_does() -> None:
    _, diags = schemas_of(
        """parameters: {j: {type: json, default: '{"a": 1}', constraints: [{length: {max: 1}}]}}"""
    )
    assert messages(diags) == [
        "Parameter 'j' is invalid: Invalid default {\"a\": 1} "
        "(length (8) is out of range (min: None, max: 1))"
    ]


def test_list_default_items_are_compared_as_text() -> None:
    text = "parameters: {l: {type: comma_delimited_list, default: [1, 3], constraints: "
    text += "[{allowed_values: ['1', '3', '5']}]}}"
    _, diags = schemas_of(text)
    assert not diags.items


# --- coercion ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("ptype", "raw", "expected"),
    [
        ("string", "test\u2665", "test\u2665"),
        ("string", 111, "111"),
        ("string", True, "True"),
        ("number", "3", 3),
        ("number", "3.5", 3.5),
        ("number", 3.5, 3.5),
        ("number", " 10 ", 10),
        ("comma_delimited_list", "baz,foo,bar", ["baz", "foo", "bar"]),
        ("comma_delimited_list", "a, b", ["a", " b"]),
        ("comma_delimited_list", "", []),
        ("comma_delimited_list", [1, 3, 5], ["1", "3", "5"]),
        ("json", '{"foo": "bar", "items": [1, 2, 3]}', {"foo": "bar", "items": [1, 2, 3]}),
        ("json", {"foo": "bar"}, {"foo": "bar"}),
        ("json", '["fizz", "buzz"]', ["fizz", "buzz"]),
        ("json", ["fizz", "buzz"], ["fizz", "buzz"]),
        ("json", {1: "a"}, {"1": "a"}),
        ("json", "", ""),
    ],
)
def test_coerce(ptype: str, raw: Any, expected: Any) -> None:
    result = coerce(ptype, raw)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize("raw", ["1", "t", "true", "on", "y", "yes", True, 1])
def test_coerce_boolean_true(raw: Any) -> None:
    assert coerce("boolean", raw) is True


@pytest.mark.parametrize("raw", ["0", "f", "false", "off", "n", "no", False, 0])
def test_coerce_boolean_false(raw: Any) -> None:
    assert coerce("boolean", raw) is False


@pytest.mark.parametrize(
    ("ptype", "raw", "message"),
    [
        ("number", "str", "could not convert string to float: 'str'"),
        ("number", ["foo"], "int() argument must be a string"),
        ("boolean", "foo", "Unrecognized value 'foo', acceptable values are: '0', '1'"),
        ("boolean", 2, "Unrecognized value '2'"),
        ("comma_delimited_list", 0, "Value must be a comma-delimited list string: 'int' object"),
        ("json", "I am not a map", "Value must be valid JSON: Expecting value: line 1 column 1"),
        ("json", {"f": len}, "Value must be valid JSON: Object of type builtin_function"),
    ],
)
def test_coerce_errors(ptype: str, raw: Any, message: str) -> None:
    with pytest.raises(ValueError) as err:
        coerce(ptype, raw)
    assert str(err.value).startswith(message)


def test_coerce_redacts_the_value() -> None:
    with pytest.raises(ValueError, match=r"'\*\*\*\*\*\*'$"):
        coerce("number", "secret", redact=True)
    with pytest.raises(ValueError, match=r"^Unrecognized value '\*\*\*\*\*\*'"):
        coerce("boolean", "secret", redact=True)


# --- resolution --------------------------------------------------------------

PRECEDENCE = [
    # type, template default, parameter_defaults, user value, expected per level
    ("comma_delimited_list", "4,2", "7,7", "1,1,1", [["4", "2"], ["7", "7"], ["1", "1", "1"]]),
    ("number", 42, 77, 111, [42, 77, 111]),
    ("string", "42", "77", "111", ["42", "77", "111"]),
    ("json", {"4": "2"}, {"7": "7"}, {"1": "11"}, [{"4": "2"}, {"7": "7"}, {"1": "11"}]),
    ("boolean", False, False, True, [False, False, True]),
    ("boolean", False, True, False, [False, True, False]),
    ("boolean", True, False, False, [True, False, False]),
]


@pytest.mark.parametrize(("ptype", "default", "pdefault", "user", "expected"), PRECEDENCE)
def test_user_beats_parameter_defaults_beats_template(
    ptype: str, default: Any, pdefault: Any, user: Any, expected: list[Any]
) -> None:
    schemas = one(ptype, default=default)
    assert resolve(schemas)[0].value("p") == expected[0]
    assert resolve(schemas, defaults={"p": pdefault})[0].value("p") == expected[1]
    values, diags = resolve(schemas, {"p": user}, {"p": pdefault})
    assert values.value("p") == expected[2]
    assert not diags.items


def test_none_counts_as_not_given() -> None:
    values, diags = resolve(one("string", default="d"), {"p": None}, {"p": None})
    assert values.value("p") == "d"
    assert not diags.items


def test_empty_values_are_values() -> None:
    values, _ = resolve(one("string", default="d"), {"p": ""})
    assert values.value("p") == ""
    values, _ = resolve(one("comma_delimited_list", default="a"), {"p": ""})
    assert values.value("p") == []


def test_parameter_defaults_satisfy_a_required_parameter() -> None:
    values, diags = resolve(one("number"), defaults={"p": "5"})
    assert values.value("p") == 5
    assert not diags.items


def test_missing_and_unknown_parameters() -> None:
    doc = load_doc(
        """\
        parameters:
          User: {type: string}
          Defaulted: {type: string, default: foobar}
        """
    )
    diags = Diagnostics()
    schemas = parse_parameters(doc.data["parameters"], V2018, doc.source, diags)
    values = resolve_parameters(
        schemas,
        {"Foo": "wibble"},
        {"Unused": "ignored"},
        stack_name="s",
        stack_id="i",
        project_id="p",
        source=doc.source,
        diags=diags,
    )
    assert messages(diags) == [
        "The Parameter (Foo) was not defined in template.",
        "The Parameter (User) was not provided.",
    ]
    assert diags.errors[1].mark == Mark("t.yaml", 2, 3)
    assert diags.errors[0].mark == Mark("t.yaml", 1, 1)  # the section it is missing from
    assert values.value("Defaulted") == "foobar"
    assert "User" not in values


def test_constraint_failure_names_the_parameter_and_is_located() -> None:
    doc = load_doc(
        """\
        parameters:
          testparam:
            type: string
            constraints: [{allowed_pattern: "[a-z]*"}]
        """
    )
    diags = Diagnostics()
    schemas = parse_parameters(doc.data["parameters"], V2013, doc.source, diags)
    resolve_parameters(
        schemas,
        {"testparam": "234"},
        {},
        stack_name="s",
        stack_id="i",
        project_id="p",
        source=doc.source,
        diags=diags,
    )
    assert messages(diags) == [
        'Parameter \'testparam\' is invalid: "234" does not match pattern "[a-z]*"'
    ]
    assert diags.errors[0].path == ("parameters", "testparam")
    assert diags.errors[0].mark == Mark("t.yaml", 2, 3)


@pytest.mark.parametrize(
    ("ptype", "constraints", "value", "message"),
    [
        ("string", (Length(min=4, description="wibble"),), "foo", "wibble"),
        ("string", (Length(max=2),), "foo", "length (3) is out of range (min: None, max: 2)"),
        ("string", (AllowedValues(["foo", "bar"]),), "blarg", '"blarg" is not an allowed value'),
        ("number", (Range(3, 3),), "4", "4 is out of range (min: 3, max: 3)"),
        ("number", (AllowedValues(["1", "3", "5"]),), "2", '"2" is not an allowed value [1, 3, 5]'),
        ("number", (Modulo(2, 1),), 4, "4 is not a multiple of 2 with an offset of 1)"),
        ("comma_delimited_list", (AllowedValues(["foo"]),), "foo,blarg", "\"['foo', 'blarg']\""),
        (
            "json",
            (Length(min=3),),
            {"foo": "bar"},
            "length (1) is out of range (min: 3, max: None)",
        ),
        ("boolean", (AllowedValues([False]),), "yes", '"yes" is not an allowed value [False]'),
    ],
)
def test_constraint_failures(ptype: str, constraints: Any, value: Any, message: str) -> None:
    _, diags = resolve(one(ptype, constraints=constraints), {"p": value})
    assert len(diags.errors) == 1
    assert diags.errors[0].message.startswith(f"Parameter 'p' is invalid: {message}")


def test_constraints_pass() -> None:
    schemas = {
        "s": ParameterSchema("s", "string", constraints=(AllowedPattern("[a-z]+"), Length(1, 5))),
        "n": ParameterSchema("n", "number", constraints=(Range(1, 9), Modulo(2, 1))),
        "l": ParameterSchema("l", "comma_delimited_list", constraints=(AllowedValues(["a", "b"]),)),
        "b": ParameterSchema("b", "boolean", constraints=(AllowedValues([True]),)),
    }
    values, diags = resolve(schemas, {"s": "abc", "n": "7", "l": "a,b,a", "b": "on"})
    assert not diags.items
    assert [values.value(n) for n in "snlb"] == ["abc", 7, ["a", "b", "a"], True]


def test_first_failing_constraint_wins() -> None:
    constraints = (
        Length(8, 16, description="length"),
        AllowedPattern("[a-zA-Z]+", description="letters"),
        AllowedPattern("[a-z]+[a-zA-Z]*", description="lowercase first"),
    )
    schemas = one("string", constraints=constraints)
    for value, expected in [
        ("wp", "length"),
        ("abcdefgh1", "letters"),
        ("Abcdefghi", "lowercase first"),
    ]:
        _, diags = resolve(schemas, {"p": value})
        assert messages(diags) == [f"Parameter 'p' is invalid: {expected}"]
    for good in ("abcdefghi", "abcdefghI"):
        assert not resolve(schemas, {"p": good})[1].items


def test_hidden_values_never_appear_in_errors() -> None:
    schemas = {
        "a": ParameterSchema("a", "string", hidden=True, constraints=(AllowedValues(["x"]),)),
        "b": ParameterSchema("b", "number", hidden=True),
        "c": ParameterSchema("c", "boolean", hidden=True),
        "d": ParameterSchema("d", "string", hidden=True, constraints=(Range(max=1),)),
    }
    _, diags = resolve(schemas, {"a": "hunter2", "b": "hunter2", "c": "hunter2", "d": "hunter2"})
    assert len(diags.errors) == 4
    assert all("hunter2" not in str(d) for d in diags)
    assert all("******" in d.message for d in diags.errors)


def test_pseudo_parameters() -> None:
    values, _ = resolve({})
    assert values.value("OS::stack_name") == "test_stack"
    assert values.value("OS::stack_id") == "1234"
    assert values.value("OS::project_id") == "proj"
    assert all(values.is_pseudo(n) for n in values.names())
    values, _ = resolve({}, stack_name="")
    assert "OS::stack_name" not in values


def test_pseudo_parameters_cannot_be_supplied() -> None:
    _, diags = resolve({}, {"OS::stack_name": "x"})
    assert messages(diags) == ["The Parameter (OS::stack_name) was not defined in template."]


def test_non_strict_is_template_validate_mode() -> None:
    schemas = {
        "req": ParameterSchema("req", "string"),
        "num": ParameterSchema("num", "number"),
        "pat": ParameterSchema("pat", "string", constraints=(AllowedPattern("[a-z]+"),)),
        "js": ParameterSchema("js", "json"),
    }
    values, diags = resolve(schemas, {"num": "abc", "pat": "123", "js": "{"}, strict=False)
    assert messages(diags) == [
        "Parameter 'js' is invalid: Value must be valid JSON: "
        "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    ]
    assert values.value("pat") == "123"
    assert "req" not in values and "num" not in values


def test_broken_definitions_are_not_reported_again() -> None:
    schemas, diags = schemas_of(
        """\
        parameters:
          broken: {type: strin}
          bad_default: {type: string, default: x, constraints: [{allowed_values: [y]}]}
        """
    )
    assert len(diags.errors) == 2
    values, more = resolve(schemas, {"broken": "value"})
    assert more.errors == []  # only upstream markers
    assert more.has_errors
    assert "broken" not in values and "bad_default" not in values


def test_resolution_without_a_source_map_has_no_marks() -> None:
    _, diags = resolve(one("string"))
    assert diags.errors[0].mark is None
    assert diags.errors[0].path == ("parameters", "p")


# --- values ------------------------------------------------------------------


@pytest.fixture
def values() -> ParameterValues:
    schemas = {
        "user": ParameterSchema("user", "string"),
        "password": ParameterSchema("password", "string", hidden=True, immutable=True),
        "tags": ParameterSchema("tags", "json"),
    }
    found, diags = resolve(schemas, {"user": "admin", "password": "hunter2", "tags": {"a": [1]}})
    assert not diags.items
    return found


def test_values_read_by_name(values: ParameterValues) -> None:
    assert values.value("user") == "admin"
    assert values.value("password") == "hunter2"
    assert set(values.names()) == {
        "user",
        "password",
        "tags",
        "OS::stack_name",
        "OS::stack_id",
        "OS::project_id",
    }
    assert len(values) == 6
    with pytest.raises(KeyError):
        values.value("nope")


def test_values_flags(values: ParameterValues) -> None:
    assert values.is_hidden("password") and not values.is_hidden("user")
    assert values.is_immutable("password") and not values.is_immutable("user")
    assert values.is_pseudo("OS::stack_id") and not values.is_pseudo("user")


def test_hidden_values_are_redacted_everywhere_but_reveal(values: ParameterValues) -> None:
    assert values.redacted()["password"] == "******"
    assert values.redacted()["user"] == "admin"
    assert "hunter2" not in repr(values)
    assert "hunter2" not in str(values)
    assert "hunter2" not in repr(ParameterSchema("p", "string", default="hunter2", hidden=True))
    assert values.reveal()["password"] == "hunter2"


def test_values_are_immutable(values: ParameterValues) -> None:
    with pytest.raises(AttributeError):
        values._values = {}
    with pytest.raises(AttributeError):
        del values._values
    values.value("tags")["a"].append(2)
    values.reveal()["tags"]["a"].append(3)
    values.redacted()["tags"]["a"].append(4)
    assert values.value("tags") == {"a": [1]}
    source = {"x": [1]}
    built = ParameterValues(source)
    source["x"].append(2)
    assert built.value("x") == [1]


def test_values_copy_and_pickle(values: ParameterValues) -> None:
    for twin in (copy.copy(values), copy.deepcopy(values), pickle.loads(pickle.dumps(values))):
        assert twin == values and twin.is_hidden("password") and twin.is_pseudo("OS::stack_id")


def test_values_equality(values: ParameterValues) -> None:
    assert values == copy.copy(values)
    assert values != ParameterValues({})
    assert ParameterValues({"a": 1}, hidden=["a"]) != ParameterValues({"a": 1})
    with pytest.raises(TypeError):
        hash(values)


# --- immutable parameters on update --------------------------------------------


def immutable_values(**vals: Any) -> ParameterValues:
    schemas = {
        "fixed": ParameterSchema("fixed", "number", immutable=True),
        "free": ParameterSchema("free", "string"),
    }
    found, diags = resolve({k: v for k, v in schemas.items() if k in vals}, vals)
    assert not diags.items
    return found


def test_changed_immutable() -> None:
    old = immutable_values(fixed=1, free="a")
    assert changed_immutable(old, immutable_values(fixed=1, free="b")) == []
    assert changed_immutable(old, immutable_values(fixed=2, free="a")) == ["fixed"]
    assert changed_immutable(old, immutable_values(fixed="1", free="a")) == []  # coerced values
    assert changed_immutable(immutable_values(free="a"), immutable_values(fixed=2, free="a")) == []


def test_changed_immutable_reads_immutability_from_the_new_template() -> None:
    old = ParameterValues({"p": 1})
    assert changed_immutable(old, ParameterValues({"p": 2}, immutable=["p"])) == ["p"]
    assert (
        changed_immutable(ParameterValues({"p": 1}, immutable=["p"]), ParameterValues({"p": 2}))
        == []
    )


def test_pseudo_parameters_are_never_immutable() -> None:
    old = ParameterValues(
        {"OS::stack_id": "a"}, immutable=["OS::stack_id"], pseudo=["OS::stack_id"]
    )
    new = ParameterValues(
        {"OS::stack_id": "b"}, immutable=["OS::stack_id"], pseudo=["OS::stack_id"]
    )
    assert changed_immutable(old, new) == []


def test_immutable_error_wording() -> None:
    assert immutable_error(["param1", "param2"]) == (
        "The following parameters are immutable and may not be updated: param1, param2"
    )


# --- parameter groups -----------------------------------------------------------

GROUPS_TEMPLATE = """\
parameter_groups:
- label: Server Group
  description: A group of parameters for the server
  parameters:
  - InstanceType
  - KeyName
- label: Database Group
  parameters:
  - db_password
  - {bad}
parameters:
  InstanceType: {{type: string}}
  KeyName: {{type: string}}
  db_password: {{type: string, hidden: true}}
"""


def groups_of(text: str) -> tuple[list[ParameterGroup], Diagnostics]:
    doc = load_doc(text)
    diags = Diagnostics()
    schemas = parse_parameters(doc.data.get("parameters"), V2018, doc.source, diags)
    return parse_parameter_groups(
        doc.data.get("parameter_groups"), schemas, doc.source, diags
    ), diags


def test_valid_groups() -> None:
    groups, diags = groups_of(GROUPS_TEMPLATE.format(bad="OS::stack_id"))
    assert not diags.items
    assert groups[0] == ParameterGroup(
        "Server Group",
        "A group of parameters for the server",
        ("InstanceType", "KeyName"),
        {},
    )
    assert groups[1].parameters == ("db_password", "OS::stack_id")


def test_grouped_parameter_must_exist() -> None:
    _, diags = groups_of(GROUPS_TEMPLATE.format(bad="SomethingNotHere"))
    assert messages(diags) == [
        "Parameter Groups error: parameter_groups.Database Group: The grouped parameter "
        "SomethingNotHere does not reference a valid parameter."
    ]
    assert diags.errors[0].path == ("parameter_groups", 1, "parameters", 1)
    assert diags.errors[0].mark == Mark("t.yaml", 10, 5)


def test_stack_name_is_not_groupable_as_in_heat() -> None:
    _, diags = groups_of(GROUPS_TEMPLATE.format(bad="OS::stack_name"))
    assert len(diags.errors) == 1


def test_parameter_in_two_groups() -> None:
    _, diags = groups_of(GROUPS_TEMPLATE.format(bad="KeyName"))
    assert messages(diags) == [
        "Parameter Groups error: parameter_groups.Database Group: The KeyName parameter "
        "must be assigned to one parameter group only."
    ]


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        (
            "{a: b}",
            "Parameter Groups error: parameter_groups: The parameter_groups should be a list.",
        ),
        (
            "[{label: Server Group}]",
            "Parameter Groups error: parameter_groups.Server Group: "
            "The parameters must be provided for each parameter group.",
        ),
        (
            "[{description: no label}]",
            "Parameter Groups error: parameter_groups.: "
            "The parameters must be provided for each parameter group.",
        ),
        (
            "[{label: '7', parameters: KeyName}]",
            "Parameter Groups error: parameter_groups[7]: "
            "The parameters of parameter group should be a list.",
        ),
        (
            "[KeyName]",
            "Parameter Groups error: parameter_groups: Each parameter group must be a mapping.",
        ),
    ],
)
def test_group_shape_errors(groups: str, message: str) -> None:
    _, diags = groups_of(f"parameter_groups: {groups}\nparameters: {{KeyName: {{type: string}}}}")
    assert messages(diags) == [message]


@pytest.mark.parametrize("empty", ["", "[]", "{}", "''"])
def test_empty_groups_are_skipped(empty: str) -> None:
    groups, diags = groups_of(f"parameter_groups: {empty}\n")
    assert groups == [] and not diags.items


# --- template-validate output ------------------------------------------------------

VALIDATE_TEMPLATE = """\
parameter_groups:
- label: Sizing
  parameters: [flavor, count]
parameters:
  flavor:
    type: string
    label: Flavor
    description: the flavor
    default: m1.small
    tags: [compute]
    constraints:
      - allowed_values: [m1.small, m1.large]
        description: small or large
      - length: {min: 1, max: 20}
      - allowed_pattern: "m1\\\\..*"
        description: an m1
  count:
    type: number
    constraints:
      - range: {min: 1, max: 10}
      - modulo: {step: 2, offset: 1}
  password:
    type: string
    hidden: true
    default: s3cret
  enabled:
    type: boolean
    constraints: [{custom_constraint: iso_8601}]
  data:
    type: json
    default: {a: 1}
  names:
    type: comma_delimited_list
    constraints: [{length: {max: 3}, description: few}, {length: {min: 1}}]
"""


EXPECTED_VALIDATE = {
    "Parameters": {
        "flavor": {
            "Type": "String",
            "Description": "the flavor",
            "NoEcho": "false",
            "Label": "Flavor",
            "Default": "m1.large",
            "Tags": ["compute"],
            "AllowedValues": ["m1.small", "m1.large"],
            "MinLength": 1,
            "MaxLength": 20,
            "AllowedPattern": "m1\\..*",
            "ConstraintDescription": "small or large an m1",
        },
        "count": {
            "Type": "Number",
            "Description": "",
            "NoEcho": "false",
            "Label": "count",
            "Value": "3",
            "MinValue": 1,
            "MaxValue": 10,
            "Step": 2,
            "Offset": 1,
        },
        "password": {
            "Type": "String",
            "Description": "",
            "NoEcho": "true",
            "Label": "password",
            # Heat's format_validate_parameter: default() and user_value, unmasked.
            "Default": "s3cret",
            "Value": "hunter2",
        },
        "enabled": {
            "Type": "Boolean",
            "Description": "",
            "NoEcho": "false",
            "Label": "enabled",
            "CustomConstraint": "iso_8601",
        },
        "data": {
            "Type": "Json",
            "Description": "",
            "NoEcho": "false",
            "Label": "data",
            "Default": {"a": 1},
        },
        "names": {
            "Type": "CommaDelimitedList",
            "Description": "",
            "NoEcho": "false",
            "Label": "names",
            "MaxLength": 3,
            "MinLength": 1,
            "ConstraintDescription": "few",
        },
    },
    "ParameterGroups": [{"label": "Sizing", "parameters": ["flavor", "count"]}],
}


def test_validate_output_shape() -> None:
    doc = load_doc(VALIDATE_TEMPLATE)
    diags = Diagnostics()
    schemas = parse_parameters(doc.data["parameters"], V2018, doc.source, diags)
    groups = parse_parameter_groups(doc.data["parameter_groups"], schemas, doc.source, diags)
    assert not diags.items
    out = validate_output(
        schemas,
        groups,
        supplied={"count": "3", "enabled": "", "password": "hunter2"},
        parameter_defaults={"flavor": "m1.large", "nope": 1},
    )
    assert out == EXPECTED_VALIDATE
    assert out["Parameters"]["password"]["NoEcho"] == "true"  # the only mark, as in Heat


def test_validate_output_without_groups_or_values() -> None:
    schemas, _ = schemas_of("parameters: {p: {type: string}}")
    assert validate_output(schemas, []) == {
        "Parameters": {"p": {"Type": "String", "Description": "", "NoEcho": "false", "Label": "p"}}
    }


def test_validate_output_is_a_copy() -> None:
    schemas, _ = schemas_of("parameters: {p: {type: json, default: {a: [1]}}}")
    out = validate_output(schemas, [])
    out["Parameters"]["p"]["Default"]["a"].append(2)
    assert schemas["p"].default == {"a": [1]}


# --- the real version registry, when it is there ------------------------------------


def test_registry_parameter_keys_match_heat() -> None:
    versions = pytest.importorskip("convection.hot.versions")
    get_version = getattr(versions, "get_version", None)
    if get_version is None:
        pytest.skip("the version registry is not filled in yet")
    assert get_version("2013-05-23").parameter_keys == HOT_KEYS
    assert get_version("2017-02-24").parameter_keys == HOT_KEYS
    assert get_version("2018-03-02").parameter_keys == HOT_KEYS | {"tags"}
    assert get_version("2021-04-16").parameter_keys == HOT_KEYS | {"tags"}
