"""std.ssh, as Mistral's ``SSHAction`` (``mistral/actions/std_actions.py``,
``mistral/utils/ssh_utils.py``), through Convection's SSH transport
(``convection.software``: verified host keys, keys only; docs/software.md).

As Mistral: ``cmd`` runs on ``host`` (a name, or a list run in order) as
``username``; the result is the command's stdout, a list of them when more
than one host is given; a non-zero exit, or any failure to connect, fails
with ``Failed to execute ssh cmd '<cmd>' on <hosts>``. With
``return_result_on_error`` the result is ``{stdout, stderr, exit_code}``
and a non-zero exit is a success. ``private_key_filename`` is a file in
the key directory (``$CONVECTION_SSH_KEY_DIR``, default ``~/.ssh``, as
Mistral's ``~/.ssh/``) or an absolute path; ``..`` in it is refused with
Mistral's message. ``password`` is the key's passphrase, as it is for
Mistral when a key file is given.

What differs, on purpose (the node trust of docs/software.md):

* password authentication is refused: give ``private_key`` (hidden text)
  or ``private_key_filename``;
* the host key is verified against ``known_hosts`` (default
  ``~/.ssh/known_hosts``); Mistral's paramiko ``AutoAddPolicy`` trusts
  any host;
* the reason a connection failed is added to the message (Convection's
  reasons never hold key material); Mistral only logs it;
* ``port`` and ``workdir`` (where the transport writes the command's
  one-shot launcher, by default ``~/.convection/std.ssh`` of the login
  user) are Convection's own inputs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from convection.software import SoftwareError, SSHHost
from convection.workflows.actions.base import (
    ActionContext,
    ActionPlugin,
    Failure,
    InputParam,
    Outcome,
    Success,
    arguments,
)

KEY_DIR_ENV: Final = "CONVECTION_SSH_KEY_DIR"
DEFAULT_KEY_DIR: Final = "~/.ssh"
DEFAULT_KNOWN_HOSTS: Final = "~/.ssh/known_hosts"
NODE_NAME: Final = "std.ssh"


class SSHInputError(Exception):
    """The input cannot make a connection (said before connecting)."""


def key_path(filename: str) -> Path:
    """Mistral's rule (``_to_paramiko_private_key``): no ``..``, relative to the key dir."""
    if "../" in filename or "..\\" in filename:
        raise SSHInputError(f"Private key filename must not contain '..'. Actual: {filename}")
    path = Path(filename).expanduser()
    if path.is_absolute():
        return path
    return Path(os.environ.get(KEY_DIR_ENV) or DEFAULT_KEY_DIR).expanduser() / path


def ssh_host(args: Mapping[str, Any], host: str) -> SSHHost:
    """The transport's description of ``host`` from the action's input."""
    key_text, key_file = args["private_key"], args["private_key_filename"]
    if not key_text and not key_file:
        raise SSHInputError(
            "password authentication is not supported: give private_key or "
            "private_key_filename (docs/software.md)"
        )
    return SSHHost(
        host=host,
        username=str(args["username"]),
        known_hosts=Path(str(args["known_hosts"])).expanduser(),
        port=int(args["port"]),
        private_key=key_text or None,
        private_key_path=None if key_text else key_path(str(key_file)),
        passphrase=args["password"] or None,
        workdir=args["workdir"],
    )


class SSH(ActionPlugin):
    name: ClassVar[str] = "std.ssh"
    description: ClassVar[str] = "Runs a shell command on one or more hosts over SSH."
    input_schema: ClassVar[Mapping[str, InputParam]] = {
        "cmd": InputParam("string", required=True, description="The shell command."),
        "host": InputParam(("string", "array"), required=True, description="Host(s), in order."),
        "username": InputParam("string", required=True, description="The login user."),
        "password": InputParam(
            ("string", "null"), default="", secret=True, description="The key's passphrase."
        ),
        "private_key_filename": InputParam(
            ("string", "null"), description="A key file in the key dir, or an absolute path."
        ),
        "private_key": InputParam(("string", "null"), secret=True, description="Key text."),
        "return_result_on_error": InputParam(
            "boolean", default=False, description="Return {stdout, stderr, exit_code}."
        ),
        "port": InputParam("integer", default=22, description="The SSH port (Convection's)."),
        "known_hosts": InputParam(
            "string", default=DEFAULT_KNOWN_HOSTS, description="Trusted host keys."
        ),
        "workdir": InputParam(
            ("string", "null"), description="The transport's directory on the host."
        ),
    }

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        from convection.software import SSHPool, SSHTransport  # asyncssh on first use

        args = arguments(self, params)
        hosts = args["host"] if isinstance(args["host"], list) else [args["host"]]
        failed = f"Failed to execute ssh cmd '{args['cmd']}' on {hosts}"
        results: list[Any] = []
        async with SSHPool() as pool:
            for host in hosts:
                try:
                    transport = SSHTransport(ssh_host(args, str(host)), pool, name=NODE_NAME)
                    ran = await transport.run(["sh", "-c", str(args["cmd"])])
                except (SSHInputError, SoftwareError, ValueError) as exc:
                    return Failure(f"{failed}: {exc}")
                stdout = ran.stdout.decode(errors="replace")
                if args["return_result_on_error"]:
                    stderr = ran.stderr.decode(errors="replace")
                    results.append({"stdout": stdout, "stderr": stderr, "exit_code": ran.status})
                elif ran.status != 0:
                    return Failure(failed)
                else:
                    results.append(stdout)
        return Success(results if len(results) > 1 else results[0])


ACTIONS: Final[tuple[type[ActionPlugin], ...]] = (SSH,)
