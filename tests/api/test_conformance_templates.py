"""Template resources through Heat's API, as python-heatclient sends them:
``files`` keys as heatclient writes them, and Heat's answers for updates of
``external_id``."""

from __future__ import annotations

from typing import Any

from heatclient.client import Client

PROVIDER = """\
heat_template_version: 2018-08-31
parameters:
  name: {type: string}
outputs:
  out: {value: {get_param: name}}
"""


def test_an_absolute_files_key_is_a_resource_type(heat: Client, settle: Any) -> None:
    """heatclient puts a provider read from /opt/provider.yaml under that
    key; Heat takes any ``files`` key as a template type."""
    template = {
        "heat_template_version": "2018-08-31",
        "resources": {"r": {"type": "/opt/provider.yaml", "properties": {"name": "x"}}},
        "outputs": {"o": {"value": {"get_attr": ["r", "out"]}}},
    }
    created = heat.stacks.create(
        stack_name="abs-type", template=template, files={"/opt/provider.yaml": PROVIDER}
    )
    stack = settle(heat, created["stack"]["id"])
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert heat.stacks.output_show(stack.id, "o")["output"]["output_value"] == "x"
    [r] = heat.resources.list(stack.id)
    assert r.resource_name == "r"


def test_changing_external_id_fails_the_update(heat: Client, settle: Any) -> None:
    def template(external: str) -> dict[str, Any]:
        return {
            "heat_template_version": "2018-08-31",
            "resources": {"v": {"type": "OS::Heat::None", "external_id": external}},
        }

    created = heat.stacks.create(stack_name="ext-change", template=template("a-1"))
    stack = settle(heat, created["stack"]["id"])
    assert stack.stack_status == "CREATE_COMPLETE"
    heat.stacks.update(stack.id, template=template("a-2"))
    stack = settle(heat, stack.id)
    assert stack.stack_status == "UPDATE_FAILED"
    assert stack.stack_status_reason == (
        "Resource UPDATE failed: NotSupported: resources.v: "
        "Update to property external_id of v (OS::Heat::None) is not supported."
    )
    assert heat.resources.get(stack.id, "v").physical_resource_id == "a-1"
