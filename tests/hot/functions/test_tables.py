"""The per-version tables and the version registry, against Heat's template
classes (heat/engine/hot/template.py) and parameter schemas."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from convection.common.diagnostics import Diagnostics
from convection.hot.functions import cfn, collections, conditionals, refs, strings
from convection.hot.functions.base import parse
from convection.hot.functions.tables import (
    CONDITION_FUNCTIONS,
    CONDITION_TABLES,
    FUNCTIONS,
    VERSIONS,
    introduced_in,
    versions_having,
)
from convection.hot.versions import all_versions, function_descriptions, get_version, latest_version

if TYPE_CHECKING:
    from conftest import Hot

HOT_2014 = {
    "get_attr",
    "get_file",
    "get_param",
    "get_resource",
    "list_join",
    "resource_facade",
    "str_replace",
    "Fn::Select",
}
CFN_2013 = {
    "Fn::GetAZs",
    "Ref",
    "Fn::Join",
    "Fn::Split",
    "Fn::Replace",
    "Fn::Base64",
    "Fn::MemberListToMap",
    "Fn::ResourceFacade",
}
NEWTON = {
    "digest",
    "get_attr",
    "get_file",
    "get_param",
    "get_resource",
    "list_join",
    "map_merge",
    "map_replace",
    "repeat",
    "resource_facade",
    "str_replace",
    "str_split",
    "yaql",
    "if",
}
OCATA = NEWTON | {"filter", "str_replace_strict"}
PIKE = OCATA | {"make_url", "list_concat", "list_concat_unique", "str_replace_vstrict", "contains"}
#: The working (not removed) functions of each version: hot_spec.rst's lists.
WORKING = {
    "2013-05-23": HOT_2014 | CFN_2013,
    "2014-10-16": HOT_2014,
    "2015-04-30": HOT_2014 | {"repeat", "digest"},
    "2015-10-15": (HOT_2014 - {"Fn::Select"}) | {"repeat", "digest", "str_split"},
    "2016-04-08": (HOT_2014 - {"Fn::Select"}) | {"repeat", "digest", "str_split", "map_merge"},
    "2016-10-14": NEWTON,
    "2017-02-24": OCATA,
    "2017-09-01": PIKE,
    "2018-03-02": PIKE,
    "2018-08-31": PIKE,
    "2021-04-16": PIKE,
}
CONDITIONS_NEWTON = {"get_param", "equals", "not", "and", "or"}
CONDITION_SETS = {
    "2016-10-14": CONDITIONS_NEWTON,
    "2017-02-24": CONDITIONS_NEWTON,
    "2017-09-01": CONDITIONS_NEWTON | {"yaql", "contains"},
    "2018-03-02": CONDITIONS_NEWTON | {"yaql", "contains"},
    "2018-08-31": CONDITIONS_NEWTON | {"yaql", "contains"},
    "2021-04-16": CONDITIONS_NEWTON | {"yaql", "contains"},
}


def working(version: str) -> set[str]:
    return {n for n, fn in FUNCTIONS[version].items() if fn is not cfn.Removed}


def removed(version: str) -> set[str]:
    return {n for n, fn in FUNCTIONS[version].items() if fn is cfn.Removed}


@pytest.mark.parametrize("version", VERSIONS)
def test_function_table(version: str) -> None:
    assert working(version) == WORKING[version]
    expected_removed = (
        (CFN_2013 | {"Fn::Select"}) - WORKING[version] if version > VERSIONS[0] else set()
    )
    assert removed(version) == expected_removed


@pytest.mark.parametrize("version", VERSIONS)
def test_condition_functions(version: str) -> None:
    assert set(CONDITION_FUNCTIONS[version]) == CONDITION_SETS.get(version, set())


@pytest.mark.parametrize("version", [v for v in VERSIONS if v >= "2016-10-14"])
def test_condition_table_refuses_other_functions(version: str) -> None:
    table = CONDITION_TABLES[version]
    for name in FUNCTIONS[version]:
        if name in CONDITION_FUNCTIONS[version]:
            assert table[name] is CONDITION_FUNCTIONS[version][name]
        elif FUNCTIONS[version][name] is cfn.Removed:
            assert table[name] is cfn.Removed
        else:
            assert table[name] is conditionals.NotACondition, name


VARIANTS: list[tuple[str, str, type[Any]]] = [
    ("get_attr", "2013-05-23", refs.GetAttr),
    ("get_attr", "2015-04-30", refs.GetAttr),
    ("get_attr", "2015-10-15", refs.GetAttrAll),
    ("list_join", "2015-04-30", strings.Join),
    ("list_join", "2015-10-15", strings.JoinMultiple),
    ("str_replace", "2015-04-30", strings.Replace),
    ("str_replace", "2015-10-15", strings.ReplaceJson),
    ("repeat", "2016-04-08", collections.Repeat),
    ("repeat", "2016-10-14", collections.RepeatWithMap),
    ("repeat", "2017-02-24", collections.RepeatWithMap),
    ("repeat", "2017-09-01", collections.RepeatWithNestedLoop),
    ("repeat", "2021-04-16", collections.RepeatWithNestedLoop),
]


@pytest.mark.parametrize(("name", "version", "cls"), VARIANTS)
def test_versions_choose_the_variant(name: str, version: str, cls: type[Any]) -> None:
    assert FUNCTIONS[version][name] is cls


def test_if_is_bound_per_version() -> None:
    for version in versions_having("if"):
        fn = FUNCTIONS[version]["if"]
        assert issubclass(fn, conditionals.If)
        assert fn.conditions is CONDITION_TABLES[version]
        assert fn.nullable is (version == "2021-04-16")


@pytest.mark.parametrize(
    ("name", "since"),
    [
        ("get_param", "2013-05-23"),
        ("Fn::Select", "2013-05-23"),
        ("Ref", "2013-05-23"),
        ("repeat", "2015-04-30"),
        ("digest", "2015-04-30"),
        ("str_split", "2015-10-15"),
        ("map_merge", "2016-04-08"),
        ("yaql", "2016-10-14"),
        ("if", "2016-10-14"),
        ("equals", None),  # a condition function only: plain data elsewhere
        ("not", None),
        ("filter", "2017-02-24"),
        ("make_url", "2017-09-01"),
        ("contains", "2017-09-01"),
        ("Fn::GetAtt", None),
        ("whatever", None),
    ],
)
def test_introduced_in(name: str, since: str | None) -> None:
    assert introduced_in(name) == since


def test_a_newer_function_is_plain_data_in_an_older_version(hot: Hot) -> None:
    checked = 0
    for version in VERSIONS:
        table = FUNCTIONS[version]
        for name in sorted({n for v in VERSIONS for n in FUNCTIONS[v]} - set(table)):
            seen: list[tuple[str, tuple[Any, ...]]] = []
            diags = Diagnostics()
            snippet = {"value": {name: ["a", {"get_param": "p"}]}}
            tree = parse(snippet, table, diags, on_unknown=lambda n, p, s=seen: s.append((n, p)))
            assert diags.items == []
            assert tree["value"][name][0] == "a"
            assert isinstance(tree["value"][name][1], refs.GetParam)  # still parsed inside
            assert (name, ("value",)) in seen
            assert introduced_in(name) is not None and introduced_in(name) > version
            checked += 1
    assert checked > 50


# -- the registry -----------------------------------------------------------


def test_versions_and_aliases() -> None:
    names = [v.name for v in all_versions()]
    assert names == list(VERSIONS)
    assert [v.order for v in all_versions()] == list(range(len(VERSIONS)))
    aliases = {a: v.name for v in all_versions() for a in v.aliases}
    assert aliases == {
        "newton": "2016-10-14",
        "ocata": "2017-02-24",
        "pike": "2017-09-01",
        "queens": "2018-03-02",
        "rocky": "2018-08-31",
        "wallaby": "2021-04-16",
    }
    for alias, name in aliases.items():
        assert get_version(alias) is get_version(name)
    assert get_version("2016-10-14").key == "heat_template_version.2016-10-14"  # type: ignore[union-attr]
    assert latest_version() is get_version("wallaby")
    for bad in ["2016-10-15", "Newton", "heat_template_version.2016-10-14", None, 20161014]:
        assert get_version(bad) is None


def version(name: str) -> Any:
    found = get_version(name)
    assert found is not None
    return found


@pytest.mark.parametrize("name", VERSIONS)
def test_sections_and_keys(name: str) -> None:
    v = version(name)
    newton = name >= "2016-10-14"
    base_sections = {
        "heat_template_version",
        "description",
        "parameter_groups",
        "parameters",
        "resources",
        "outputs",
    }
    assert v.sections == base_sections | ({"conditions"} if newton else set())
    base_keys = {
        "type",
        "properties",
        "metadata",
        "depends_on",
        "deletion_policy",
        "update_policy",
        "description",
    }
    assert v.resource_keys == base_keys | ({"external_id", "condition"} if newton else set())
    assert v.output_keys == {"description", "value"} | ({"condition"} if newton else set())
    policies = {"Delete", "Retain", "Snapshot"}
    assert v.deletion_policies == policies | ({"delete", "retain", "snapshot"} if newton else set())
    assert v.canonical_deletion_policy("Retain") == "Retain"
    assert v.canonical_deletion_policy("retain") == ("Retain" if newton else None)
    assert v.has_feature("conditions") is newton
    assert v.functions is FUNCTIONS[name]
    assert v.condition_functions is CONDITION_FUNCTIONS[name]
    assert v.condition_table is CONDITION_TABLES[name]


@pytest.mark.parametrize("name", VERSIONS)
def test_parameter_keys_and_constraints(name: str) -> None:
    v = version(name)
    keys = {"type", "description", "default", "schema", "constraints", "hidden", "label"}
    # immutable is in HOT's base parameter schema: every version accepts it
    keys.add("immutable")
    assert v.parameter_keys == keys | ({"tags"} if name >= "2018-03-02" else set())
    constraints = {
        "description",
        "length",
        "range",
        "allowed_values",
        "allowed_pattern",
        "custom_constraint",
    }
    expected = constraints | ({"modulo"} if name >= "2017-02-24" else set())
    assert v.constraint_keys == expected


def test_function_descriptions() -> None:
    pike = version("pike")
    listed = function_descriptions(pike)
    names = [row["functions"] for row in listed]
    assert set(names) == PIKE
    assert all(row["description"] for row in listed)
    with_conditions = function_descriptions(pike, with_condition_functions=True)
    assert {row["functions"] for row in with_conditions} == PIKE | CONDITION_SETS["2017-09-01"]
    old = {row["functions"] for row in function_descriptions(version("2014-10-16"))}
    assert old == HOT_2014  # removed functions are not listed
