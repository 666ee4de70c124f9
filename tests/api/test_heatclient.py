"""python-heatclient, unchanged, against a live server: the whole life of
a stack through Heat's own client library."""

from __future__ import annotations

import json
from typing import Any

import pytest
from heatclient import exc
from heatclient.client import Client

TEMPLATE: dict[str, Any] = {
    "heat_template_version": "2018-08-31",
    "description": "api test stack",
    "parameters": {"greeting": {"type": "string", "default": "hello"}},
    "resources": {
        "first": {
            "type": "OS::Heat::TestResource",
            "properties": {"value": {"get_param": "greeting"}, "update_replace": False},
        },
        "second": {
            "type": "OS::Heat::TestResource",
            "properties": {"value": {"get_attr": ["first", "output"]}},
        },
    },
    "outputs": {
        "said": {"description": "what was said", "value": {"get_attr": ["second", "output"]}},
    },
}

WAIT_TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  handle:
    type: OS::Heat::WaitConditionHandle
  wait:
    type: OS::Heat::WaitCondition
    properties:
      handle: {get_resource: handle}
      count: 1
      timeout: 120
outputs:
  got:
    value: {get_attr: [wait, data]}
"""


def test_create_show_outputs_resources_events(heat: Client, settle: Any) -> None:
    created = heat.stacks.create(
        stack_name="life", template=TEMPLATE, parameters={"greeting": "hi"}
    )
    stack_id = created["stack"]["id"]
    assert created["stack"]["links"][0]["href"].endswith(f"/stacks/life/{stack_id}")

    stack = settle(heat, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE"
    assert heat.stacks.get("life").id == stack_id  # by name: follows Heat's redirect
    assert stack.description == "api test stack"
    assert stack.parameters["greeting"] == "hi"

    assert heat.stacks.output_list(stack_id) == {
        "outputs": [{"output_key": "said", "description": "what was said"}]
    }
    assert heat.stacks.output_show(stack_id, "said")["output"]["output_value"] == "hi"

    resources = {r.resource_name: r for r in heat.resources.list(stack_id)}
    assert set(resources) == {"first", "second"}
    assert resources["first"].required_by == ["second"]
    assert resources["first"].resource_status == "CREATE_COMPLETE"
    shown = heat.resources.get(stack_id, "first")
    assert shown.attributes["output"] == "hi"
    filtered = heat.resources.list(stack_id, filters={"name": "second"})
    assert [r.resource_name for r in filtered] == ["second"]

    events = heat.events.list(stack_id)
    states = [(e.resource_name, e.resource_status) for e in events]
    assert states[0] == ("life", "CREATE_IN_PROGRESS")
    assert states[-1] == ("life", "CREATE_COMPLETE")
    assert ("first", "CREATE_COMPLETE") in states
    mine = heat.events.list(stack_id, resource_name="first")
    assert {e.resource_name for e in mine} == {"first"}
    one = heat.events.get(stack_id, "first", mine[0].id)
    assert one.id == mine[0].id
    assert heat.stacks.template(stack_id)["description"] == "api test stack"


def test_update_and_preview(heat: Client, settle: Any) -> None:
    stack_id = heat.stacks.create(stack_name="upd", template=TEMPLATE)["stack"]["id"]
    settle(heat, stack_id)

    preview = heat.stacks.preview_update(
        stack_id, template=TEMPLATE, parameters={"greeting": "bye"}
    )
    changes = preview["resource_changes"]
    assert "first" in [r["resource_name"] for r in changes["updated"]]
    assert changes["added"] == [] and changes["deleted"] == [] and changes["replaced"] == []

    heat.stacks.update(stack_id, template=TEMPLATE, parameters={"greeting": "bye"})
    stack = settle(heat, stack_id)
    assert stack.stack_status == "UPDATE_COMPLETE"
    assert heat.stacks.output_show(stack_id, "said")["output"]["output_value"] == "bye"

    heat.stacks.update(stack_id, existing=True, parameters={"greeting": "patched"})
    stack = settle(heat, stack_id)
    assert stack.stack_status == "UPDATE_COMPLETE"
    assert stack.parameters["greeting"] == "patched"


def test_preview_create_shows_every_resource_added(heat: Client) -> None:
    preview = heat.stacks.preview(stack_name="pv", template=TEMPLATE)
    assert preview.stack_name == "pv"
    assert sorted(r["resource_name"] for r in preview.resources) == ["first", "second"]
    with pytest.raises(exc.HTTPNotFound):
        heat.stacks.get("pv")  # a preview creates nothing


def test_signal_completes_a_wait_condition(heat: Client, settle: Any, until: Any) -> None:
    stack_id = heat.stacks.create(stack_name="waits", template=WAIT_TEMPLATE)["stack"]["id"]
    until(lambda: heat.resources.get(stack_id, "handle").resource_status == "CREATE_COMPLETE")
    assert heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"
    heat.resources.signal(stack_id, "handle", data={"status": "SUCCESS", "data": "ready"})
    stack = settle(heat, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE"
    got = heat.stacks.output_show(stack_id, "got")["output"]["output_value"]
    assert json.loads(got) == {"1": "ready"}


def test_delete(heat: Client, settle: Any) -> None:
    stack_id = heat.stacks.create(stack_name="gone", template=TEMPLATE)["stack"]["id"]
    settle(heat, stack_id)
    heat.stacks.delete(stack_id)
    assert settle(heat, stack_id).stack_status == "DELETE_COMPLETE"
    with pytest.raises(exc.HTTPNotFound):
        heat.stacks.get("gone")  # by name, a deleted stack is gone
    assert [s.stack_name for s in heat.stacks.list()] == []


def test_actions_suspend_resume_check(heat: Client, settle: Any) -> None:
    stack_id = heat.stacks.create(stack_name="acts", template=TEMPLATE)["stack"]["id"]
    settle(heat, stack_id)
    heat.actions.suspend(stack_id)
    assert settle(heat, stack_id).stack_status == "SUSPEND_COMPLETE"
    heat.actions.resume(stack_id)
    assert settle(heat, stack_id).stack_status == "RESUME_COMPLETE"
    heat.actions.check(stack_id)
    assert settle(heat, stack_id).stack_status == "CHECK_COMPLETE"
    with pytest.raises(exc.HTTPBadRequest) as caught:
        heat.actions.cancel_update(stack_id)
    assert "not supported" in str(caught.value)


def test_list_with_filters_and_paging(heat: Client, settle: Any) -> None:
    ids = [
        heat.stacks.create(stack_name=f"s{i}", template=TEMPLATE, tags=f"t{i % 2}")["stack"]["id"]
        for i in range(3)
    ]
    for stack_id in ids:
        settle(heat, stack_id)
    names = sorted(s.stack_name for s in heat.stacks.list())
    assert names == ["s0", "s1", "s2"]
    assert [s.stack_name for s in heat.stacks.list(filters={"name": "s1"})] == ["s1"]
    assert sorted(s.stack_name for s in heat.stacks.list(tags="t0")) == ["s0", "s2"]
    asc = [s.stack_name for s in heat.stacks.list(sort_keys=["stack_name"], sort_dir="asc")]
    assert asc == ["s0", "s1", "s2"]
    page = list(heat.stacks.list(limit=2, sort_keys=["stack_name"], sort_dir="asc"))
    assert [s.stack_name for s in page] == ["s0", "s1"]


def test_template_validate_and_types(heat: Client) -> None:
    body = heat.stacks.validate(template=TEMPLATE)
    assert body["Description"] == "api test stack"
    assert body["Parameters"]["greeting"]["Default"] == "hello"
    types = heat.resource_types.list()
    assert "OS::Heat::TestResource" in [t.resource_type for t in types]
    schema = heat.resource_types.get("OS::Heat::RandomString")
    assert schema["properties"]["length"]["type"] == "integer"
    assert "value" in schema["attributes"]
    generated = heat.resource_types.generate_template("OS::Heat::RandomString", "hot")
    assert generated["resources"]["RandomString"]["type"] == "OS::Heat::RandomString"
    versions = [v.version for v in heat.template_versions.list()]
    assert "heat_template_version.2018-08-31" in versions
    functions = [
        f.functions for f in heat.template_versions.get("heat_template_version.2018-08-31")
    ]
    assert "get_attr" in functions
    assert heat.build_info.build_info()["api"]["revision"]


def test_parallel_clients_create_and_delete(server: Any, project: str, settle: Any) -> None:
    """Eight clients at once: every request answered, no state lost."""
    from concurrent.futures import ThreadPoolExecutor

    def life(i: int) -> str:
        heat = Client("1", endpoint=server.endpoint(project), token="t")
        stack_id = heat.stacks.create(stack_name=f"par{i}", template=TEMPLATE)["stack"]["id"]
        assert settle(heat, stack_id).stack_status == "CREATE_COMPLETE"
        heat.stacks.delete(stack_id)
        return str(settle(heat, stack_id).stack_status)

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(life, range(8))) == ["DELETE_COMPLETE"] * 8
    heat = Client("1", endpoint=server.endpoint(project), token="t")
    assert list(heat.stacks.list()) == []
    assert len(list(heat.stacks.list(show_deleted=True))) == 8


def test_mark_unhealthy_and_event_filters(heat: Client, settle: Any) -> None:
    stack_id = heat.stacks.create(stack_name="health", template=TEMPLATE)["stack"]["id"]
    settle(heat, stack_id)
    heat.resources.mark_unhealthy(stack_id, "first", True, "broken disk")
    first = heat.resources.get(stack_id, "first")
    assert first.resource_status == "CHECK_FAILED"
    assert first.resource_status_reason == "broken disk"
    failed = heat.resources.list(stack_id, filters={"status": "FAILED"})
    assert [r.resource_name for r in failed] == ["first"]

    done = heat.events.list(stack_id, filters={"resource_status": "FAILED"})
    assert [(e.resource_name, e.resource_status) for e in done] == [("first", "CHECK_FAILED")]
    created = heat.events.list(
        stack_id, filters={"resource_action": "CREATE", "resource_name": "second"}
    )
    assert [e.resource_status for e in created] == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"]
    newest = heat.events.list(stack_id, sort_dir="desc", limit=1)
    assert [e.resource_status for e in newest] == ["CHECK_FAILED"]


def test_environment_hooks_and_clearing_one(heat: Client, settle: Any, until: Any) -> None:
    """heatclient's ``stack hook clear`` is a signal ``{unset_hook: ...}``."""
    env = {"resource_registry": {"resources": {"first": {"hooks": "pre-create"}}}}
    stack_id = heat.stacks.create(stack_name="hooked", template=TEMPLATE, environment=env)["stack"][
        "id"
    ]

    def paused() -> bool:
        reasons = [e.resource_status_reason for e in heat.events.list(stack_id)]
        return any("Hook pre-create" in (r or "") for r in reasons)

    until(paused)
    assert heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"
    assert heat.stacks.environment(stack_id)["resource_registry"]["resources"] == {
        "first": {"hooks": "pre-create"}
    }
    heat.resources.signal(stack_id, "first", data={"unset_hook": "pre-create"})
    assert settle(heat, stack_id).stack_status == "CREATE_COMPLETE"


def test_files_and_environment_files_as_heatclient_sends_them(
    heat: Client, settle: Any, tmp_path: Any
) -> None:
    """What ``openstack stack create -t T -e E`` sends: the template and
    environment read by heatclient's own template_utils, get_file contents
    in ``files``, the environment files named in ``environment_files``."""
    from heatclient.common import template_utils

    (tmp_path / "motd.txt").write_text("welcome\n")
    (tmp_path / "main.yaml").write_text(
        "heat_template_version: 2018-08-31\n"
        "parameters:\n  who: {type: string, default: nobody}\n"
        "resources:\n  v:\n    type: OS::Heat::Value\n"
        "    properties:\n"
        "      value: {list_join: ['', [{get_file: motd.txt}, {get_param: who}]]}\n"
        "outputs:\n  out: {value: {get_attr: [v, value]}}\n"
    )
    (tmp_path / "env.yaml").write_text("parameters:\n  who: env-file\n")
    files, template = template_utils.get_template_contents(str(tmp_path / "main.yaml"))
    env_names: list[str] = []
    env_files, env = template_utils.process_multiple_environments_and_files(
        env_paths=[str(tmp_path / "env.yaml")], env_list_tracker=env_names
    )
    stack_id = heat.stacks.create(
        stack_name="files",
        template=template,
        files={**files, **env_files},
        environment=env,
        environment_files=env_names,
        parameters={"who": "flag"},
    )["stack"]["id"]
    assert settle(heat, stack_id).stack_status == "CREATE_COMPLETE"
    # Environment files override --parameter values, as in Heat.
    assert heat.stacks.output_show(stack_id, "out")["output"]["output_value"] == "welcome\nenv-file"
    assert any(v == "welcome\n" for v in heat.stacks.files(stack_id).values())
