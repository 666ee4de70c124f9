"""A create checks property values as Heat's does (``Properties.validate
(with_value=True)``, heat/engine/properties.py): each static call is
resolved, its value error refuses the compile at the call, and the value is
checked with the type's schema; a value that needs a resource is left for
the run, and its property is checked as written
(``_find_deps_any_in_init``). Template validate (``strict=False``) and a
stored template read again (``values=False``) resolve nothing.
"""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from convection.common.errors import InvalidInput
from convection.hot import Function
from convection.hot.loader import Document, SourceMap, load
from convection.model._member_compile import MemberCompiles
from convection.model.compiler import Compiled, StackIdentity, StackInputs, compile_stack
from convection.resources.registry import default_registry

STRICT = default_registry().catalog()
LOOSE = default_registry().catalog(strict=False)
HEAD = "heat_template_version: 2018-08-31\n"


def inputs(text: str, files: dict[str, str] | None = None, **params: Any) -> StackInputs:
    return StackInputs.from_text(
        textwrap.dedent(text), name="t.yaml", files=files, parameters=params
    )


def create(text: str, files: dict[str, str] | None = None, **params: Any) -> Compiled:
    return compile_stack(inputs(text, files, **params), catalog=STRICT)


def refusals(text: str, files: dict[str, str] | None = None, **params: Any) -> list[str]:
    with pytest.raises(InvalidInput) as caught:
        create(text, files, **params)
    return [str(d) for d in caught.value.diagnostics if d.is_error]


def validate(text: str, files: dict[str, str] | None = None, **params: Any) -> Compiled:
    return compile_stack(inputs(text, files, **params), catalog=LOOSE, strict=False)


def value(snippet: str, before: str = "") -> str:
    """A template whose ``v`` is an OS::Heat::Value of ``snippet``, beside a
    RandomString ``r`` for references."""
    return (
        f"{HEAD}{before}resources:\n"
        "  r: {type: OS::Heat::RandomString}\n"
        f"  v: {{type: OS::Heat::Value, properties: {{value: {snippet}}}}}\n"
    )


REFUSED = [
    pytest.param(
        "{str_split: [',', 5]}",
        "t.yaml:4:43 resources.v.properties.value: 'int' object has no attribute 'split'",
        id="str_split-of-a-number",
    ),
    pytest.param(
        "{list_join: [',', abc]}",
        't.yaml:4:43 resources.v.properties.value: "list_join" must operate on a list',
        id="list_join-of-a-string",
    ),
    pytest.param(
        "{map_merge: [{a: 1}, abc]}",
        "t.yaml:4:43 resources.v.properties.value: "
        "Incorrect arguments: Items to merge must be maps.",
        id="map_merge-of-a-string",
    ),
    pytest.param(
        "{get_file: missing.txt}",
        "t.yaml:4:43 resources.v.properties.value: "
        'No content found in the "files" section for get_file path: missing.txt',
        id="get_file-key-not-in-files",
    ),
    pytest.param(
        "{yaql: {expression: '$.data.x.len()', data: {x: 5}}}",
        't.yaml:4:43 resources.v.properties.value: No method "len" for receiver 5 '
        "matches supplied arguments",
        id="yaql-error",
    ),
]


@pytest.mark.parametrize(("snippet", "message"), REFUSED)
def test_a_static_call_s_value_error_refuses_the_create(snippet: str, message: str) -> None:
    assert refusals(value(snippet)) == [message]
    validate(value(snippet))  # template validate resolves nothing


def test_a_static_call_inside_one_that_needs_a_resource_is_still_resolved() -> None:
    """Heat resolves the whole value (the attribute as ``None``), so the
    missing file is found; the error sits at the inner call."""
    text = value("{list_join: [',', [{get_attr: [r, value]}, {get_file: gone}]]}")
    assert refusals(text) == [
        "t.yaml:4:93 resources.v.properties.value.list_join[1][1]: "
        'No content found in the "files" section for get_file path: gone'
    ]


def test_get_attr_s_path_waits_for_the_attribute() -> None:
    """``GetAttThenSelect.result`` resolves the path only once the
    attribute has a value, never before the create."""
    create(value("{get_attr: [r, value, {get_file: gone}]}"))


ACCEPTED = [
    pytest.param("{get_attr: [r, value]}", id="an-attribute"),
    pytest.param("{get_resource: r}", id="a-reference-id"),
    pytest.param(
        "{yaql: {expression: '$.data.x.len()', data: {x: {get_attr: [r, value]}}}}",
        id="yaql-over-an-attribute",
    ),
    pytest.param("{str_split: [',', {get_attr: [r, value]}]}", id="str_split-of-an-attribute"),
    pytest.param("{list_join: [',', {get_attr: [r, value]}]}", id="list_join-of-an-attribute"),
    pytest.param("{str_split: [',', 'a,b']}", id="a-static-call-that-works"),
]


@pytest.mark.parametrize("snippet", ACCEPTED)
def test_a_value_that_needs_a_resource_is_left_for_the_run(snippet: str) -> None:
    compiled = create(value(snippet))
    kept = compiled.definition.resources["v"].properties["value"]
    assert isinstance(kept, Function)  # the definition keeps the call


def test_resolved_values_are_checked_with_the_schema() -> None:
    text = """\
    heat_template_version: 2018-08-31
    parameters:
      n: {type: number, default: 2000}
    resources:
      a: {type: OS::Heat::RandomString, properties: {length: {get_param: n}}}
      b:
        type: OS::Heat::RandomString
        properties: {length: {str_replace: {template: abc, params: {}}}}
      c:
        type: OS::Heat::RandomString
        properties:
          character_classes: [{class: {list_join: ['', [let, ters]]}}, {class: {list_join: ['', [bo, gus]]}}]
    """  # noqa: E501
    assert refusals(text) == [
        "t.yaml:5:50 resources.a.properties.length: 2000 is out of range (min: 1, max: 512)",
        "t.yaml:8:18 resources.b.properties.length: Value 'abc' is not an integer",
        "t.yaml:12:69 resources.c.properties.character_classes[1].class: "
        '"bogus" is not an allowed value [lettersdigits, letters, lowercase, uppercase, '
        "digits, hexdigits, octdigits]",
    ]
    validate(text)
    fine = text.split("      b:")[0]
    assert isinstance(create(fine, n=8).definition.resources["a"].properties["length"], Function)


def test_a_property_that_needs_a_resource_is_checked_as_written() -> None:
    """Heat skips the schema check of a value depending on a resource not
    yet created; what the template wrote around the call is checked as it
    was before values were resolved."""
    text = """\
    heat_template_version: 2018-08-31
    resources:
      r: {type: OS::Heat::RandomString}
      c:
        type: OS::Heat::RandomString
        properties:
          length: {get_attr: [r, value]}
          character_classes: [{class: {get_attr: [r, value]}}, {class: letters}]
    """
    create(text)


def test_the_definition_keeps_the_calls() -> None:
    """Values are resolved again when the resource runs: nothing of the
    check is stored."""
    text = value("{str_split: [',', {get_param: p}]}", "parameters:\n  p: {type: string}\n")
    compiled = create(text, p="a,b")
    assert isinstance(compiled.definition.resources["v"].properties["value"], Function)


def test_a_hidden_parameter_s_value_is_masked() -> None:
    text = """\
    heat_template_version: 2018-08-31
    parameters:
      secret: {type: string, hidden: true}
      plain: {type: string}
    resources:
      a: {type: OS::Heat::RandomString, properties: {length: {get_param: secret}}}
      b:
        type: OS::Heat::Value
        properties:
          value: {yaql: {expression: '$.data.s.len($.data.s)', data: {s: {get_param: secret}}}}
      c: {type: OS::Heat::RandomString, properties: {length: {get_param: plain}}}
    """
    found = refusals(text, secret="hunter2", plain="visible")
    assert found[0] == "t.yaml:6:50 resources.a.properties.length: Value '******' is not an integer"
    assert "******" in found[1] and found[1].startswith("t.yaml:10:")
    assert (
        found[2] == "t.yaml:11:50 resources.c.properties.length: Value 'visible' is not an integer"
    )
    assert not any("hunter2" in f for f in found)


def test_a_computed_reference_s_error_is_reported_once() -> None:
    """``_computed_edges`` resolves a computed resource name already."""
    found = refusals(value("{get_resource: {list_join: ['', [{get_file: gone}]]}}"))
    assert len(found) == 1 and "get_file path: gone" in found[0]


def test_a_stored_template_is_read_without_the_check() -> None:
    """``load_definition`` compiles a stored template with ``values=False``:
    a stack made before the check still has a definition."""
    compiled = compile_stack(inputs(value("{str_split: [',', 5]}")), catalog=STRICT, values=False)
    assert "v" in compiled.definition.resources


def test_a_limit_still_holds() -> None:
    text = value("{yaql: {expression: 'range(100000000).list()', data: {}}}")
    assert len(refusals(text)) == 1


def test_an_update_that_changes_one_value_checks_it() -> None:
    """The reuse of a stack's previous compile (``_recompile``) checks the
    changed resources' values too."""
    many = "".join(f"  n{i}: {{type: OS::Heat::None}}\n" for i in range(10))
    good = f"{HEAD}resources:\n{many}  v: {{type: OS::Heat::Value, properties: {{value: 1}}}}\n"
    bad = good.replace("value: 1", "value: {str_split: [',', 5]}")
    identity = StackIdentity("s", "stack-1", "p")
    compile_stack(inputs(good), identity=identity, catalog=STRICT)
    with pytest.raises(InvalidInput) as caught:
        compile_stack(inputs(bad), identity=identity, catalog=STRICT)
    assert "'int' object has no attribute 'split'" in str(caught.value)


MEMBER = load(
    f"""\
{HEAD}parameters:
  count: {{type: string}}
resources:
  a: {{type: OS::Heat::RandomString, properties: {{length: {{get_param: count}}}}}}
""",
    "member.yaml",
)


def member(shared: MemberCompiles, count: str) -> Compiled:
    env = Document("environment", {"resource_registry": {}}, SourceMap("environment"))
    given = StackInputs(MEMBER, (env,), {}, {"count": count})
    identity = StackIdentity(f"m-{count}", f"id-{count}", "p")
    return compile_stack(given, identity=identity, catalog=STRICT, shared=shared, owner="g")


def test_a_group_member_sharing_a_definition_checks_its_own_values() -> None:
    shared = MemberCompiles()
    member(shared, "8")
    member(shared, "9")  # reuses the first's definition
    with pytest.raises(InvalidInput) as caught:
        member(shared, "9000")
    assert [str(d) for d in caught.value.diagnostics] == [
        "member.yaml:5:50 resources.a.properties.length: 9000 is out of range (min: 1, max: 512)"
    ]


def test_a_type_that_reads_no_properties_is_not_resolved() -> None:
    """Heat's OS::Heat::None drops its properties (``reparse``), so its
    create resolves none of them."""
    none = "  n: {type: OS::Heat::None, properties: {a: {str_split: [',', 5]}}}\n"
    create(f"{HEAD}resources:\n{none}")
