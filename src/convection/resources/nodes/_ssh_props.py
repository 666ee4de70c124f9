"""Reading an SSH host's properties: which host, which key, which paths.

Why Nova's ``key_name`` and ``networks`` count here: a template written for
``OS::Nova::Server`` and mapped straight to ``Convection::SSH::Host`` says
which machine and key it means only in Nova's words. So, as Nova would:

* the host is ``host``, else the first ``networks[].fixed_ip``, else ``name``;
* the key is ``private_key`` (text), else ``private_key_file`` (a path), else
  Nova's ``key_name``: the operator's key of that name in
  ``$CONVECTION_SSH_KEY_DIR`` (default ``~/.ssh`` of the engine's user), as
  a Nova keypair is the operator's key registered under a name.

Paths are the operator's files on the engine's machine, never template
files: absolute or ``~/...``; a relative path would depend on the engine's
working directory.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from convection.common import Diagnostic
from convection.common import Path as SchemaPath
from convection.hot import has_functions
from convection.resources._plugin import ResourceFailure

KEY_DIR_ENV: Final = "CONVECTION_SSH_KEY_DIR"
DEFAULT_KEY_DIR: Final = "~/.ssh"
_KEY_NAME: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@-]{0,127}$")
KEY_PROPERTIES: Final = ("private_key", "private_key_file", "key_name")


def host_of(props: Mapping[str, Any]) -> str | None:
    """The machine to reach: ``host``, a fixed IP of ``networks``, or ``name``."""
    host = props.get("host")
    if isinstance(host, str) and host:
        return host
    for network in props.get("networks") or ():
        fixed = network.get("fixed_ip") if isinstance(network, Mapping) else None
        if isinstance(fixed, str) and fixed:
            return fixed
    name = props.get("name")
    return name if isinstance(name, str) and name else None


def key_file_of(props: Mapping[str, Any]) -> Path | None:
    """The key file to read, when the key is not given as text."""
    if props.get("private_key"):
        return None
    path = props.get("private_key_file")
    if path:
        return operator_path(str(path), "private_key_file")
    key_name = props.get("key_name")
    if key_name:
        if not isinstance(key_name, str) or not _KEY_NAME.match(key_name):
            raise ResourceFailure(f"properties.key_name: {key_name!r} is not a key name")
        directory = os.environ.get(KEY_DIR_ENV) or DEFAULT_KEY_DIR
        return operator_path(directory, KEY_DIR_ENV) / key_name
    raise ResourceFailure(
        "properties.private_key: a private key is required (private_key, "
        "private_key_file or key_name)"
    )


def operator_path(path: str, prop: str) -> Path:
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        raise ResourceFailure(f"properties.{prop}: an absolute path (or ~/...) is expected")
    return Path(expanded)


def validate(values: Mapping[str, Any], path: SchemaPath, *, strict: bool) -> list[Diagnostic]:
    """Rules across properties; values still holding functions are left for create."""
    watched = ("host", "name", "networks", *KEY_PROPERTIES)
    if any(has_functions(values.get(k)) for k in watched):
        return []
    diags: list[Diagnostic] = []
    if values.get("private_key") and values.get("private_key_file"):
        diags.append(
            Diagnostic(
                "give the key as private_key or as private_key_file, not both",
                (*path, "private_key_file"),
            )
        )
    if strict and not any(values.get(k) for k in KEY_PROPERTIES):
        diags.append(
            Diagnostic(
                "a private key is required: private_key (its text, from a hidden "
                "parameter), private_key_file (a path) or key_name (a key in ~/.ssh)",
                (*path, "private_key"),
            )
        )
    if strict and host_of(values) is None:
        diags.append(
            Diagnostic(
                "Property host not assigned (nor a networks fixed_ip, nor name)", (*path, "host")
            )
        )
    for key in ("private_key_file", "known_hosts", "workdir"):
        value = values.get(key)
        if isinstance(value, str) and value and not os.path.isabs(os.path.expanduser(value)):
            diags.append(
                Diagnostic(f"an absolute path (or ~/...) is expected, not {value!r}", (*path, key))
            )
    return diags
