"""The CloudFormation functions of HOT 2013-05-23, and their removal."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from convection.hot.functions.base import dependencies, resolve
from convection.hot.functions.tables import VERSIONS

if TYPE_CHECKING:
    from conftest import Hot

OLD = "2013-05-23"
REMOVED_2014 = [
    "Fn::GetAZs",
    "Fn::Join",
    "Fn::Split",
    "Fn::Replace",
    "Fn::Base64",
    "Fn::MemberListToMap",
    "Fn::ResourceFacade",
    "Ref",
]
SELECT = [v for v in VERSIONS if v < "2015-10-15"]


def removed(name: str) -> str:
    return (
        "The template version is invalid: "
        f"The function {name} is not supported in this version of HOT."
    )


@pytest.mark.parametrize("version", [v for v in VERSIONS if v >= "2014-10-16"])
@pytest.mark.parametrize("name", REMOVED_2014)
def test_cfn_functions_are_removed_from_2014_10_16(hot: Hot, version: str, name: str) -> None:
    snippet = {name: ["a", "b"]}
    assert hot.validate(snippet, version) == [removed(name)]
    assert hot.error(snippet, version) == removed(name)
    assert list(dependencies(hot.tree({"Ref": "server"}, version))) == []


@pytest.mark.parametrize("version", [v for v in VERSIONS if v >= "2015-10-15"])
def test_select_is_removed_from_2015_10_15(hot: Hot, version: str) -> None:
    assert hot.validate({"Fn::Select": [0, ["a"]]}, version) == [removed("Fn::Select")]


@pytest.mark.parametrize("version", SELECT)
def test_select(hot: Hot, version: str) -> None:
    assert hot.evaluate({"Fn::Select": ["1", ["a", "b"]]}, version) == "b"
    assert hot.evaluate({"Fn::Select": [5, ["a"]]}, version) == ""
    assert hot.evaluate({"Fn::Select": ["k", {"k": "v"}]}, version) == "v"
    assert hot.evaluate({"Fn::Select": ["x", {"k": "v"}]}, version) == ""
    assert hot.evaluate({"Fn::Select": [0, '["j", "s"]']}, version) == "j"
    assert hot.evaluate({"Fn::Select": [0, ""]}, version) == ""
    assert hot.evaluate({"Fn::Select": [0, None]}, version) == ""
    assert hot.parse_error({"Fn::Select": [0]}, version) == (
        'Arguments to "Fn::Select" must be of the form [index, collection]'
    )
    assert hot.error({"Fn::Select": [0, {"k": "v"}]}, version) == (
        'Index to "Fn::Select" must be a string'
    )
    assert hot.error({"Fn::Select": ["x", ["a"]]}, version) == (
        'Index to "Fn::Select" must be an integer'
    )
    assert hot.error({"Fn::Select": [0, "not json"]}, version).startswith('"Fn::Select": ')
    assert hot.error({"Fn::Select": [0, "5"]}, version) == (
        "Arguments to Fn::Select not fully resolved"
    )


def test_ref_to_a_resource_or_a_parameter(hot: Hot) -> None:
    to_resource = hot.tree({"Ref": "server"}, OLD)
    to_parameter = hot.tree({"Ref": "flavor"}, OLD)
    names = {"resources": {"server": None}, "parameters": {"flavor"}}
    assert hot.diagnostics(to_resource, OLD, **names).items == []
    assert hot.diagnostics(to_parameter, OLD, **names).items == []
    assert list(dependencies(to_resource)) == ["server"]
    assert list(dependencies(to_parameter)) == []
    resolver = hot.resolver(ids={"server": "uuid"}, parameters={"flavor": "m1.small"})
    assert resolve(to_resource, resolver) == "uuid"
    assert resolve(to_parameter, resolver) == "m1.small"
    assert hot.validate({"Ref": "ghost"}, OLD, **names) == [
        'The specified reference "ghost" (in unknown) is incorrect.'
    ]


def test_join_split_replace_base64(hot: Hot) -> None:
    assert hot.evaluate({"Fn::Join": [",", ["a", "b"]]}, OLD) == "a,b"
    assert hot.error({"Fn::Join": [",", ["a", 1]]}, OLD) == "Items to join must be strings not 1"
    assert hot.evaluate({"Fn::Split": [",", "a,b"]}, OLD) == ["a", "b"]
    assert hot.parse_error({"Fn::Split": "a,b"}, OLD) == (
        'Incorrect arguments to "Fn::Split" should be: "Fn::Split" : [ ",", "str1,str2"]'
    )
    assert hot.error({"Fn::Split": [",", 5]}, OLD) == (
        "String to split must be string; got <class 'int'>"
    )
    assert hot.error({"Fn::Split": [{"get_param": "d"}, "a"]}, OLD, parameters={"d": ","}) == (
        "Delimiter for Fn::Split must be string"
    )
    replace = {"Fn::Replace": [{"$a": "1", "%b%": 2}, "$a and %b%"]}
    assert hot.evaluate(replace, OLD) == "1 and 2"
    assert hot.parse_error({"Fn::Replace": {"$a": "1"}}, OLD).startswith(
        'Incorrect arguments to "Fn::Replace" should be: '
    )
    assert hot.parse_error({"Fn::Replace": ["x", "y"]}, OLD) == (
        '"Fn::Replace" parameters must be a mapping'
    )
    assert hot.evaluate({"Fn::Base64": "plain text"}, OLD) == "plain text"
    assert hot.error({"Fn::Base64": ["x"]}, OLD) == '"Fn::Base64" argument must be a string'


def test_member_list_to_map(hot: Hot) -> None:
    members = [
        ".member.0.Name=color",
        ".member.0.Value=red",
        ".member.1.Name=size",
        ".member.1.Value=a=b",
        ".member.2.Name=orphan",
    ]
    snippet = {"Fn::MemberListToMap": ["Name", "Value", members]}
    assert hot.evaluate(snippet, OLD) == {"color": "red", "size": "a=b"}
    assert hot.parse_error({"Fn::MemberListToMap": ["Name", "Value"]}, OLD).startswith(
        "Wrong Arguments try: "
    )
    assert hot.parse_error({"Fn::MemberListToMap": [1, "Value", []]}, OLD) == (
        "Fn::MemberListToMap Key Name must be a string"
    )
    assert hot.error({"Fn::MemberListToMap": ["Name", "Value", [1]]}, OLD) == (
        "Member list items must be strings"
    )


def test_get_azs_and_resource_facade(hot: Hot) -> None:
    assert hot.evaluate({"Fn::GetAZs": ""}, OLD) == ["nova"]
    facades = {"metadata": {"m": 1}, "deletion_policy": "Retain", "update_policy": {}}
    assert hot.evaluate({"Fn::ResourceFacade": "Metadata"}, OLD, facades=facades) == {"m": 1}
    assert hot.evaluate({"Fn::ResourceFacade": "DeletionPolicy"}, OLD, facades=facades) == (
        "Retain"
    )
    assert hot.parse_error({"Fn::ResourceFacade": "metadata"}, OLD) == (
        'Incorrect arguments to "Fn::ResourceFacade" should be one of: '
        "Metadata, DeletionPolicy, UpdatePolicy"
    )


@pytest.mark.parametrize("name", ["Fn::GetAtt", "Fn::FindInMap", "Fn::If", "Fn::Equals"])
def test_other_cfn_functions_are_plain_data_in_hot(hot: Hot, name: str) -> None:
    for version in VERSIONS:
        assert hot.tree({name: ["a", "b"]}, version) == {name: ["a", "b"]}
