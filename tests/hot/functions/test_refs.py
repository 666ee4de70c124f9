"""get_param, get_resource, get_attr, get_file and resource_facade in every
version that has them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from convection.hot.functions.base import dependencies
from convection.hot.functions.tables import VERSIONS, versions_having

if TYPE_CHECKING:
    from conftest import Hot

ALL = VERSIONS
GET_ATTR_PAIR = [v for v in VERSIONS if v < "2015-10-15"]
GET_ATTR_ALL = [v for v in VERSIONS if v >= "2015-10-15"]
WEB_PORT = ("resources", "web", "properties", "port")
#: Where the harness's located helpers parse a snippet (its ``AT``).
AT = ("resources", "r", "properties", "value")
IF_THREE = [v for v in versions_having("if") if v < "2021-04-16"]
IF_NULLABLE = [v for v in versions_having("if") if v >= "2021-04-16"]


# -- get_param --------------------------------------------------------------


@pytest.mark.parametrize("version", versions_having("get_param"))
def test_get_param_value_and_paths(hot: Hot, version: str) -> None:
    params = {
        "name": "db",
        "cfg": {"a": {"b": [10, 20]}},
        "zones": ["az1", "az2"],
        "flag": True,
    }
    assert hot.evaluate({"get_param": "name"}, version, parameters=params) == "db"
    assert hot.evaluate({"get_param": "flag"}, version, parameters=params) is True
    assert hot.evaluate({"get_param": ["cfg", "a", "b", 1]}, version, parameters=params) == 20
    # a string key reads as an index into a list
    assert hot.evaluate({"get_param": ["zones", "1"]}, version, parameters=params) == "az2"
    assert hot.evaluate({"get_param": ["cfg", "a", "b", "0"]}, version, parameters=params) == 10
    # strings are sequences to Heat
    assert hot.evaluate({"get_param": ["name", 1]}, version, parameters=params) == "b"


@pytest.mark.parametrize(
    "path",
    [
        ["cfg", "missing"],
        ["cfg", "a", "b", 5],
        ["zones", "first"],
        ["flag", "x"],
        ["cfg", "a", 1.5],
        ["cfg", "a", "b", "1", "deeper"],
    ],
)
def test_get_param_path_that_leads_nowhere_is_empty_string(hot: Hot, path: list[object]) -> None:
    params = {"cfg": {"a": {"b": [10, 20]}}, "zones": ["az1"], "flag": True}
    assert hot.evaluate({"get_param": path}, parameters=params) == ""


def test_get_param_name_from_another_function(hot: Hot) -> None:
    params = {"which": "real", "real": "value"}
    snippet = {"get_param": {"get_param": "which"}}
    assert hot.evaluate(snippet, parameters=params) == "value"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], 'Function "get_param" must have arguments'),
        ("", 'Function "get_param" must have arguments'),
        ({"a": 1}, 'Argument to "get_param" must be string or list'),
        (7, 'Argument to "get_param" must be string or list'),
        ([1, "x"], 'Parameter name in "get_param" must be string'),
        ("missing", "The Parameter (missing) was not provided."),
    ],
)
@pytest.mark.parametrize("version", ["2013-05-23", "2016-10-14", "2021-04-16"])
def test_get_param_errors_when_resolving(
    hot: Hot, version: str, args: object, message: str
) -> None:
    assert hot.error({"get_param": args}, version, parameters={"p": 1}) == message


@pytest.mark.parametrize("version", IF_NULLABLE)
def test_get_param_of_a_dropped_if_has_no_arguments(hot: Hot, version: str) -> None:
    """A two-argument ``if`` whose condition is false drops its value; Heat
    hands the enclosing function null for it (function.resolve)."""
    snippet = {"get_param": {"if": [False, "p"]}}
    assert hot.error_at(snippet, version, parameters={"p": 1}) == (
        'Function "get_param" must have arguments',
        AT,
    )
    assert hot.evaluate({"get_param": {"if": [True, "p"]}}, version, parameters={"p": 1}) == 1
    # in a list the dropped item is removed: the path is what is left
    snippet = {"get_param": ["m", {"if": [False, "x"]}, "k"]}
    assert hot.evaluate(snippet, version, parameters={"m": {"k": 2}}) == 2


@pytest.mark.parametrize("version", IF_THREE)
def test_get_param_of_a_two_argument_if_before_2021_04_16(hot: Hot, version: str) -> None:
    assert hot.parse_error_at({"get_param": {"if": [False, "p"]}}, version) == (
        'Arguments to "if" must be of the form: [condition_name, value_if_true, value_if_false]',
        (*AT, "get_param"),
    )


@pytest.mark.parametrize("version", ALL)
def test_get_param_unknown_parameter_is_a_validation_error(hot: Hot, version: str) -> None:
    errors = hot.validate({"get_param": ["nope", "x"]}, version, parameters={"p"})
    assert errors == ["The Parameter (nope) was not provided."]
    assert hot.validate({"get_param": "p"}, version, parameters={"p"}) == []
    # a name computed by another function is checked when resolved
    assert hot.validate({"get_param": {"get_param": "p"}}, version, parameters={"p"}) == []


def test_get_param_has_no_dependencies(hot: Hot) -> None:
    assert list(dependencies(hot.tree({"get_param": "p"}))) == []


# -- get_resource -----------------------------------------------------------


@pytest.mark.parametrize("version", versions_having("get_resource"))
def test_get_resource(hot: Hot, version: str) -> None:
    tree = hot.tree({"get_resource": "server"}, version)
    assert list(dependencies(tree)) == ["server"]
    assert hot.evaluate({"get_resource": "server"}, version, ids={"server": "uuid-1"}) == "uuid-1"


@pytest.mark.parametrize("version", versions_having("get_resource"))
def test_get_resource_unknown_is_reported_where_it_is(hot: Hot, version: str) -> None:
    tree, _ = hot.parse({"get_resource": "nope"}, version, path=WEB_PORT)
    diags = hot.diagnostics(tree, version, resources={"server": None})
    assert [d.message for d in diags] == [
        'The specified reference "nope" (in web.Properties.port) is incorrect.'
    ]
    assert diags.items[0].path == WEB_PORT


def test_get_resource_of_a_computed_name(hot: Hot) -> None:
    snippet = {"get_resource": {"get_param": "which"}}
    assert list(dependencies(hot.tree(snippet))) == []
    assert hot.validate(snippet, parameters={"which"}) == []
    assert hot.evaluate(snippet, parameters={"which": "a"}, ids={"a": "id-a"}) == "id-a"
    assert hot.error(snippet, parameters={"which": "b"}, ids={"a": "id-a"}) == (
        'The specified reference "b" (in unknown) is incorrect.'
    )


# -- get_attr ---------------------------------------------------------------

ATTRS = {"server": {"first_address": "10.0.0.1", "networks": {"private": ["10.0.0.1", "fd::1"]}}}


@pytest.mark.parametrize("version", ALL)
def test_get_attr_value_and_path(hot: Hot, version: str) -> None:
    assert hot.evaluate({"get_attr": ["server", "first_address"]}, version, attributes=ATTRS) == (
        "10.0.0.1"
    )
    snippet = {"get_attr": ["server", "networks", "private", 1]}
    assert hot.evaluate(snippet, version, attributes=ATTRS) == "fd::1"


@pytest.mark.parametrize(
    "path",
    [["networks", "public"], ["networks", "private", 9], ["networks", "private", "0"]],
)
def test_get_attr_path_that_leads_nowhere_is_null(hot: Hot, path: list[object]) -> None:
    # unlike get_param, a string does not index a list
    assert hot.evaluate({"get_attr": ["server", *path]}, attributes=ATTRS) is None


@pytest.mark.parametrize("version", GET_ATTR_PAIR)
def test_get_attr_needs_an_attribute_before_2015_10_15(hot: Hot, version: str) -> None:
    assert hot.parse_error({"get_attr": ["server"]}, version) == (
        'Arguments to "get_attr" must be of the form [resource_name, attribute, (path), ...]'
    )
    assert hot.parse_error({"get_attr": "server"}, version) == (
        'Argument to "get_attr" must be a list'
    )


@pytest.mark.parametrize("version", GET_ATTR_ALL)
def test_get_attr_of_every_attribute_from_2015_10_15(hot: Hot, version: str) -> None:
    assert hot.evaluate({"get_attr": ["server"]}, version, attributes=ATTRS) == ATTRS["server"]
    assert hot.validate({"get_attr": ["server"]}, version, resources={"server": ["x"]}) == []
    assert hot.parse_error({"get_attr": []}, version) == (
        'Arguments to "get_attr" can be of the next forms: [resource_name] or '
        "[resource_name, attribute, (path), ...]"
    )
    assert hot.parse_error({"get_attr": {"a": "b"}}, version) == (
        'Argument to "get_attr" must be a list'
    )
    assert hot.parse_error({"get_attr": "server"}, version) == (
        'Argument to "get_attr" must be a list'
    )


@pytest.mark.parametrize("version", ALL)
def test_get_attr_validation(hot: Hot, version: str) -> None:
    resources = {"server": ["first_address", "networks"], "group": None}
    ok = hot.validate({"get_attr": ["server", "networks", "x"]}, version, resources=resources)
    assert ok == []
    # every Heat resource has "show"; a type with dynamic attributes allows any
    assert hot.validate({"get_attr": ["server", "show"]}, version, resources=resources) == []
    assert hot.validate({"get_attr": ["group", "anything"]}, version, resources=resources) == []
    assert hot.validate({"get_attr": ["server", "nope"]}, version, resources=resources) == [
        "The Referenced Attribute (server nope) is incorrect."
    ]
    assert hot.validate({"get_attr": ["ghost", "x"]}, version, resources=resources) == [
        'The specified reference "ghost" (in unknown) is incorrect.'
    ]


@pytest.mark.parametrize("version", ALL)
def test_get_attr_depends_on_its_resource(hot: Hot, version: str) -> None:
    tree = hot.tree({"get_attr": ["server", {"get_attr": ["other", "name"]}]}, version)
    assert sorted(dependencies(tree)) == ["other", "server"]


def test_get_attr_unknown_at_resolution(hot: Hot) -> None:
    assert hot.error({"get_attr": ["server", "nope"]}, attributes=ATTRS) == (
        "The Referenced Attribute (server nope) is incorrect."
    )
    assert hot.error({"get_attr": ["ghost", "x"]}, attributes=ATTRS) == (
        'The specified reference "ghost" (in unknown) is incorrect.'
    )


# -- get_file ---------------------------------------------------------------


@pytest.mark.parametrize("version", versions_having("get_file"))
def test_get_file(hot: Hot, version: str) -> None:
    files = {"scripts/boot.sh": "#!/bin/sh\n", "https://example.com/motd": "hi\n"}
    assert hot.evaluate({"get_file": "scripts/boot.sh"}, version, files=files) == "#!/bin/sh\n"
    # heatclient fetches a URL and keys its content by the URL
    assert hot.evaluate({"get_file": "https://example.com/motd"}, version, files=files) == "hi\n"
    missing = 'No content found in the "files" section for get_file path: nope.sh'
    # Heat's GetFile has no validate: a key missing from files is found
    # only when the call is resolved
    assert hot.validate({"get_file": "nope.sh"}, version, files=files) == []
    assert hot.validate({"get_file": "https://example.com/other"}, version, files=files) == []
    assert hot.error_at({"get_file": "nope.sh"}, version, files=files) == (missing, AT)
    assert hot.error({"get_file": ["x"]}, version) == 'Argument to "get_file" must be a string'


# -- resource_facade --------------------------------------------------------


@pytest.mark.parametrize("version", versions_having("resource_facade"))
@pytest.mark.parametrize("section", ["metadata", "deletion_policy", "update_policy"])
def test_resource_facade(hot: Hot, version: str, section: str) -> None:
    facades = {"metadata": {"a": 1}, "deletion_policy": "Retain", "update_policy": {}}
    result = hot.evaluate({"resource_facade": section}, version, facades=facades)
    assert result == facades[section]


@pytest.mark.parametrize("version", versions_having("resource_facade"))
@pytest.mark.parametrize("args", ["Metadata", "properties", ["metadata"]])
def test_resource_facade_bad_section(hot: Hot, version: str, args: object) -> None:
    assert hot.parse_error({"resource_facade": args}, version) == (
        'Incorrect arguments to "resource_facade" should be one of: '
        "metadata, deletion_policy, update_policy"
    )
