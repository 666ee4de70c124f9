"""Convection::Local::Node through real stacks on SQLite."""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from convection.resources.api import InMemoryContext, Peer, ResourceFailure
from convection.resources.nodes import LocalNodeResource, transport_for
from convection.software import (
    DeployContext,
    LocalNode,
    SourceConfig,
    build_derived_config,
    deploy,
)

from .conftest import Env

NODE = """
resources:
  node:
    type: Convection::Local::Node
    properties:
      environment: {APP_MODE: test}
outputs:
  address: {value: {get_attr: [node, first_address]}}
  networks: {value: {get_attr: [node, networks]}}
  sandbox: {value: {get_attr: [node, sandbox]}}
"""


def test_create_gives_a_sandbox_and_nova_shaped_attributes(env: Env, node_root: Path) -> None:
    env.create(NODE)
    assert env.status() == ("CREATE_COMPLETE", "Stack CREATE completed successfully")
    row = env.record("node")
    out = env.outputs()
    sandbox = Path(out["sandbox"])
    assert sandbox.parent == node_root and sandbox.name == row.physical_id
    assert (sandbox / "work").is_dir() and (sandbox / "home").is_dir()
    assert out["address"] == "127.0.0.1"
    assert out["networks"] == {"local": ["127.0.0.1"]}
    attrs = row.attributes
    assert attrs["addresses"] == {"local": [{"addr": "127.0.0.1", "version": 4}]}
    assert attrs["accessIPv4"] == "127.0.0.1" and attrs["accessIPv6"] == ""
    assert attrs["name"] == attrs["instance_name"] == row.physical_id


def test_delete_removes_the_sandbox(env: Env) -> None:
    env.create(NODE)
    sandbox = Path(env.record("node").data["sandbox"])  # type: ignore[arg-type]
    assert sandbox.is_dir()
    assert env.delete()["stack_status"] == "DELETE_COMPLETE"
    assert not sandbox.exists()


def script_config(script: str) -> Any:
    source = SourceConfig.from_json({"config": script, "group": "script"})
    context = DeployContext("server", "CREATE", "stack/1", "deployment")
    return build_derived_config(source, context, config_id=uuid.uuid4().hex)


def test_the_seam_runs_configs_in_the_sandbox_with_its_environment(env: Env) -> None:
    env.create(NODE)
    transport = transport_for(env.peer("node"))
    assert isinstance(transport, LocalNode)
    result = asyncio.run(transport.run(["/bin/sh", "-c", 'echo "$APP_MODE $PWD"']))
    sandbox = env.record("node").data["sandbox"]
    assert result.stdout.decode().split() == ["test", f"{sandbox}/work"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose.
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] != "Z"


def test_a_supervised_service_outlives_its_step_and_stops_on_delete(env: Env) -> None:
    env.create(NODE)
    transport = transport_for(env.peer("node"))
    script = (
        "#!/bin/sh\n"
        'printf \'{"argv": ["/bin/sh", "-c", "echo $$ > pid; exec sleep 300"]}\' '
        '> "$CONVECTION_SERVICE_DIR/sleeper.json"'
    )
    outcome = asyncio.run(deploy(script_config(script), transport))
    assert outcome.ok, outcome.status_reason
    pid_file = Path(str(env.record("node").data["sandbox"])) / "work" / "pid"
    deadline = time.monotonic() + 10
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline, "the service never started"
        time.sleep(0.05)
    pid = int(pid_file.read_text())
    time.sleep(0.2)
    assert _alive(pid), "the service died with its deploy step"
    assert env.delete()["stack_status"] == "DELETE_COMPLETE"
    assert not _alive(pid)


def test_runs_as_another_os_user(env: Env, test_user: pwd.struct_passwd) -> None:
    env.create(
        f"""
        resources:
          node:
            type: Convection::Local::Node
            properties: {{user: {test_user.pw_name}}}
        outputs:
          user: {{value: {{get_attr: [node, user]}}}}
        """
    )
    assert env.status()[0] == "CREATE_COMPLETE", env.status()
    row = env.record("node")
    assert env.outputs()["user"] == test_user.pw_name
    work = Path(str(row.data["sandbox"])) / "work"
    assert work.stat().st_uid == test_user.pw_uid
    result = asyncio.run(transport_for(env.peer("node")).run(["id", "-u"]))
    assert int(result.stdout) == test_user.pw_uid
    env.delete()
    assert not work.exists()


def test_an_unknown_user_fails_create_clearly(env: Env) -> None:
    env.create(
        """
        resources:
          node:
            type: Convection::Local::Node
            properties: {user: no-such-user-xyz}
        """
    )
    status, reason = env.status()
    assert status == "CREATE_FAILED"
    assert "resources.node" in reason and "no such OS user 'no-such-user-xyz'" in reason
    assert "Traceback" not in reason


def test_create_is_idempotent_after_a_crash(node_root: Path) -> None:
    plugin = LocalNodeResource()
    ctx = InMemoryContext(resource_name="node", stack_name="s")
    props = {"environment": {}}
    asyncio.run(plugin.create(ctx, props))
    first = dict(ctx.data)
    sandbox = Path(str(first["sandbox"]))
    (sandbox / "work" / "kept").write_text("made by a config")
    # The engine crashed after the create returned and calls it again.
    asyncio.run(plugin.create(ctx, props))
    assert ctx.data == first and ctx.physical_id == sandbox.name
    assert (sandbox / "work" / "kept").exists()
    assert sorted(p.name for p in node_root.iterdir()) == [sandbox.name]


def test_create_persists_the_sandbox_before_making_it(node_root: Path) -> None:
    seen: list[bool] = []

    class Watching(InMemoryContext):
        async def set_physical_id(self, physical_id: str | None) -> None:
            seen.append(any(node_root.iterdir()))
            await super().set_physical_id(physical_id)

    ctx = Watching(resource_name="node")
    asyncio.run(LocalNodeResource().create(ctx, {"environment": {}}))
    assert seen == [False] and ctx.writes == 2


def test_delete_of_a_node_never_created_does_nothing(node_root: Path) -> None:
    ctx = InMemoryContext(resource_name="node")
    asyncio.run(LocalNodeResource().delete(ctx, {}))
    assert list(node_root.iterdir()) == []


def peer(type_name: str, data: dict[str, Any] | None = None) -> Peer:
    return Peer("thing", type_name, "CREATE", "COMPLETE", "x", "x", {}, {}, data or {})


def test_a_server_that_is_not_a_server_is_refused() -> None:
    with pytest.raises(
        ResourceFailure,
        match=r"resource thing is not a server: its type is "
        r"OS::Heat::None",
    ):
        transport_for(peer("OS::Heat::None"))
    with pytest.raises(ResourceFailure, match="not a resource of this stack"):
        transport_for(None, server="ghost")
    with pytest.raises(ResourceFailure, match="has no node recorded yet"):
        transport_for(peer("Convection::Local::Node"))


NOVA_TEMPLATE = """
parameters:
  image: {type: string, default: fedora-40}
resources:
  server:
    type: OS::Nova::Server
    properties:
      name: db-1
      image: {get_param: image}
      flavor: m1.small
      key_name: ops
      networks: [{network: private}]
      security_groups: [default]
      user_data_format: SOFTWARE_CONFIG
      software_config_transport: POLL_SERVER_HEAT
      metadata: {role: db}
outputs:
  ip: {value: {get_attr: [server, first_address]}}
  name: {value: {get_attr: [server, name]}}
"""

TO_LOCAL = """
resource_registry:
  OS::Nova::Server: Convection::Local::Node
"""


def test_a_nova_server_template_runs_on_a_local_node(env: Env) -> None:
    env.create(NOVA_TEMPLATE, env=TO_LOCAL)
    assert env.status()[0] == "CREATE_COMPLETE", env.status()
    assert env.outputs() == {"ip": "127.0.0.1", "name": "db-1"}
    row = env.record("server")
    assert row.type == "Convection::Local::Node"
    assert transport_for(env.peer("server")).node_name == "db-1"


def test_a_nova_server_without_a_mapping_says_how_to_map_it(env: Env) -> None:
    with pytest.raises(Exception, match="map it in the environment's resource_registry"):
        env.create(NOVA_TEMPLATE)


def test_nova_properties_update_in_place_and_the_environment_applies(env: Env) -> None:
    env.create(NOVA_TEMPLATE, env=TO_LOCAL)
    before = env.record("server")
    changed = NOVA_TEMPLATE.replace("flavor: m1.small", "flavor: m1.large").replace(
        "metadata: {role: db}", "metadata: {role: db}\n      environment: {ROLE: primary}"
    )
    done = env.update(changed, env=TO_LOCAL, image="fedora-41")
    assert done["stack_status"] == "UPDATE_COMPLETE", done
    after = env.record("server")
    assert after.physical_id == before.physical_id  # in place, same sandbox
    result = asyncio.run(transport_for(env.peer("server")).run(["sh", "-c", "echo $ROLE"]))
    assert result.stdout.decode().strip() == "primary"


def test_check_finds_a_missing_sandbox(env: Env) -> None:
    env.create(NODE)
    assert env.check()["stack_status"] == "CHECK_COMPLETE"
    shutil.rmtree(str(env.record("node").data["sandbox"]))
    checked = env.check()
    assert checked["stack_status"] == "CHECK_FAILED"
    assert (
        "sandbox" in checked["stack_status_reason"]
        and "is missing" in checked["stack_status_reason"]
    )


def test_one_server_is_mapped_by_the_per_resource_registry(env: Env) -> None:
    two = """
    resources:
      first:
        type: OS::Nova::Server
        properties: {flavor: m1.tiny, user_data_format: SOFTWARE_CONFIG}
      second:
        type: OS::Nova::Server
        properties: {flavor: m1.tiny, user_data_format: SOFTWARE_CONFIG}
    """
    mapping = """
    resource_registry:
      resources:
        first: {OS::Nova::Server: Convection::Local::Node}
        second: {OS::Nova::Server: Convection::Local::Node}
    """
    done = env.create(two, env=mapping)
    assert done["stack_status"] == "CREATE_COMPLETE", done
    assert env.record("first").type == env.record("second").type == "Convection::Local::Node"
