"""Compiles of a group's members share the parse and, when the values the
conditions read are equal, the definition (``convection.model._member_compile``).

Each shared compile is checked against a full compile of the same inputs,
and against leaking one member's identity (pseudo-parameters) into another.
"""

from __future__ import annotations

from typing import Any

from convection.hot.loader import Document, SourceMap, load
from convection.model import compiler
from convection.model._member_compile import MemberCompiles
from convection.model.compiler import Compiled, StackIdentity, StackInputs, compile_stack
from convection.resources.registry import default_registry

CATALOG = default_registry().catalog()

MEMBER_TEXT = """\
heat_template_version: 2018-08-31
parameters:
  index: {type: string}
  flavour: {type: string, default: small, constraints: [allowed_values: [small, big]]}
conditions:
  big: {equals: [{get_param: flavour}, big]}
resources:
  a: {type: OS::Heat::Value, properties: {value: {get_param: index}}}
  b:
    type: OS::Heat::Value
    condition: big
    properties: {value: {get_param: OS::stack_id}}
outputs:
  name: {value: {get_param: OS::stack_name}}
"""
MEMBER = load(MEMBER_TEXT, "member.yaml")
#: The same with a condition on the member's own name (its identity).
NAMED = load(
    MEMBER_TEXT.replace(
        "resources:\n",
        "  first: {equals: [{get_param: OS::stack_name}, m-0]}\nresources:\n"
        "  c:\n    type: OS::Heat::Value\n"
        "    properties: {value: {if: [first, leader, {get_attr: [a, value]}]}}\n",
    ),
    "named.yaml",
)
PLAIN = load(
    """\
heat_template_version: 2018-08-31
parameters:
  index: {type: string}
resources:
  a: {type: OS::Heat::Value, properties: {value: {get_param: index}}}
""",
    "plain.yaml",
)


def env_doc(defaults: dict[str, Any] | None = None) -> Document:
    """A fresh document each call, as the engine builds the child's one."""
    data = {"resource_registry": {}, "parameter_defaults": dict(defaults or {})}
    return Document("environment", data, SourceMap("environment"))


def member(
    shared: MemberCompiles | None,
    i: int,
    *,
    doc: Document = MEMBER,
    owner: str = "group",
    **params: Any,
) -> Compiled:
    inputs = StackInputs(doc, (env_doc(),), {}, {"index": str(i), **params})
    identity = StackIdentity(f"m-{i}", f"id-{i}", "p")
    return compile_stack(inputs, identity=identity, catalog=CATALOG, shared=shared, owner=owner)


def full(i: int, *, doc: Document = MEMBER, **params: Any) -> Compiled:
    """The reference: every phase run, nothing shared or remembered."""
    inputs = StackInputs(doc, (env_doc(),), {}, {"index": str(i), **params})
    identity = StackIdentity(f"m-{i}", f"id-{i}", "p")
    return compiler._compile_stack(inputs, identity=identity, catalog=CATALOG)


def same(a: Compiled, b: Compiled) -> None:
    da, db = a.definition, b.definition
    assert da.parameters == db.parameters
    assert da.parameters.value("OS::stack_id") == db.parameters.value("OS::stack_id")
    assert da.environment == db.environment
    assert (da.resources, da.outputs, da.conditions, da.disabled) == (
        db.resources,
        db.outputs,
        db.conditions,
        db.disabled,
    )
    assert a.template.raw == b.template.raw
    assert a.warnings == b.warnings


def test_members_share_the_parse_and_the_definition_but_not_their_identity() -> None:
    shared = MemberCompiles()
    first, second = member(shared, 1), member(shared, 2)
    assert second.template is first.template
    assert second.definition.resources is first.definition.resources
    assert second.graph is first.graph
    assert len(shared) == 1
    for i, got in ((1, first), (2, second)):
        same(got, full(i))
        values = got.definition.parameters
        assert (values.value("OS::stack_name"), values.value("OS::stack_id")) == (
            f"m-{i}",
            f"id-{i}",
        )
        assert values.value("index") == str(i)
        assert got.environment.parameters["index"] == str(i)


def test_a_condition_on_the_stack_name_keeps_each_member_its_own() -> None:
    """``first`` reads OS::stack_name: member 0's definition (``if``
    expanded to ``leader``) must not reach the others, nor theirs it."""
    shared = MemberCompiles()
    made = [member(shared, i, doc=NAMED) for i in (1, 0, 2, 0)]
    for i, got in zip((1, 0, 2, 0), made, strict=True):
        same(got, full(i, doc=NAMED))
        assert got.definition.conditions["first"] is (i == 0)
    assert made[3].definition.resources is made[1].definition.resources
    assert made[2].definition.resources is not made[0].definition.resources
    assert made[1].definition.resources["c"] != made[0].definition.resources["c"]


def test_a_condition_on_a_parameter_builds_one_definition_per_value() -> None:
    shared = MemberCompiles()
    small, big = member(shared, 1), member(shared, 2, flavour="big")
    assert "b" not in small.definition.resources and "b" in big.definition.resources
    same(small, full(1))
    same(big, full(2, flavour="big"))
    again = member(shared, 3, flavour="big")
    assert again.definition.resources is big.definition.resources
    same(again, full(3, flavour="big"))


def test_a_template_without_conditions_is_shared_whatever_the_values() -> None:
    shared = MemberCompiles()
    made = [member(shared, i, doc=PLAIN) for i in range(3)]
    assert all(m.definition.resources is made[0].definition.resources for m in made)
    for i, got in enumerate(made):
        same(got, full(i, doc=PLAIN))


def test_a_different_environment_or_template_is_not_shared() -> None:
    shared = MemberCompiles()
    one = member(shared, 1)
    other_doc = load(MEMBER_TEXT_WITH_DESCRIPTION, "member.yaml")
    two = member(shared, 1, doc=other_doc)
    assert two.template is not one.template
    inputs = StackInputs(MEMBER, (env_doc({"flavour": "big"}),), {}, {"index": "1"})
    three = compile_stack(
        inputs, identity=StackIdentity("m-1", "id-1", "p"), catalog=CATALOG, shared=shared
    )
    assert three.definition.environment.parameter_defaults == {"flavour": "big"}
    assert "b" in three.definition.resources


def test_a_bad_member_is_reported_every_time_and_not_kept() -> None:
    shared = MemberCompiles()
    for _ in range(2):
        try:
            member(shared, 1, flavour="huge")
        except compiler.InvalidInput as exc:
            assert "flavour" in str(exc)
        else:
            raise AssertionError("a value outside allowed_values compiled")
    assert member(shared, 1).definition.conditions["big"] is False


def test_forget_drops_an_owners_entries_and_the_cache_is_bounded() -> None:
    shared = MemberCompiles()
    # Members never compiled before here: a stack compiled again with
    # equal inputs is answered by convection.model._recompile, before any sharing.
    member(shared, 101, owner="g1")
    member(shared, 102, doc=PLAIN, owner="g2")
    assert len(shared) == 2
    shared.forget("g1")
    assert len(shared) == 1
    for n in range(10):
        doc = load(f"{MEMBER_TEXT_WITH_DESCRIPTION}# {n}\n", f"t{n}")
        member(shared, 103 + n, doc=doc, owner="g3")
    assert len(shared) <= 4


MEMBER_TEXT_WITH_DESCRIPTION = """\
heat_template_version: 2018-08-31
description: other
parameters:
  index: {type: string}
"""
