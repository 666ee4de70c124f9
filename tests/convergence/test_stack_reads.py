"""The stack service's reads and PATCH updates, as Heat's API answers them:
event markers, the stored template/environment/files, stack list filters,
tags, sorting and paging, and ``update(existing=True)`` without a template."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from convection.common.errors import InvalidInput, NotFound
from convection.hot.loader import load
from convection.model.compiler import StackInputs
from convection.service.inputs import StackPatch
from convection.service.stacks import Stacks

from .conftest import HEADER

SIMPLE = """
description: two values
parameters:
  greeting: {type: string, default: hi}
  secret: {type: string, default: s3cret, hidden: true}
resources:
  a: {type: Test::Rec, properties: {value: {get_param: greeting}}}
  b: {type: Test::Rec, properties: {value: {get_attr: [a, value]}}}
"""


def inputs(text: str = SIMPLE, *envs: str, **params: Any) -> StackInputs:
    named = [(f"env{i}.yaml", e) for i, e in enumerate(envs)]
    return StackInputs.from_text(
        HEADER + textwrap.dedent(text), environments=named, parameters=params
    )


def env_doc(text: str, name: str = "new-env.yaml") -> Any:
    return load(textwrap.dedent(text), name)


# -- events ----------------------------------------------------------------------------


def test_events_after_a_marker_in_either_order(env: Any) -> None:
    env.create(SIMPLE)
    env.wait()
    every = env.stacks.events("p", "s")
    ids = [e["id"] for e in every]
    assert len(ids) == 6  # the stack, a and b: IN_PROGRESS and COMPLETE each
    after = env.stacks.events("p", "s", marker=ids[2])
    assert [e["id"] for e in after] == ids[3:]
    assert [e["id"] for e in env.stacks.events("p", "s", marker=ids[2], limit=2)] == ids[3:5]
    newest = env.stacks.events("p", "s", sort_dir="desc")
    assert [e["id"] for e in newest] == ids[::-1]
    older = env.stacks.events("p", "s", sort_dir="desc", marker=ids[5], limit=2)
    assert [e["id"] for e in older] == [ids[4], ids[3]]
    assert env.stacks.events("p", "s", marker=ids[-1]) == []
    only_b = env.stacks.events("p", "s", resource_name="b", marker=ids[0])
    assert {e["resource_name"] for e in only_b} == {"b"}
    # A marker this service never returned (another process's) is found too.
    fresh = Stacks(env.store, env.registry)
    assert [e["id"] for e in fresh.events("p", "s", marker=ids[4])] == ids[5:]
    with pytest.raises(NotFound):
        env.stacks.events("p", "s", marker="no-such-event")


# -- what the stack was given ------------------------------------------------------------------


def test_template_environment_and_files(env: Any) -> None:
    environment = "parameters: {secret: hush}\nparameter_defaults: {greeting: yo}\n"
    created = env.stacks.create(
        "p", "s", StackInputs(inputs().template, inputs(SIMPLE, environment).environments, {})
    )
    env.stacks.update(
        "p",
        created["id"],
        StackInputs(
            inputs().template,
            inputs(SIMPLE, environment).environments,
            {"file:///x.txt": "data"},
        ),
    )
    assert env.stacks.template("p", "s")["description"] == "two values"
    stored_env = env.stacks.environment("p", "s")
    assert stored_env["parameters"]["secret"] == "******"
    assert stored_env["parameter_defaults"] == {"greeting": "yo"}
    assert "resource_registry" in stored_env
    assert env.stacks.files("p", "s") == {"file:///x.txt": "data"}
    with pytest.raises(NotFound):
        env.stacks.template("p", "nope")


# -- PATCH updates ----------------------------------------------------------------------------


def test_patch_update_with_parameters_and_environment_files_only(env: Any) -> None:
    first = "resource_registry: {resources: {a: {restricted_actions: replace}}}\n"
    env.stacks.create("p", "s", inputs(SIMPLE, first))
    env.wait()
    patch = StackPatch(
        environments=(env_doc("resource_registry: {resources: {b: {hooks: pre-update}}}\n"),),
        parameters={"greeting": "yo"},
    )
    env.stacks.update("p", "s", patch, existing=True)
    registry = env.stacks.environment("p", "s")["resource_registry"]["resources"]
    # The new file's registry is loaded onto the stored one, entry by entry.
    assert registry == {"a": {"restricted_actions": "replace"}, "b": {"hooks": "pre-update"}}
    assert env.stacks.show("p", "s")["parameters"]["greeting"] == "yo"
    assert env.stacks.template("p", "s")["description"] == "two values"  # reused
    env.stacks.run_engine(until=lambda: bool(env.stacks.hook_poll("p", "s")), timeout=30)
    env.stacks.hook_clear("p", "s", "b", "pre-update")
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert env.resources()["b"]["resource_status"] == "UPDATE_COMPLETE"

    params_env = env_doc("parameters: {greeting: from-env}\n")
    env.stacks.update("p", "s", StackPatch(environments=(params_env,)), existing=True)
    assert env.stacks.show("p", "s")["parameters"]["greeting"] == "from-env"
    env.stacks.update("p", "s", None, existing=True, clear_parameters=["greeting"])
    assert env.stacks.show("p", "s")["parameters"]["greeting"] == "hi"


def test_patch_without_existing_needs_a_template(env: Any) -> None:
    env.create(SIMPLE)
    with pytest.raises(InvalidInput, match="template is required"):
        env.stacks.update("p", "s", StackPatch(parameters={"greeting": "x"}))


# -- list ------------------------------------------------------------------------------


def _names(bodies: list[dict[str, Any]]) -> list[str]:
    return [b["stack_name"] for b in bodies]


def test_list_filters_tags_sorting_and_paging(env: Any) -> None:
    tags = {"one": ["web", "prod"], "two": ["web"], "three": ["db", "prod"], "four": []}
    for name, t in tags.items():
        env.stacks.create("p", name, inputs(), tags=t)
    env.rec.fail[("create", "z")] = "nope"
    env.stacks.create("p", "bad", inputs("description: failing\nresources: {z: {type: Test::Rec}}"))
    for name in [*tags, "bad"]:
        env.wait(name)
    env.stacks.delete("p", "four")
    env.stacks.run_engine(timeout=30)

    stacks = env.stacks
    assert _names(stacks.list("p")) == ["bad", "three", "two", "one"]  # newest first
    assert [b["description"] for b in stacks.list("p")[:2]] == ["failing", "two values"]
    assert _names(stacks.list("p", sort_keys=["stack_name"], sort_dir="asc")) == [
        "bad",
        "one",
        "three",
        "two",
    ]
    assert "four" in _names(stacks.list("p", include_deleted=True))
    assert _names(stacks.list("p", filters={"name": ["one", "two"]})) == ["two", "one"]
    assert _names(stacks.list("p", filters={"status": "FAILED"})) == ["bad"]
    assert _names(stacks.list("p", filters={"status": "CREATE_FAILED"})) == ["bad"]
    assert stacks.list("p", filters={"status": "UPDATE_FAILED"}) == []
    assert len(stacks.list("p", filters={"action": "CREATE"})) == 4

    assert _names(stacks.list("p", tags=["web", "prod"])) == ["one"]
    assert _names(stacks.list("p", tags_any=["db", "web"])) == ["three", "two", "one"]
    assert _names(stacks.list("p", not_tags=["web", "prod"])) == ["bad", "three", "two"]
    assert _names(stacks.list("p", not_tags_any=["prod"])) == ["bad", "two"]
    assert _names(stacks.list("p", tags_any=["prod", "web"], limit=2)) == ["three", "two"]

    page1 = stacks.list("p", sort_keys=["stack_name"], sort_dir="asc", limit=2)
    assert _names(page1) == ["bad", "one"]
    page2 = stacks.list(
        "p", sort_keys=["stack_name"], sort_dir="asc", limit=2, marker=page1[-1]["id"]
    )
    assert _names(page2) == ["three", "two"]
    tagged = stacks.list("p", tags=["prod"], marker=stacks.list("p")[0]["id"])
    assert _names(tagged) == ["three", "one"]

    with pytest.raises(InvalidInput, match="Cannot filter stacks on 'colour'"):
        stacks.list("p", filters={"colour": "red"})
    with pytest.raises(InvalidInput, match="Cannot sort stacks by 'size'"):
        stacks.list("p", sort_keys=["size"])
    with pytest.raises(NotFound):
        stacks.list("p", marker="no-such-stack")
