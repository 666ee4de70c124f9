"""PATCH-update merging and hook flags (``convection.service.inputs``), pure."""

from __future__ import annotations

from convection.hot.loader import load
from convection.model.compiler import StackInputs, compile_stack
from convection.service.inputs import (
    StackPatch,
    hooks_environment,
    load_registry,
    merged_registry,
    patch_inputs,
)
from convection.store.api import TemplateRecord

TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  p: {type: string, default: d}
  q: {type: string, default: e}
resources:
  web: {type: OS::Heat::None}
  db: {type: OS::Heat::None}
"""


def test_load_registry_merges_entry_by_entry_and_null_removes() -> None:
    base = {
        "OS::A": "a.yaml",
        "resources": {"web": {"hooks": "pre-create", "restricted_actions": "replace"}},
    }
    new = {"OS::A": None, "resources": {"web": {"hooks": ["pre-update"]}, "db": {"x": "y"}}}
    assert load_registry(base, new) == {
        "resources": {
            "web": {"hooks": ["pre-update"], "restricted_actions": "replace"},
            "db": {"x": "y"},
        }
    }
    assert base["resources"]["web"]["hooks"] == "pre-create"  # not modified


def test_merged_registry_is_a_shallow_server_side_merge() -> None:
    first = load("resource_registry: {resources: {web: {hooks: pre-create}}, OS::B: null}\n", "1")
    second = load("resource_registry: {resources: {db: {hooks: pre-create}}, OS::C: null}\n", "2")
    assert merged_registry([first, second]) == {
        "resources": {"db": {"hooks": "pre-create"}},
        "OS::B": None,
    }


def test_hooks_environment_keeps_every_files_resource_settings() -> None:
    first = load("resource_registry: {resources: {web: {restricted_actions: update}}}\n", "1")
    second = load("resource_registry: {resources: {db: {hooks: pre-delete}}}\n", "2")
    extra = hooks_environment([first, second], ["web", "nested/*/leaf", "/db/"], "pre-create")
    assert extra.data == {
        "resource_registry": {
            "resources": {
                "web": {"restricted_actions": "update", "hooks": "pre-create"},
                "db": {"hooks": "pre-create"},
                "nested": {"*": {"leaf": {"hooks": "pre-create"}}},
            }
        }
    }
    inputs = StackInputs(load(TEMPLATE, "t.yaml"), (first, second, extra))
    registry = compile_stack(inputs).environment.resource_registry
    assert registry.hooks_for("web") == {"pre-create"}
    assert registry.restricted_actions_for("web") == {"update"}
    assert registry.hooks_for(["nested", "x", "leaf"]) == {"pre-create"}


def test_patch_inputs_reuses_the_stored_parts() -> None:
    stored = TemplateRecord(
        id=1,
        template=load(TEMPLATE, "t.yaml").data,
        environment={
            "parameters": {"p": "stored", "q": "kept"},
            "parameter_defaults": {},
            "resource_registry": {"resources": {"web": {"restricted_actions": "replace"}}},
        },
        files={"file:///a": "A", "file:///b": "B"},
    )
    patch = StackPatch(
        environments=(load("resource_registry: {resources: {db: {hooks: pre-update}}}\n", "n"),),
        files={"file:///b": "B2"},
        parameters={"p": "new"},
    )
    merged = patch_inputs(stored, {"p": "stored", "q": "kept"}, patch, clear=["q"])
    assert merged.template.data == stored.template
    assert merged.files == {"file:///a": "A", "file:///b": "B2"}
    assert merged.parameters == {"p": "new"}
    env = compile_stack(merged).environment
    assert env.resource_registry.restricted_actions_for("web") == {"replace"}
    assert env.resource_registry.hooks_for("db") == {"pre-update"}
    assert dict(env.parameters) == {"p": "new"}
