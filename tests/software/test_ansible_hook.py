"""The ansible hook: a real ansible-playbook, on a local node and over SSH."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from convection.software import (
    DeployContext,
    DeployOutcome,
    DerivedConfig,
    LocalNode,
    SourceConfig,
    SSHHost,
    SSHPool,
    SSHTransport,
    Transport,
    build_derived_config,
    deploy,
)
from convection.software.hooks import find_ansible_playbook

T = TypeVar("T")

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: write the declared output on the node
      copy:
        dest: "{{ heat_outputs_path }}.message"
        content: >-
          {{ greeting }} {{ settings.port }} {{ deploy_action }} {{ heat_config_id }}
          {{ ansible_connection }}
    - name: a tagged task
      command: /bin/echo tagged-task-ran
      tags: [extra]
"""

FAILING = """
- hosts: localhost
  gather_facts: false
  tasks:
    - command: /bin/sh -c 'echo broken-step >&2; exit 4'
"""


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def derived(playbook: str, options: dict[str, Any] | None = None) -> DerivedConfig:
    source = SourceConfig.from_json(
        {
            "group": "ansible",
            "config": playbook,
            "options": options or {},
            "inputs": [{"name": "settings", "type": "Json"}],
            "outputs": [{"name": "message"}],
        }
    )
    context = DeployContext("server-1", "CREATE", "stack/1", "deployment")
    values = {"greeting": "hello", "settings": {"port": 8080}}
    return build_derived_config(source, context, config_id=uuid.uuid4().hex, input_values=values)


@pytest.fixture(scope="module", autouse=True)
def ansible_installed() -> None:
    try:
        find_ansible_playbook()
    except Exception:
        pytest.fail("ansible-playbook missing: install the project's test extra")


def check_success(outcome: DeployOutcome, config: DerivedConfig, connection: str) -> None:
    assert outcome.ok, outcome.status_reason + outcome.output_values["deploy_stdout"]
    message = f"hello 8080 CREATE {config.id} {connection}"
    assert outcome.output_values["message"] == message
    assert "tagged-task-ran" not in outcome.output_values["deploy_stdout"]  # skipped by tags
    assert "PLAY RECAP" in outcome.output_values["deploy_stdout"]


def test_playbook_on_a_local_node(tmp_path: Path) -> None:
    node = LocalNode(tmp_path / "node", name="local")
    config = derived(PLAYBOOK, {"skip_tags": "extra"})
    check_success(run(deploy(config, node)), config, "local")
    # The play ran inside the sandbox: ansible's temp files are there, not in ~.
    assert any((tmp_path / "node").rglob("ansible.cfg"))


def test_playbook_over_ssh_with_the_transports_key(make_host: Callable[..., SSHHost]) -> None:
    config = derived(PLAYBOOK, {"skip_tags": "extra"})

    async def scenario() -> DeployOutcome:
        async with SSHPool() as pool:
            node: Transport = SSHTransport(make_host(1), pool, name="remote")
            return await deploy(config, node)

    check_success(run(scenario()), config, "ssh")


def test_playbook_over_ssh_with_key_text_and_tofu(
    make_host: Callable[..., SSHHost], ssh_keys: Path, tmp_path: Path
) -> None:
    known = tmp_path / "tofu_known_hosts"
    host = make_host(
        0,
        private_key_path=None,
        private_key=(ssh_keys / "client_key").read_text(),
        known_hosts=known,
        trust_on_first_use=True,
    )
    config = derived(PLAYBOOK, {"tags": "all", "skip_tags": "extra"})

    async def scenario() -> DeployOutcome:
        async with SSHPool() as pool:
            return await deploy(config, SSHTransport(host, pool))

    check_success(run(scenario()), config, "ssh")
    assert known.read_text().count("\n") == 1  # recorded once, then used by ssh(1)


def test_failing_task_fails_the_deployment(tmp_path: Path) -> None:
    node = LocalNode(tmp_path / "node", name="local")
    outcome = run(deploy(derived(FAILING), node))
    assert outcome.status == "FAILED"
    assert outcome.output_values["deploy_status_code"] == 2  # ansible: a task failed
    assert "broken-step" in outcome.output_values["deploy_stdout"]


def test_empty_playbook_does_nothing(tmp_path: Path) -> None:
    node = LocalNode(tmp_path / "node", name="local")
    outcome = run(deploy(derived(""), node))
    assert outcome.ok and outcome.output_values["deploy_status_code"] == 0
