"""A third-party hook, installed as a real ``convection.hooks`` entry point
(a dist-info on sys.path), runs a deployment whose config names its group."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from convection.resources.software._node import hook_registry

from .conftest import Env

HOOK_MODULE = '''
from convection.software import DeployResult


class ShoutHook:
    """Runs nothing but ``echo``: the config text, upper-cased, on the node."""

    async def run(self, config, transport, *, timeout):
        text = str(config.config).upper()
        result = await transport.run(["echo", text], timeout=timeout)
        out = result.stdout.decode()
        return DeployResult(
            outputs={"shouted": out.strip()}, stdout=out, stderr="", status_code=result.status
        )
'''


@pytest.fixture
def shout_hook(tmp_path: Path) -> Iterator[None]:
    site = tmp_path / "site"
    (site / "shout_hook_pkg-1.0.dist-info").mkdir(parents=True)
    (site / "shout_hook_pkg-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: shout-hook-pkg\nVersion: 1.0\n"
    )
    (site / "shout_hook_pkg-1.0.dist-info" / "entry_points.txt").write_text(
        "[convection.hooks]\nshout = shout_hook_mod:ShoutHook\n"
    )
    (site / "shout_hook_mod.py").write_text(textwrap.dedent(HOOK_MODULE))
    sys.path.insert(0, str(site))
    hook_registry.cache_clear()
    yield
    sys.path.remove(str(site))
    sys.modules.pop("shout_hook_mod", None)
    hook_registry.cache_clear()


def test_entry_point_hook_runs_a_deployment(env: Env, shout_hook: None) -> None:
    shown = env.create(
        """
resources:
  node: {type: Convection::Local::Node}
  cfg:
    type: OS::Heat::SoftwareConfig
    properties: {group: shout, config: "hello there", outputs: [{name: shouted}]}
  dep:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_resource: cfg}, server: {get_resource: node}}
outputs:
  shouted: {value: {get_attr: [dep, shouted]}}
"""
    )
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    assert env.outputs()["shouted"] == "HELLO THERE"
