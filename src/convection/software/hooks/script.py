"""The ``script`` hook: heat-agents' hook-script, through a transport.

What heat-agents' ``hook-script.py`` does, and so what this does:

* the config text is written to ``WORKING_DIR/<config id>`` with mode 0700
  and executed directly (so it needs a ``#!`` line), with the working dir
  as the current directory;
* every input becomes an environment variable of the same name; a map or
  a list is given as JSON; ``heat_outputs_path`` is set to
  ``OUTPUTS_DIR/<config id>``;
* after the run, each declared output is the content of
  ``$heat_outputs_path.<name>`` if that file exists (as is, newline kept);
* stdout, stderr and the exit status are returned.

Differences, each on purpose: the environment is the node's (a local
sandbox's clean one, or the SSH login's) rather than the agent's own; scalar
values are ``str()``-ed for every type, not only String (the agent would
crash on a non-string); ``None`` is the empty string; the run has a timeout
that kills its process group; only the last :data:`OUTPUT_LIMIT` bytes of
each stream are kept.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping
from typing import Any

from convection.software.derived import DerivedConfig, agent_input_values
from convection.software.hooks.base import (
    config_text,
    output_files,
    read_outputs,
    safe_id,
)
from convection.software.outcome import DeployResult
from convection.software.transports.base import OUTPUT_LIMIT, FileBatch, FileWrite, Transport

WORKING_DIR = "heat-config-script"
OUTPUTS_DIR = "outputs/heat-config-script"


def input_env(values: Mapping[str, Any]) -> dict[str, str]:
    """Inputs as environment variables: maps and lists as JSON, ``None`` as ``""``."""
    env: dict[str, str] = {}
    for name, value in values.items():
        if isinstance(value, dict | list):
            env[name] = json.dumps(value)
        elif value is None:
            env[name] = ""
        else:
            env[name] = str(value)
    return env


class ScriptHook:
    """Runs a config as an executable script."""

    def __init__(self, *, output_limit: int = OUTPUT_LIMIT) -> None:
        self._output_limit = output_limit

    async def run(
        self, config: DerivedConfig, transport: Transport, *, timeout: float
    ) -> DeployResult:
        config_id = safe_id(config)
        work = await transport.workdir()
        script_dir = posixpath.join(work, WORKING_DIR)
        outputs_dir = posixpath.join(work, OUTPUTS_DIR)
        script = posixpath.join(script_dir, config_id)
        outputs_path = posixpath.join(outputs_dir, config_id)
        # The dirs, the removal of an interrupted attempt's outputs and the
        # script go with the run: one round trip on a remote node.
        prepare = FileBatch(
            make_dirs=(script_dir, outputs_dir),
            remove=tuple(output_files(outputs_path, config).values()),
            write=(FileWrite(script, config_text(config).encode(), 0o700),),
        )
        env = input_env(agent_input_values(config))
        env["heat_outputs_path"] = outputs_path
        result = await transport.run(
            [script],
            env=env,
            cwd=script_dir,
            timeout=timeout,
            output_limit=self._output_limit,
            prepare=prepare,
        )
        return DeployResult(
            outputs=await read_outputs(transport, outputs_path, config),
            stdout=result.stdout.decode("utf-8", "replace"),
            stderr=result.stderr.decode("utf-8", "replace"),
            status_code=result.status,
            timed_out=result.timed_out,
            truncated=result.truncated,
            timeout=timeout,
        )
