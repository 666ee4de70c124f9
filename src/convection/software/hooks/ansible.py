"""The ``ansible`` hook: heat-agents' hook-ansible, with a real ansible-playbook.

What heat-agents' ``hook-ansible.py`` does, and so what this does:

* the config (a playbook) is written to ``<config id>_playbook.yaml``;
* the variables go to ``<config id>_variables.json`` (mode 0600) and are
  passed as ``--extra-vars @FILE``: every input by name, plus
  ``heat_config_id`` and ``heat_outputs_path``;
* options ``tags``, ``skip_tags`` and ``modulepath`` become ``--tags``,
  ``--skip-tags`` and ``--module-path``; ``callback_plugins`` sets
  ``ANSIBLE_CALLBACK_PLUGINS``;
* outputs are read back from ``$heat_outputs_path.<name>`` files *on the
  node* (the play writes them there), with stdout, stderr and return code;
* an empty config does nothing and succeeds.

Where ansible-playbook runs: for a local node, inside the node's sandbox
through its transport (``ansible_connection=local``, the node's user, its
clean environment). For an SSH host, on this machine, connecting with the
transport's own key and known_hosts file and ``StrictHostKeyChecking=yes``.
Either way the inventory has one host named ``localhost`` (heat-agents'
inventory is ``localhost,``), so playbooks written for the agent with
``hosts: localhost`` run unchanged. The agent's ``inventory`` option is not
supported: the node is the inventory.

ansible-playbook is found next to the running Python (the venv) first, then
on ``PATH``.
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from convection.software.derived import DerivedConfig, agent_input_values
from convection.software.errors import HookNotFound
from convection.software.hooks.base import clear_outputs, config_text, read_outputs, safe_id
from convection.software.outcome import DeployResult
from convection.software.transports._process import run_process
from convection.software.transports.base import (
    KILL_GRACE,
    OUTPUT_LIMIT,
    AnsibleTarget,
    RunResult,
    Transport,
)

WORKING_DIR: Final = "heat-config-ansible"
OUTPUTS_DIR: Final = "outputs/heat-config-ansible"
_CONTROLLER_PATH: Final = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def find_ansible_playbook() -> str:
    """ansible-playbook beside ``sys.executable``, else on ``PATH``."""
    beside = Path(sys.executable).parent / "ansible-playbook"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("ansible-playbook")
    if found is None:
        raise HookNotFound("ansible", detail="ansible-playbook is not installed")
    return found


def _ansible_cfg(local_tmp: str) -> bytes:
    """Settings of our own, so no ansible.cfg of the machine or user applies."""
    return (
        "[defaults]\n"
        "retry_files_enabled = False\n"
        "nocolor = True\n"
        "host_key_checking = True\n"
        "deprecation_warnings = False\n"
        f"local_tmp = {local_tmp}\n"
        "[connection]\n"
        # One ssh round trip per task instead of several (no temp module files).
        "pipelining = True\n"
    ).encode()


class AnsibleHook:
    """Runs a config as an Ansible playbook against its node."""

    def __init__(
        self, *, ansible_playbook: str | None = None, output_limit: int = OUTPUT_LIMIT
    ) -> None:
        self._command = ansible_playbook
        self._output_limit = output_limit

    async def run(
        self, config: DerivedConfig, transport: Transport, *, timeout: float
    ) -> DeployResult:
        config_id = safe_id(config)
        playbook = config_text(config)
        if not playbook:
            return DeployResult({}, "", "No 'config' input found, nothing to do.\n", 0)
        command = self._command or find_ansible_playbook()
        work = await transport.workdir()
        outputs_dir = posixpath.join(work, OUTPUTS_DIR)
        await transport.make_dirs(outputs_dir)
        outputs_path = posixpath.join(outputs_dir, config_id)
        await clear_outputs(transport, outputs_path, config)
        variables = {"heat_config_id": config_id, **agent_input_values(config)}
        variables["heat_outputs_path"] = outputs_path
        target = await transport.ansible_target()
        files = {
            "playbook": (f"{config_id}_playbook.yaml", playbook.encode()),
            "vars": (f"{config_id}_variables.json", json.dumps(variables).encode()),
        }
        if target.on_node:
            result = await self._run_on_node(command, config, transport, target, files, timeout)
        else:
            result = await self._run_on_controller(command, config, target, files, timeout)
        return DeployResult(
            outputs=await read_outputs(transport, outputs_path, config),
            stdout=result.stdout.decode("utf-8", "replace"),
            stderr=result.stderr.decode("utf-8", "replace"),
            status_code=result.status,
            timed_out=result.timed_out,
            truncated=result.truncated,
            timeout=timeout,
        )

    async def _run_on_node(
        self,
        command: str,
        config: DerivedConfig,
        transport: Transport,
        target: AnsibleTarget,
        files: Mapping[str, tuple[str, bytes]],
        timeout: float,
    ) -> RunResult:
        work_dir = posixpath.join(await transport.workdir(), WORKING_DIR)
        await transport.make_dirs(posixpath.join(work_dir, "tmp"))
        paths = await _write_all(transport, work_dir, {**files, **_support_files(target, work_dir)})
        return await transport.run(
            _argv(command, paths, config),
            env=_ansible_env(paths, config),
            cwd=work_dir,
            timeout=timeout,
            output_limit=self._output_limit,
        )

    async def _run_on_controller(
        self,
        command: str,
        config: DerivedConfig,
        target: AnsibleTarget,
        files: Mapping[str, tuple[str, bytes]],
        timeout: float,
    ) -> RunResult:
        with tempfile.TemporaryDirectory(prefix="convection-ansible-") as tmp:
            os.mkdir(os.path.join(tmp, "tmp"), 0o700)
            host_vars = dict(target.host_vars)
            if target.private_key is not None:
                key_path = os.path.join(tmp, "ssh_key")
                _write_local(key_path, target.private_key.encode())
                host_vars["ansible_ssh_private_key_file"] = key_path
            support = _support_files(AnsibleTarget(False, host_vars), tmp)
            paths = {}
            for role, (name, data) in {**files, **support}.items():
                paths[role] = os.path.join(tmp, name)
                _write_local(paths[role], data)
            env = _ansible_env(paths, config)
            env.update(PATH=os.environ.get("PATH", _CONTROLLER_PATH), HOME=tmp)
            env.update(LANG="C.UTF-8", LC_ALL="C.UTF-8")
            return await run_process(
                _argv(command, paths, config),
                env=env,
                cwd=tmp,
                timeout=timeout,
                output_limit=self._output_limit,
                kill_grace=KILL_GRACE,
            )


def _support_files(target: AnsibleTarget, directory: str) -> dict[str, tuple[str, bytes]]:
    inventory = {"all": {"hosts": {"localhost": dict(target.host_vars)}}}
    return {
        "inventory": ("inventory.json", json.dumps(inventory).encode()),
        "cfg": ("ansible.cfg", _ansible_cfg(posixpath.join(directory, "tmp"))),
    }


async def _write_all(
    transport: Transport, directory: str, files: Mapping[str, tuple[str, bytes]]
) -> dict[str, str]:
    paths = {}
    for role, (name, data) in files.items():
        paths[role] = posixpath.join(directory, name)
        await transport.put_file(paths[role], data, mode=0o600)
    return paths


def _write_local(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _argv(command: str, paths: Mapping[str, str], config: DerivedConfig) -> list[str]:
    argv = [command, "-i", paths["inventory"]]
    for option, flag in (
        ("modulepath", "--module-path"),
        ("skip_tags", "--skip-tags"),
        ("tags", "--tags"),
    ):
        value = config.options.get(option)
        if value:
            argv += [flag, str(value)]
    return [*argv, paths["playbook"], "--extra-vars", "@" + paths["vars"]]


def _ansible_env(paths: Mapping[str, str], config: DerivedConfig) -> dict[str, str]:
    env = {"ANSIBLE_CONFIG": paths["cfg"], "ANSIBLE_NOCOLOR": "1", "PYTHONUNBUFFERED": "1"}
    callback_plugins = config.options.get("callback_plugins")
    if callback_plugins:
        env["ANSIBLE_CALLBACK_PLUGINS"] = str(callback_plugins)
    return env
