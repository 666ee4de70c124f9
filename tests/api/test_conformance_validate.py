"""Template validate and previews, through python-heatclient against a live
server, compared with what Heat 27 answers for the same requests.

The validate expectations are Heat's own (heat-tempest-plugin's
``test_template_validate.py``); the previews follow
``heat/engine/service.py`` (``preview_stack``, ``preview_update_stack``
and its ``show_nested`` recursion) and ``heat/engine/api.py``
(``format_stack``)."""

from __future__ import annotations

from typing import Any

from heatclient.client import Client

RANDOM = """\
heat_template_version: 2014-10-16
description: the stack description
parameters:
  aparam:
    type: number
    default: 10
    description: the param description
resources:
  myres:
    type: OS::Heat::RandomString
    properties:
      length: {get_param: aparam}
"""

PARENT = """\
heat_template_version: 2014-10-16
description: the parent template
parameters:
  pparam:
    type: number
    default: 5
    description: the param description
resources:
  nres:
    type: mynested.yaml
    properties:
      aparam: {get_param: pparam}
"""

PARENT_NOPROP = """\
heat_template_version: 2014-10-16
description: the parent template
resources:
  nres:
    type: mynested.yaml
"""

APARAM = {
    "Default": 10,
    "Description": "the param description",
    "Label": "aparam",
    "NoEcho": "false",
    "Type": "Number",
}
PPARAM = {
    "Default": 5,
    "Description": "the param description",
    "Label": "pparam",
    "NoEcho": "false",
    "Type": "Number",
}


def _env(registry: dict[str, Any] | None = None, **sections: Any) -> dict[str, Any]:
    return {
        "event_sinks": [],
        "parameter_defaults": {},
        "parameters": {},
        "resource_registry": {"resources": {}, **(registry or {})},
        **sections,
    }


# -- template validate -------------------------------------------------------------


def test_validate_without_a_description_says_no_description(heat: Client) -> None:
    body = heat.stacks.validate(template="heat_template_version: 2018-08-31\n")
    assert body == {"Description": "No description", "Parameters": {}, "Environment": _env()}


def test_validate_shows_a_hidden_default_and_value_as_heat_does(heat: Client) -> None:
    """Heat's format_validate_parameter takes ``param.default()`` and
    ``param.user_value``: only ``NoEcho`` says the parameter is hidden."""
    template = """\
heat_template_version: 2018-08-31
parameters:
  cparam: {type: string, default: secret, hidden: true}
  dparam: {type: string, hidden: true}
"""
    body = heat.stacks.validate(template=template, environment={"parameters": {"dparam": "given"}})
    assert body["Parameters"] == {
        "cparam": {
            "Default": "secret",
            "Description": "",
            "Label": "cparam",
            "NoEcho": "true",
            "Type": "String",
        },
        "dparam": {
            "Value": "given",
            "Description": "",
            "Label": "dparam",
            "NoEcho": "true",
            "Type": "String",
        },
    }


def test_validate_environment_shows_the_registry_as_heat(heat: Client) -> None:
    """Heat's registry always has ``resources``, keeps a mapping as given,
    and registers a template file used directly as a type."""
    template = """\
heat_template_version: 2018-08-31
resources:
  direct: {type: mynested.yaml}
  mapped: {type: My::Random}
  plain: {type: OS::Heat::RandomString}
"""
    env = {"resource_registry": {"My::Random": "mynested.yaml"}}
    body = heat.stacks.validate(template=template, files={"mynested.yaml": RANDOM}, environment=env)
    assert body["Environment"] == _env(
        {"My::Random": "mynested.yaml", "mynested.yaml": "mynested.yaml"}
    )
    assert "NestedParameters" not in body  # only with show_nested


def test_validate_nested_off(heat: Client) -> None:
    body = heat.stacks.validate(template=PARENT, files={"mynested.yaml": RANDOM})
    assert body == {
        "Description": "the parent template",
        "Parameters": {"pparam": PPARAM},
        "Environment": _env({"mynested.yaml": "mynested.yaml"}),
    }


def test_validate_nested_on(heat: Client) -> None:
    body = heat.stacks.validate(
        template=PARENT_NOPROP, files={"mynested.yaml": RANDOM}, show_nested=True
    )
    assert body == {
        "Description": "the parent template",
        "Parameters": {},
        "NestedParameters": {
            "nres": {
                "Description": "the stack description",
                "Parameters": {"aparam": APARAM},
                "Type": "mynested.yaml",
            }
        },
        "Environment": _env({"mynested.yaml": "mynested.yaml"}),
    }


def test_validate_nested_on_multiple(heat: Client) -> None:
    """parent -> mynested.yaml -> mynested2.yaml; the owner's property
    value is the nested parameter's ``Value``."""
    nested = RANDOM.replace("OS::Heat::RandomString", "mynested2.yaml")
    body = heat.stacks.validate(
        template=PARENT,
        files={"mynested.yaml": nested, "mynested2.yaml": RANDOM},
        show_nested=True,
    )
    inner = {
        "myres": {
            "Description": "the stack description",
            "Parameters": {"aparam": APARAM},
            "Type": "mynested2.yaml",
        }
    }
    assert body == {
        "Description": "the parent template",
        "Parameters": {"pparam": PPARAM},
        "NestedParameters": {
            "nres": {
                "Description": "the stack description",
                "Parameters": {"aparam": {**APARAM, "Value": 5}},
                "NestedParameters": inner,
                "Type": "mynested.yaml",
            }
        },
        "Environment": _env({"mynested.yaml": "mynested.yaml"}),
    }


def test_validate_nested_through_the_registry_and_a_group(heat: Client) -> None:
    """A registry-mapped type shows its template's parameters under its own
    type name; a group shows one member (Heat sizes it to one), whose
    ``%index%`` (the number 0) is falsy and so not shown as a ``Value``."""
    template = """\
heat_template_version: 2018-08-31
resources:
  mapped:
    type: My::Random
    properties: {aparam: 7}
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 3
      resource_def:
        type: My::Random
        properties: {aparam: "%index%"}
"""
    body = heat.stacks.validate(
        template=template,
        files={"mynested.yaml": RANDOM},
        environment={"resource_registry": {"My::Random": "mynested.yaml"}},
        show_nested=True,
    )
    member = {
        "Description": "the stack description",
        "Parameters": {"aparam": APARAM},
        "Type": "My::Random",
    }
    assert body["NestedParameters"] == {
        "mapped": {**member, "Parameters": {"aparam": {**APARAM, "Value": 7}}},
        "group": {
            "Description": "No description",
            "Parameters": {},
            "NestedParameters": {"0": member},
            "Type": "OS::Heat::ResourceGroup",
        },
    }
    assert body["Environment"] == _env({"My::Random": "mynested.yaml"})


def test_validate_show_nested_false_is_like_none(heat: Client) -> None:
    body = heat.stacks.validate(
        template=PARENT_NOPROP, files={"mynested.yaml": RANDOM}, show_nested=False
    )
    assert "NestedParameters" not in body


# -- stack preview -------------------------------------------------------------------


def test_preview_parameters_include_the_pseudo_parameters(heat: Client, project: str) -> None:
    """Heat's format_stack: ``stack.parameters.map(str)``, every parameter
    and the pseudo-parameters of a stack with no id yet."""
    template = """\
heat_template_version: 2018-08-31
parameters:
  word: {type: string, default: hi}
  count: {type: number, default: 3}
  names: {type: comma_delimited_list, default: "a,b"}
  blob: {type: json, default: {k: 1}}
  flag: {type: boolean, default: true}
  secret: {type: string, default: s3cret, hidden: true}
resources:
  r: {type: OS::Heat::None}
"""
    shown = heat.stacks.preview(stack_name="pv", template=template, parameters={"word": "yo"})
    assert shown.parameters == {
        "OS::stack_id": "None",
        "OS::stack_name": "pv",
        "OS::project_id": project,
        "word": "yo",
        "count": "3",
        "names": "a,b",
        "blob": '{"k": 1}',
        "flag": "True",
        "secret": "******",
    }


def test_preview_with_non_ascii_parameter_and_resource_names(heat: Client) -> None:
    template = """\
heat_template_version: 2018-08-31
parameters:
  grüße: {type: string, default: hallo}
resources:
  wärme:
    type: OS::Heat::TestResource
    properties: {value: {get_param: grüße}}
  日本:
    type: OS::Heat::None
"""
    shown = heat.stacks.preview(stack_name="pv", template=template, parameters={"grüße": "moin"})
    assert shown.parameters["grüße"] == "moin"
    assert sorted(r["resource_name"] for r in shown.resources) == sorted(["wärme", "日本"])
    body = heat.stacks.validate(template=template)
    assert set(body["Parameters"]) == {"grüße"}


# -- update preview with show_nested --------------------------------------------------

NESTED = """\
heat_template_version: 2018-08-31
parameters:
  v: {type: string, default: a}
resources:
  inner:
    type: OS::Heat::TestResource
    properties: {value: {get_param: v}}
  keep:
    type: OS::Heat::None
"""


def _stack(value: str, count: int, last: str) -> str:
    return f"""\
heat_template_version: 2018-08-31
resources:
  tmpl:
    type: nested.yaml
    properties: {{v: {value}}}
  grp:
    type: OS::Heat::ResourceGroup
    properties:
      count: {count}
      resource_def:
        type: nested.yaml
        properties: {{v: {value}}}
  {last}:
    type: nested.yaml
"""


def _names(changes: dict[str, Any], bucket: str) -> set[tuple[str | None, str]]:
    return {(e.get("parent_resource"), e["resource_name"]) for e in changes[bucket]}


def test_update_preview_show_nested_lists_nested_changes(heat: Client, settle: Any) -> None:
    files = {"nested.yaml": NESTED}
    stack_id = heat.stacks.create(stack_name="nest", template=_stack("a", 2, "gone"), files=files)[
        "stack"
    ]["id"]
    assert settle(heat, stack_id).stack_status == "CREATE_COMPLETE"
    new = _stack("b", 1, "fresh")

    flat = heat.stacks.preview_update(stack_id, template=new, files=files)["resource_changes"]
    assert all("parent_resource" not in e for bucket in flat.values() for e in bucket)

    changes = heat.stacks.preview_update(stack_id, template=new, files=files, show_nested=True)[
        "resource_changes"
    ]
    # Updated in place: each nested stack previewed against its new self.
    assert {("tmpl", "inner"), ("0", "inner")} <= _names(changes, "updated")
    assert {("tmpl", "keep"), ("0", "keep")} <= _names(changes, "unchanged")
    # Added: the new resource's whole child.
    assert {(None, "fresh"), ("fresh", "inner"), ("fresh", "keep")} <= _names(changes, "added")
    # Deleted: the removed resource and the group's removed member, with
    # everything inside them.
    assert {(None, "gone"), ("gone", "inner"), ("gone", "keep")} <= _names(changes, "deleted")
    assert {("grp", "1"), ("1", "inner"), ("1", "keep")} <= _names(changes, "deleted")
    fresh = [e for e in changes["added"] if e.get("parent_resource") == "fresh"]
    assert {e["stack_name"] for e in fresh} == {"nest-fresh"}
    inner = next(e for e in changes["updated"] if e.get("parent_resource") == "tmpl")
    nested_stacks = {s.id: s.stack_name for s in heat.stacks.list(show_nested=True)}
    assert nested_stacks[inner["stack_identity"]] == inner["stack_name"]
    assert heat.stacks.get(stack_id).stack_status == "CREATE_COMPLETE"  # nothing ran


def test_update_preview_show_nested_includes_replacements(heat: Client, settle: Any) -> None:
    """A nested-stack owner replaced (its type changed): the old child's
    resources are deleted, the new child's added."""
    files = {"nested.yaml": NESTED, "other.yaml": NESTED.replace("keep", "kept")}
    template = "heat_template_version: 2018-08-31\nresources:\n  n: {type: nested.yaml}\n"
    stack_id = heat.stacks.create(stack_name="swap", template=template, files=files)["stack"]["id"]
    assert settle(heat, stack_id).stack_status == "CREATE_COMPLETE"
    changes = heat.stacks.preview_update(
        stack_id,
        template=template.replace("nested.yaml", "other.yaml"),
        files=files,
        show_nested=True,
    )["resource_changes"]
    assert _names(changes, "replaced") == {(None, "n")}
    assert _names(changes, "deleted") == {("n", "inner"), ("n", "keep")}
    assert _names(changes, "added") == {("n", "inner"), ("n", "kept")}
