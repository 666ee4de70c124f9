"""convection.software.run: run a SoftwareConfig on a node from a workflow task.

What Heat's SoftwareDeployment does for a stack, done for one task: derive
the config for ``action`` with ``input_values``, run it on the node
``server`` names through :func:`convection.software.deploy` (the same
hooks, transports and once-only marker the stack resources use), and judge
it by Heat's rules. The result is the deployment's attributes,
``{"outputs": {name: value}, "deploy_stdout", "deploy_stderr",
"deploy_status_code"}``; a failed run (a non-zero status code, a declared
``error_output`` with a value, a timeout) is a Failure with Heat's
``Deployment to server failed: ...`` reason, as the resource's event says.

Why the run holds the coroutine rather than sleeping on a timer: the
stack resources do the same (the run's process is the engine's child, or
an SSH channel of the engine's connection), and ``timeout`` bounds it.

``server`` describes the node as the node resources record it:

* ``{"type": "local", "name", "user", "environment", "sandbox"}``: a
  :class:`~convection.software.LocalNode`, as ``Convection::Local::Node``
  makes it. Its sandbox is ``<node root>/<name>``, the operator's node root
  of docs/software.md (``$CONVECTION_NODE_ROOT``, ...), or a ``sandbox``
  inside that root (a node's ``sandbox`` attribute): never a directory the
  workflow picks elsewhere, because a sandbox's directories are chowned to
  its user.
* ``{"type": "ssh", "host", "port", "user", "private_key" | "private_key_file",
  "passphrase", "known_hosts" | "host_key", "sudo", "workdir",
  "connect_timeout", "name", "max_sessions"}`` (``type`` may be left out):
  an :class:`~convection.software.SSHHost` with ``Convection::SSH::Host``'s
  property names and rules (keys only, host keys always verified; no
  trust-on-first-use, since the operator's known_hosts is never written).

Secrets: ``server`` is secret (it carries the key and its passphrase), and
so is ``secret_input_values`` (inputs like ``input_values`` whose values
come from secrets). Their values are redacted from the captured streams,
the outputs and every error; the engine redacts both inputs wherever it
shows them.

Once only, as heat-agents: the marker key is made from the action
execution's id, so the engine re-running the same action execution after
a crash replays a finished run's result, and refuses to repeat an
interrupted one unless the config says ``options: {rerun_safe: true}``.
"""

from __future__ import annotations

import getpass
import json
import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar, Final

from convection.common import JSON
from convection.software import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_SESSIONS_PER_HOST,
    DeployContext,
    DeployOutcome,
    HookNotFound,
    InvalidConfig,
    LocalNode,
    SoftwareError,
    SourceConfig,
    SSHHost,
    Transport,
    build_derived_config,
    deploy,
    derived_config_id,
    known_hosts_entry_name,
    node_root,
    redact,
    safe_dir_name,
)
from convection.workflows.actions.base import (
    ActionContext,
    ActionPlugin,
    Failure,
    InputParam,
    Outcome,
    Success,
    arguments,
)

ACTION_NAME: Final = "convection.software.run"
#: Heat's prefix of a failed deployment's reason (SoftwareDeployment's event).
DEPLOYMENT_FAILED: Final = "Deployment to server failed: "
#: Heat's standard deployment attributes, next to ``outputs`` in the result.
STANDARD_OUTPUTS: Final = ("deploy_stdout", "deploy_stderr", "deploy_status_code")
DEFAULT_RUN_TIMEOUT: Final = 3600.0
DEFAULT_KNOWN_HOSTS: Final = "~/.ssh/known_hosts"
DEFAULT_LOCAL_NAME: Final = "workflow-node"

LOCAL_KEYS: Final = frozenset({"type", "name", "user", "environment", "sandbox"})
SSH_KEYS: Final = frozenset(
    {
        "type",
        "name",
        "host",
        "port",
        "user",
        "private_key",
        "private_key_file",
        "passphrase",
        "known_hosts",
        "host_key",
        "sudo",
        "workdir",
        "connect_timeout",
        "max_sessions",
    }
)


class ServerError(Exception):
    """``server`` does not describe a node (said before anything runs)."""


def _check_keys(server: Mapping[str, Any], allowed: frozenset[str], what: str) -> None:
    """A misspelt key (``host_keys``) must not silently weaken what is verified."""
    unknown = sorted(str(k) for k in server if k not in allowed)
    if unknown:
        raise ServerError(
            f"server: unknown key(s) {', '.join(unknown)} for {what}; "
            f"expected {', '.join(sorted(allowed))}"
        )


def _text(server: Mapping[str, Any], key: str) -> str | None:
    value = server.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ServerError(f"server.{key}: a string is expected, not {type(value).__name__}")
    return value


def _number(server: Mapping[str, Any], key: str, default: float) -> float:
    value = server.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ServerError(f"server.{key}: a positive number is expected")
    return float(value)


def _operator_path(value: str, key: str) -> Path:
    """Key files and known_hosts are the operator's files: absolute or ``~/...``."""
    expanded = os.path.expanduser(value)
    if not os.path.isabs(expanded):
        raise ServerError(f"server.{key}: an absolute path (or ~/...) is expected")
    return Path(expanded)


def local_node(server: Mapping[str, Any]) -> LocalNode:
    """The sandbox ``server`` names, inside the operator's node root."""
    _check_keys(server, LOCAL_KEYS, "a local node")
    name = _text(server, "name")
    root = node_root()
    sandbox = _text(server, "sandbox")
    if sandbox is not None:
        path = Path(os.path.abspath(sandbox))
        if path.parent != root:
            raise ServerError(
                f"server.sandbox: {sandbox} is not a node directory of the node root {root}"
            )
    else:
        path = root / safe_dir_name(name or DEFAULT_LOCAL_NAME)
    env: dict[str, str] = {}
    environment = server.get("environment") or {}
    if not isinstance(environment, Mapping):
        raise ServerError("server.environment: a map is expected")
    for key, value in environment.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise ServerError(f"server.environment.{key}: a string is expected")
        env[str(key)] = value
    try:
        return LocalNode(path, name=name or path.name, user=_text(server, "user"), env=env)
    except ValueError as exc:  # an environment name a process cannot carry
        raise ServerError(f"server.environment: {exc}") from None


def ssh_host(server: Mapping[str, Any], scratch: Path | None) -> SSHHost:
    """The host ``server`` names; ``host_key`` is written as a known_hosts
    file in ``scratch`` (a private directory the caller removes)."""
    _check_keys(server, SSH_KEYS, "an SSH host")
    host = _text(server, "host")
    if host is None:
        raise ServerError("server.host: a host name or address is required")
    port = server.get("port", 22)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ServerError("server.port: an integer from 1 to 65535 is expected")
    key_text = _text(server, "private_key")
    key_file = _text(server, "private_key_file")
    if key_text and key_file:
        raise ServerError("server: give the key as private_key or as private_key_file, not both")
    if not key_text and not key_file:
        raise ServerError(
            "server.private_key: a private key is required (private_key or "
            "private_key_file); password authentication is not supported"
        )
    host_key = _text(server, "host_key")
    if host_key is not None:
        parts = host_key.split()
        if len(parts) < 2 or scratch is None:
            raise ServerError("server.host_key: expected 'ALGORITHM BASE64' (a public key)")
        known = scratch / "known_hosts"
        known.write_text(f"{known_hosts_entry_name(host, port)} {parts[0]} {parts[1]}\n")
    else:
        known_text = _text(server, "known_hosts") or DEFAULT_KNOWN_HOSTS
        known = _operator_path(known_text, "known_hosts")
    sudo = server.get("sudo", False)
    if not isinstance(sudo, bool):
        raise ServerError("server.sudo: a boolean is expected")
    return SSHHost(
        host=host,
        username=_text(server, "user") or getpass.getuser(),
        known_hosts=known,
        port=port,
        private_key_path=_operator_path(key_file, "private_key_file") if key_file else None,
        private_key=key_text,
        passphrase=_text(server, "passphrase"),
        sudo=sudo,
        workdir=_text(server, "workdir"),
        connect_timeout=_number(server, "connect_timeout", DEFAULT_CONNECT_TIMEOUT),
    )


@asynccontextmanager
async def open_node(server: Mapping[str, Any]) -> AsyncIterator[Transport]:
    """The transport to the node ``server`` names, open for the ``with``: an
    SSH host's connection and its host_key file end with it."""
    kind = server.get("type", "ssh")
    if kind == "local":
        yield local_node(server)
        return
    if kind != "ssh":
        raise ServerError(f"server.type: {kind!r} is not a node type; expected local or ssh")
    from convection.software import SSHPool, SSHTransport  # asyncssh on first use

    sessions = server.get("max_sessions", DEFAULT_SESSIONS_PER_HOST)
    if isinstance(sessions, bool) or not isinstance(sessions, int) or not 1 <= sessions <= 64:
        raise ServerError("server.max_sessions: an integer from 1 to 64 is expected")
    async with AsyncExitStack() as stack:
        scratch = None
        if server.get("host_key"):
            made = stack.enter_context(tempfile.TemporaryDirectory(prefix="convection-hostkey-"))
            scratch = Path(made)
        host = ssh_host(server, scratch)
        pool = await stack.enter_async_context(SSHPool(sessions_per_host=sessions))
        yield SSHTransport(host, pool, name=_text(server, "name") or ACTION_NAME)


def server_secrets(server: Mapping[str, Any]) -> tuple[str, ...]:
    """The values of ``server`` that no result or error may show."""
    found = (server.get("private_key"), server.get("passphrase"))
    return tuple(v for v in found if isinstance(v, str) and v)


def config_id(ctx: ActionContext) -> str:
    """The marker key: the same for a re-run of this action execution, new
    for the next one. An action run on its own has no id, so it gets a
    fresh one (otherwise every such run would replay the first)."""
    if not ctx.action_execution_id:
        return str(uuid.uuid4())
    owner = f"workflow:{ctx.execution_id}:{ctx.task_id or ''}"
    return derived_config_id(owner, ctx.action_execution_id)


def result_of(outcome: DeployOutcome, hidden: tuple[str, ...]) -> dict[str, JSON]:
    """Heat's deployment attributes; strings redacted of every secret value."""
    values = {k: _redacted(v, hidden) for k, v in outcome.output_values.items()}
    result: dict[str, JSON] = {
        "outputs": {k: v for k, v in values.items() if k not in STANDARD_OUTPUTS}
    }
    for key in STANDARD_OUTPUTS:
        result[key] = values.get(key)
    return result


def _redacted(value: JSON, hidden: tuple[str, ...]) -> JSON:
    return redact(value, hidden) if isinstance(value, str) else value


def _object(args: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = args.get(key)
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise ServerError(f"{key}: an object is expected, not {type(value).__name__}")
    return value


class RunSoftwareConfig(ActionPlugin):
    """Heat's SoftwareDeployment as a task: one run, judged by Heat's rules,
    so a workflow can configure a node and read its outputs without a stack."""

    name: ClassVar[str] = ACTION_NAME
    description: ClassVar[str] = (
        "Runs a SoftwareConfig on a local node or an SSH host, as Heat's "
        "SoftwareDeployment does; the result is its outputs and captured streams."
    )
    input_schema: ClassVar[Mapping[str, InputParam]] = {
        "config": InputParam(
            "object",
            required=True,
            description="A SoftwareConfig as Heat shows it: group, config, inputs, outputs, "
            "options.",
        ),
        "server": InputParam(
            "object",
            required=True,
            secret=True,
            description="The node: {type: local, name, ...} or an SSH host {host, port, "
            "user, private_key, known_hosts, ...}.",
        ),
        "input_values": InputParam("object", default={}, description="The config's inputs."),
        "secret_input_values": InputParam(
            "object",
            default={},
            secret=True,
            description="More inputs, whose values are redacted from the result and errors.",
        ),
        "action": InputParam(
            "string", default="CREATE", description="deploy_action: CREATE, UPDATE, ..."
        ),
        "timeout": InputParam(
            "number",
            default=DEFAULT_RUN_TIMEOUT,
            description="Seconds the run may take, unless the config's options.timeout says.",
        ),
    }

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        args = arguments(self, params)
        try:
            server = _object(args, "server")
            hidden_inputs = _object(args, "secret_input_values")
            hidden = (*server_secrets(server), *_input_secrets(hidden_inputs))
        except ServerError as exc:
            return Failure(str(exc))
        try:
            return await self._deploy(ctx, args, server, hidden_inputs, hidden)
        except ServerError as exc:
            return Failure(redact(str(exc), hidden))

    async def _deploy(
        self,
        ctx: ActionContext,
        args: Mapping[str, Any],
        server: Mapping[str, Any],
        hidden_inputs: Mapping[str, Any],
        hidden: tuple[str, ...],
    ) -> Outcome:
        timeout = args["timeout"]
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            return Failure("timeout: a positive number of seconds is expected")
        try:
            source = SourceConfig.from_json(_object(args, "config"))
        except InvalidConfig as exc:
            return Failure(redact(f"config.{exc}" if exc.field else f"config: {exc}", hidden))
        node_label = str(server.get("name") or server.get("host") or server.get("type") or "")
        try:
            context = DeployContext(
                server_id=node_label,
                action=str(args["action"]),
                stack_id=f"{ctx.workflow_name or ''}/{ctx.execution_id}",
                resource_name=ctx.task_name or ACTION_NAME,
            )
            derived = build_derived_config(
                source,
                context,
                config_id=config_id(ctx),
                input_values={**_object(args, "input_values"), **hidden_inputs},
                name=ctx.task_name or ACTION_NAME,
                secret_inputs=hidden_inputs.keys(),
            )
        except InvalidConfig as exc:
            return Failure(redact(str(exc), hidden))
        try:
            async with open_node(server) as transport:
                outcome = await deploy(
                    derived, transport, default_timeout=float(timeout), secrets=hidden
                )
        except HookNotFound as exc:
            return Failure(redact(f"config.group: {exc}", hidden))
        except SoftwareError as exc:
            return Failure(redact(f"{DEPLOYMENT_FAILED}{exc}", hidden))
        secrets = (*hidden, *derived.secret_values())
        if not outcome.ok:
            return Failure(DEPLOYMENT_FAILED + redact(outcome.status_reason, secrets))
        return Success(result_of(outcome, secrets))


def _input_secrets(values: Mapping[str, Any]) -> tuple[str, ...]:
    """Secret inputs' values as the script hook gives them (maps and lists as
    JSON, other scalars ``str()``-ed), which is how a script would echo them."""
    found: list[str] = []
    for value in values.values():
        if value is None or value == "":
            continue
        found.append(json.dumps(value) if isinstance(value, dict | list) else str(value))
    return tuple(found)


ACTIONS: Final[tuple[type[ActionPlugin], ...]] = (RunSoftwareConfig,)
