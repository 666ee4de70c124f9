"""An update preview through python-heatclient lists a nested stack's owner
as updated even when nothing of it changed, as Heat's does:
``StackResource._needs_update`` (heat/engine/resources/stack_resource.py)
is always true for template resources and groups, and
``RemoteStack._needs_update`` for ``OS::Heat::Stack``, and
``StackUpdate.preview`` (heat/engine/update.py) puts every resource whose
``preview_update`` says so in ``updated``."""

from __future__ import annotations

from typing import Any

from heatclient.client import Client

NESTED = """\
heat_template_version: 2018-08-31
parameters:
  v: {type: string, default: a}
resources:
  inner:
    type: OS::Heat::TestResource
    properties: {value: {get_param: v}}
"""

TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  tmpl:
    type: nested.yaml
    properties: {v: a}
  grp:
    type: OS::Heat::ResourceGroup
    properties:
      count: 1
      resource_def: {type: OS::Heat::None}
  remote:
    type: OS::Heat::Stack
    properties:
      template: "heat_template_version: 2018-08-31"
  plain:
    type: OS::Heat::TestResource
    properties: {value: same}
"""


def _names(changes: dict[str, Any], bucket: str) -> set[tuple[str | None, str]]:
    return {(e.get("parent_resource"), e["resource_name"]) for e in changes[bucket]}


def test_an_unchanged_nested_stack_owner_is_previewed_as_updated(heat: Client, settle: Any) -> None:
    files = {"nested.yaml": NESTED}
    stack_id = heat.stacks.create(stack_name="owners", template=TEMPLATE, files=files)["stack"][
        "id"
    ]
    stack = settle(heat, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason

    changes = heat.stacks.preview_update(stack_id, template=TEMPLATE, files=files)[
        "resource_changes"
    ]
    assert _names(changes, "updated") == {(None, "tmpl"), (None, "grp"), (None, "remote")}
    assert _names(changes, "unchanged") == {(None, "plain")}
    assert not changes["replaced"] and not changes["added"] and not changes["deleted"]

    # show_nested: each owner's child is previewed against its new self
    # (Heat recurses into every updated owner but OS::Heat::Stack, which is
    # remote there), and there nothing changed.
    nested = heat.stacks.preview_update(stack_id, template=TEMPLATE, files=files, show_nested=True)[
        "resource_changes"
    ]
    assert _names(nested, "updated") == {(None, "tmpl"), (None, "grp"), (None, "remote")}
    assert _names(nested, "unchanged") == {(None, "plain"), ("tmpl", "inner"), ("grp", "0")}
    assert heat.stacks.get(stack_id).stack_status == "CREATE_COMPLETE"  # nothing ran
