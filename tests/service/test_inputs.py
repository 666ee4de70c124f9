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


STRATEGY_TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  who: {type: string, default: nobody}
  what: {type: string, default: nothing}
  tags: {type: comma_delimited_list, default: []}
resources:
  web: {type: OS::Heat::None}
"""


def _stored(parameters: dict[str, object], defaults: dict[str, object]) -> TemplateRecord:
    return TemplateRecord(
        id=1,
        template=load(STRATEGY_TEMPLATE, "t.yaml").data,
        environment={
            "parameters": parameters,
            "parameter_defaults": defaults,
            "resource_registry": {},
            "event_sinks": [],
        },
        files={},
    )


def _patched(
    stored: TemplateRecord, env: str, **parameters: object
) -> tuple[dict[str, object], dict[str, object]]:
    patch = StackPatch(environments=(load(env, "new.yaml"),), parameters=parameters)
    merged = patch_inputs(stored, dict(stored.environment["parameters"]), patch)
    env_ = compile_stack(merged).environment
    return dict(env_.parameters), dict(env_.parameter_defaults)


def test_a_patch_file_merge_replaces_a_stored_value_the_request_does_not_send() -> None:
    """Heat merges the new files over the request's parameters only, then
    loads the result over the stored ones (_prepare_stack_updates in
    heat/engine/service.py): a stored value is replaced, never merged onto."""
    stored = _stored({"who": "first", "what": "kept"}, {})
    env = "parameters: {who: -file}\nparameter_merge_strategies: {who: merge}\n"
    assert _patched(stored, env)[0] == {"who": "-file", "what": "kept"}
    # a value the request sends is what the file merges onto
    assert _patched(stored, env, who="flag")[0] == {"who": "flag-file", "what": "kept"}
    # lists are replaced too, not extended
    stored = _stored({"tags": ["a"]}, {})
    env = "parameters: {tags: [b]}\nparameter_merge_strategies: {default: merge}\n"
    assert _patched(stored, env)[0] == {"tags": ["b"]}


def test_a_patch_file_merge_replaces_stored_parameter_defaults() -> None:
    stored = _stored({}, {"what": "stored", "who": "kept"})
    env = "parameter_defaults: {what: -new}\nparameter_merge_strategies: {what: merge}\n"
    assert _patched(stored, env)[1] == {"what": "-new", "who": "kept"}


def test_later_patch_files_still_merge_among_themselves() -> None:
    stored = _stored({"who": "first"}, {})
    strategy = "parameter_merge_strategies: {who: merge}\n"
    first = load("parameters: {who: a}\n" + strategy, "a.yaml")
    second = load("parameters: {who: -b}\n" + strategy, "b.yaml")
    merged = patch_inputs(stored, {"who": "first"}, StackPatch(environments=(first, second)))
    assert dict(compile_stack(merged).environment.parameters) == {"who": "a-b"}


def test_a_patch_drops_what_the_new_template_does_not_declare() -> None:
    """Heat pops every parameter the (new) template does not declare."""
    stored = _stored({"who": "first", "what": "kept"}, {})
    smaller = load(STRATEGY_TEMPLATE.replace("  what: {type: string, default: nothing}\n", ""), "t")
    patch = StackPatch(
        template=smaller,
        environments=(load("parameters: {who: env, gone: 1}\n", "new.yaml"),),
        parameters={"ghost": "x"},
    )
    merged = patch_inputs(stored, {"who": "first", "what": "kept"}, patch)
    assert dict(compile_stack(merged).environment.parameters) == {"who": "env"}


def test_a_patch_keeps_the_stored_event_sinks_first() -> None:
    stored = _stored({}, {})
    stored.environment["event_sinks"] = [{"type": "zaqar-queue", "target": "old"}]
    new = load("event_sinks: [{type: zaqar-queue, target: new}]\n", "new.yaml")
    merged = patch_inputs(stored, {}, StackPatch(environments=(new,)))
    sinks = compile_stack(merged).environment.event_sinks
    assert [s["target"] for s in sinks] == ["old", "new"]
