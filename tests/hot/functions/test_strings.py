"""list_join, str_replace (and strict forms), str_split, digest and make_url,
in every version that has them, with their version differences."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import pytest

from convection.common.limits import Limits
from convection.hot.functions.tables import versions_having

if TYPE_CHECKING:
    from conftest import Hot

JOIN_ONE = [v for v in versions_having("list_join") if v < "2015-10-15"]
JOIN_MANY = [v for v in versions_having("list_join") if v >= "2015-10-15"]
REPLACE_PLAIN = [v for v in versions_having("str_replace") if v < "2015-10-15"]
REPLACE_JSON = [v for v in versions_having("str_replace") if v >= "2015-10-15"]
SMALL = Limits(max_value_size=100)
#: Where the harness's located helpers parse a snippet (its ``AT``).
AT = ("resources", "r", "properties", "value")
#: Every str_replace form, with the versions that have it.
REPLACE_FORMS = [
    (name, version)
    for name in ("str_replace", "str_replace_strict", "str_replace_vstrict")
    for version in versions_having(name)
]


def replace_syntax(name: str) -> str:
    """Heat's text for a str_replace form without its keys: a KeyError's,
    quoted, its newlines escaped (heat/engine/hot/functions.py Replace)."""
    return (
        f'\'"{name}" syntax should be {name}:\\n'
        "              template: This is var1 template var2\\n"
        "              params:\\n"
        "                var1: a\\n"
        "                var2: string'"
    )


# -- list_join --------------------------------------------------------------


@pytest.mark.parametrize("version", versions_having("list_join"))
def test_list_join(hot: Hot, version: str) -> None:
    assert hot.evaluate({"list_join": [", ", ["a", "b", "c"]]}, version) == "a, b, c"
    assert hot.evaluate({"list_join": ["-", ["a", None, "c"]]}, version) == "a--c"
    assert hot.evaluate({"list_join": ["-", None]}, version) == ""
    params = {"zones": ["az1", "az2"]}
    assert hot.evaluate(
        {"list_join": [",", {"get_param": "zones"}]}, version, parameters=params
    ) == ("az1,az2")


@pytest.mark.parametrize("version", versions_having("list_join"))
@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([",", "abc"], '"list_join" must operate on a list'),
        ([",", {"a": "b"}], '"list_join" must operate on a list'),
        ([1, ["a"]], '"list_join" delimiter must be a string'),
        ([",", [1]], None),  # numbers are refused; the wording differs by version
    ],
)
def test_list_join_errors(hot: Hot, version: str, args: list[object], message: str | None) -> None:
    error = hot.error({"list_join": args}, version)
    if message is None:
        expected = (
            "Items to join must be strings not 1"
            if version in JOIN_ONE
            else "Items to join must be string, map or list not 1"
        )
        assert error == expected
    else:
        assert error == message


@pytest.mark.parametrize("version", JOIN_ONE)
def test_list_join_before_2015_10_15_takes_one_list_of_strings(hot: Hot, version: str) -> None:
    assert hot.parse_error({"list_join": [",", ["a"], ["b"]]}, version) == (
        'Incorrect arguments to "list_join" should be: "list_join" : [ " ", [ "str1", "str2"]]'
    )
    assert hot.parse_error({"list_join": "a,b"}, version) == (
        'Incorrect arguments to "list_join" should be: "list_join" : [ " ", [ "str1", "str2"]]'
    )
    assert hot.error({"list_join": [",", [{"a": 1}]]}, version) == (
        "Items to join must be strings not {'a': 1}"
    )


@pytest.mark.parametrize("version", JOIN_MANY)
def test_list_join_from_2015_10_15_takes_several_lists_and_json(hot: Hot, version: str) -> None:
    assert hot.evaluate({"list_join": [",", ["a", "b"], [], None, ["c"]]}, version) == "a,b,c"
    snippet = {"list_join": [" ", [{"b": 1, "a": [2]}, ["x", None]]]}
    assert hot.evaluate(snippet, version) == '{"a": [2], "b": 1} ["x", null]'
    assert hot.parse_error({"list_join": [","]}, version) == (
        'Incorrect arguments to "list_join" should be: "list_join" : [ " ", [ "str1", "str2"] ...]'
    )
    assert hot.error({"list_join": [",", ["a"], "b"]}, version) == (
        '"list_join" must operate on a list'
    )
    assert hot.error({"list_join": [",", [True]]}, version) == (
        "Items to join must be string, map or list not True"
    )


@pytest.mark.parametrize("version", versions_having("list_join"))
def test_list_join_is_bounded(hot: Hot, version: str) -> None:
    resolver = hot.resolver(parameters={"big": ["x" * 60, "y" * 60]}, limits=SMALL)
    snippet = {"list_join": [",", {"get_param": "big"}]}
    with pytest.raises(Exception, match="larger than the limit of 100"):
        hot.evaluate(snippet, version, resolver)


# -- str_replace ------------------------------------------------------------


def replace(template: object, params: object) -> dict[str, object]:
    return {"str_replace": {"template": template, "params": params}}


@pytest.mark.parametrize("version", versions_having("str_replace"))
def test_str_replace(hot: Hot, version: str) -> None:
    assert hot.evaluate(replace("Hello $name!", {"$name": "world"}), version) == "Hello world!"
    assert hot.evaluate(replace("a=$a b=$b", {"$a": 1, "$b": 2.5}), version) == "a=1 b=2.5"
    assert hot.evaluate(replace("on=$x", {"$x": True}), version) == "on=True"
    assert hot.evaluate(replace("n=$x.", {"$x": None}), version) == "n=."


@pytest.mark.parametrize("version", versions_having("str_replace"))
def test_str_replace_longest_key_first_and_values_not_rescanned(hot: Hot, version: str) -> None:
    # the longer key wins even where the shorter one matches further left
    assert hot.evaluate(replace("xabc", {"abc": "1", "xa": "2"}), version) == "x1"
    # a substituted value is never searched for other keys
    assert hot.evaluate(replace("$a", {"$a": "$b", "$b": "no"}), version) == "$b"
    # equal lengths: the lexically smaller key is replaced first
    assert hot.evaluate(replace("abc", {"ab": "1", "bc": "2"}), version) == "1c"


@pytest.mark.parametrize("version", REPLACE_PLAIN)
def test_str_replace_before_2015_10_15_refuses_lists(hot: Hot, version: str) -> None:
    assert hot.error(replace("v=$v", {"$v": [1]}), version) == (
        '"str_replace" params must be strings or numbers, param $v is not valid'
    )


@pytest.mark.parametrize("version", REPLACE_JSON)
def test_str_replace_from_2015_10_15_substitutes_json(hot: Hot, version: str) -> None:
    snippet = replace("v=$v m=$m", {"$v": [1, "a"], "$m": {"b": None, "a": 1}})
    assert hot.evaluate(snippet, version) == 'v=[1, "a"] m={"a": 1, "b": null}'


@pytest.mark.parametrize("version", versions_having("str_replace"))
@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("text", 'Arguments to "str_replace" must be a map'),
        ({"template": "x"}, None),
        ({"template": "x", "params": "y"}, '"str_replace" parameters must be a mapping'),
    ],
)
def test_str_replace_shape_errors(
    hot: Hot, version: str, args: object, message: str | None
) -> None:
    error = hot.parse_error({"str_replace": args}, version)
    assert error == (message or replace_syntax("str_replace"))


@pytest.mark.parametrize(("name", "version"), REPLACE_FORMS)
@pytest.mark.parametrize(
    "args",
    [
        {"template": "x"},
        {"params": {}},
        {"tmpl": "x", "params": {}},
        {"template": "x", "parms": {}},
    ],
)
def test_str_replace_syntax_is_heats_key_error_text(
    hot: Hot, name: str, version: str, args: object
) -> None:
    assert hot.parse_error_at({name: args}, version) == (replace_syntax(name), AT)


def test_str_replace_syntax_text_is_what_str_of_heats_key_error_gives() -> None:
    example = "str_replace:\n              template: This is var1 template var2\n"
    example += "              params:\n                var1: a\n                var2: string"
    message = f'"str_replace" syntax should be {example}'
    assert str(KeyError(message)) == replace_syntax("str_replace")


@pytest.mark.parametrize(("name", "version"), REPLACE_FORMS)
def test_str_replace_placeholders_are_ordered_by_python(hot: Hot, name: str, version: str) -> None:
    """Heat sorts the placeholders by length with Python's ``sorted``, so a
    number as a placeholder has no length, and an empty one fails as the
    separator ``str.split`` refuses."""
    snippet = {name: {"template": "a1", "params": {1: "x"}}}
    assert hot.error_at(snippet, version) == ("object of type 'int' has no len()", AT)
    mixed = {name: {"template": "a1", "params": {"a": "x", 1: "y"}}}
    assert hot.error_at(mixed, version) == (
        "'<' not supported between instances of 'int' and 'str'",
        AT,
    )
    empty = {name: {"template": "ab", "params": {"": "x"}}}
    assert hot.error_at(empty, version) == ("empty separator", AT)
    # still accepted: keys of any length, longest first
    ok = {name: {"template": "$a $ab", "params": {"$a": "1", "$ab": "2"}}}
    assert hot.evaluate(ok, version) == "1 2"


@pytest.mark.parametrize("version", versions_having("str_replace"))
def test_str_replace_value_errors(hot: Hot, version: str) -> None:
    params = {"t": 5, "p": ["x"]}
    assert hot.error(
        {"str_replace": {"template": {"get_param": "t"}, "params": {}}}, version, parameters=params
    ) == ('"str_replace" template must be a string')
    assert hot.error(
        {"str_replace": {"template": "x", "params": {"get_param": "p"}}}, version, parameters=params
    ) == ('"str_replace" params must be a map')


@pytest.mark.parametrize("version", versions_having("str_replace"))
def test_str_replace_is_bounded(hot: Hot, version: str) -> None:
    resolver = hot.resolver(limits=SMALL)
    snippet = replace("$x" * 20, {"$x": "0123456789"})
    with pytest.raises(Exception, match="larger than the limit of 100"):
        hot.evaluate(snippet, version, resolver)


@pytest.mark.parametrize("version", versions_having("str_replace_strict"))
def test_str_replace_strict(hot: Hot, version: str) -> None:
    snippet = {"str_replace_strict": {"template": "$a", "params": {"$a": "1", "$bb": "2", "$c": 3}}}
    assert hot.error(snippet, version) == (
        "The following params were not found in the template: $bb,$c"
    )
    ok = {"str_replace_strict": {"template": "$a$c", "params": {"$a": [], "$c": ""}}}
    assert hot.evaluate(ok, version) == "[]"


@pytest.mark.parametrize("name", ["str_replace_strict", "str_replace_vstrict"])
@pytest.mark.parametrize(("params", "kind"), [(None, "NoneType"), (5, "int"), (True, "bool")])
def test_strict_forms_note_their_params_first(
    hot: Hot, name: str, params: object, kind: str
) -> None:
    """The strict forms note every param before checking anything, so
    params that are no collection fail in Python's words; the plain form
    says they must be a map."""
    snippet = {name: {"template": "x", "params": {"get_param": "p"}}}
    assert hot.error_at(snippet, parameters={"p": params}) == (
        f"'{kind}' object is not iterable",
        AT,
    )
    plain = {"str_replace": {"template": "x", "params": {"get_param": "p"}}}
    assert hot.error_at(plain, parameters={"p": params}) == (
        '"str_replace" params must be a map',
        AT,
    )
    # a string can be noted (its characters), so the map check speaks
    assert hot.error_at(snippet, parameters={"p": "ab"}) == (f'"{name}" params must be a map', AT)


@pytest.mark.parametrize("version", versions_having("str_replace_vstrict"))
@pytest.mark.parametrize("empty", ["", None, [], {}])
def test_str_replace_vstrict_refuses_empty_values(hot: Hot, version: str, empty: object) -> None:
    snippet = {"str_replace_vstrict": {"template": "$a", "params": {"$a": empty}}}
    assert hot.error(snippet, version) == (
        "str_replace_vstrict has an undefined or empty value for param $a, "
        "must be a defined non-empty value"
    )
    missing = {"str_replace_vstrict": {"template": "x", "params": {"$a": "1"}}}
    assert hot.error(missing, version) == "The following params were not found in the template: $a"


# -- str_split --------------------------------------------------------------


@pytest.mark.parametrize("version", versions_having("str_split"))
def test_str_split(hot: Hot, version: str) -> None:
    assert hot.evaluate({"str_split": [",", "a,b,c"]}, version) == ["a", "b", "c"]
    assert hot.evaluate({"str_split": [",", "a,b,c", 1]}, version) == "b"
    assert hot.evaluate({"str_split": [",", "a,b,c", "2"]}, version) == "c"
    assert hot.evaluate({"str_split": [",", None]}, version) is None
    example = '"str_split" : [ ",", "apples,pears", <index>]'
    assert hot.parse_error({"str_split": "a,b"}, version) == (
        f'Incorrect arguments to "str_split" should be: {example}'
    )
    assert hot.error({"str_split": [","]}, version) == (
        f'Incorrect arguments to "str_split" should be: {example}'
    )
    assert hot.error({"str_split": [",", "a,b", "x"]}, version) == (
        f'Incorrect index to "str_split" should be: {example}'
    )
    assert hot.error({"str_split": [",", "a,b", 5]}, version) == (
        'Incorrect index to "str_split" should be between 0 and 1'
    )


@pytest.mark.parametrize("version", versions_having("str_split"))
@pytest.mark.parametrize(
    ("args", "message"),
    [
        # Heat pops from the resolved arguments: a map has no item 0
        ({"a": "b"}, "0"),
        # then calls str.split and int() unguarded
        ([",", 5], "'int' object has no attribute 'split'"),
        ([",", ["a,b"]], "'list' object has no attribute 'split'"),
        ([5, "a,b"], "must be str or None, not int"),
        (["", "a,b"], "empty separator"),
        (
            [",", "a,b", None],
            "int() argument must be a string, a bytes-like object or a real number, not 'NoneType'",
        ),
    ],
)
def test_str_split_fails_in_pythons_words(
    hot: Hot, version: str, args: object, message: str
) -> None:
    snippet = {"str_split": {"get_param": "args"}}
    assert hot.error_at(snippet, version, parameters={"args": args}) == (message, AT)


@pytest.mark.parametrize("version", versions_having("str_split"))
def test_str_split_still_accepts(hot: Hot, version: str) -> None:
    assert hot.evaluate({"str_split": [None, "a b  c"]}, version) == ["a", "b", "c"]
    assert hot.evaluate({"str_split": [",", "a,b", -1]}, version) == "b"
    assert hot.evaluate({"str_split": [",", "a,b", 1.9]}, version) == "b"
    assert hot.evaluate({"str_split": [",", "a,b", 0, "ignored"]}, version) == "a"


# -- digest -----------------------------------------------------------------


@pytest.mark.parametrize("version", versions_having("digest"))
@pytest.mark.parametrize("algorithm", ["md5", "sha1", "sha256", "SHA512"])
def test_digest(hot: Hot, version: str, algorithm: str) -> None:
    expected = hashlib.new(algorithm.lower(), b"secret").hexdigest()
    assert hot.evaluate({"digest": [algorithm, "secret"]}, version) == expected


@pytest.mark.parametrize("version", versions_having("digest"))
def test_digest_errors(hot: Hot, version: str) -> None:
    assert hot.error({"digest": ["md5"]}, version) == (
        'Function "digest" usage: ["<algorithm>", "<value>"]'
    )
    assert hot.error({"digest": ["md5", 5]}, version) == (
        'Argument to function "digest" must be a list of strings'
    )
    assert hot.error({"digest": ["rot13", "x"]}, version).startswith("Algorithm must be one of ")


# -- make_url ---------------------------------------------------------------


@pytest.mark.parametrize("version", versions_having("make_url"))
def test_make_url(hot: Hot, version: str) -> None:
    snippet = {
        "make_url": {
            "scheme": "https",
            "username": "my user",
            "password": "p@ss",
            "host": "example.com",
            "port": 8080,
            "path": "/a b/c",
            "query": {"q": "x/y", "n": "1"},
            "fragment": "frag ment",
        }
    }
    assert hot.evaluate(snippet, version) == (
        "https://my%20user:p%40ss@example.com:8080/a%20b/c?q=x/y&n=1#frag%20ment"
    )
    ipv6 = {"make_url": {"scheme": "http", "host": "::1", "path": "/"}}
    assert hot.evaluate(ipv6, version) == "http://[::1]/"
    bracketed = {"make_url": {"scheme": "http", "host": "[fd::2]", "port": "80"}}
    assert hot.evaluate(bracketed, version) == "http://[fd::2]:80"


@pytest.mark.parametrize("version", versions_having("make_url"))
def test_make_url_checks(hot: Hot, version: str) -> None:
    assert hot.validate({"make_url": {"host": "h", "colour": "red"}}, version) == [
        'Invalid arguments to "make_url": colour'
    ]
    assert hot.validate({"make_url": ["h"]}, version) == [
        'The arguments to "make_url" must be a map'
    ]
    assert hot.validate({"make_url": {"port": 70000}}, version) == [
        "Invalid URL port 70000, must be in range 1-65535"
    ]
    assert hot.validate({"make_url": {"port": "http"}}, version) == [
        "Invalid URL port \"http\" for make_url called with {'port': 'http'}"
    ]
    assert hot.validate({"make_url": {"host": 5}}, version) == [
        'The "host" argument to "make_url" must be a string'
    ]
    assert hot.validate({"make_url": {"query": "a=b"}}, version) == [
        'The "query" argument to "make_url" must be a map'
    ]
    # Heat stops checking at the query, so a bad fragment after it passes validation
    assert hot.validate({"make_url": {"query": {}, "fragment": 5}}, version) == []
    assert hot.error({"make_url": {"scheme": "ht:tp", "host": "h"}}, version) == (
        "URL \"scheme\" should not contain ':'"
    )
    resolved = {"make_url": {"port": {"get_param": "port"}}}
    assert hot.validate(resolved, version, parameters={"port"}) == []
    assert hot.error(resolved, version, parameters={"port": 0}) == (
        "Invalid URL port 0, must be in range 1-65535"
    )
