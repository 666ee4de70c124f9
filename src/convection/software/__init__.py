"""Software configuration on real nodes: Heat's SoftwareConfig/SoftwareDeployment
without OpenStack, as a library the resource plugins call.

The pieces, in the order a deployment uses them::

    SourceConfig ──build_derived_config──► DerivedConfig ──deploy──► DeployOutcome
    (the config        (+ input_values,       (what the node   (marker, hook,   (Heat's status,
     resource)           deploy_* inputs)      runs)            verdict)         reason, outputs)
                                                    │
                                   HookRegistry ──► Hook (script, ansible, entry points)
                                                    │
                                                    ▼
                                              Transport (LocalNode, SSHTransport)

* :mod:`.derived` and :mod:`.structured` are pure: Heat's derived config,
  its ``deploy_*`` inputs per signal transport, ``replace_on_change``, the
  digest that says whether an UPDATE has anything new to run, and
  StructuredDeployment's ``get_input`` substitution.
* :mod:`.outcome` is pure: Heat's ``signal_software_deployment`` verdict
  (status code, ``error_output``), with stderr's tail in failure reasons.
* :mod:`.deploy` runs a derived config once per id, as heat-agents does.
* :mod:`.hooks` and :mod:`.transports` do the work on the node.

Config ``options`` Convection reads (others go to the hook, as in Heat):

``rerun_safe: true``
    An interrupted run of this config (a marker without a result) may run
    again. Without it, the deployment fails with :class:`DeploymentInterrupted`.
``timeout: SECONDS``
    The run's timeout; default :data:`DEFAULT_TIMEOUT` (1800 s). On timeout
    the run's whole process group is killed and the deployment fails.

Secrets: ``deploy_password`` and any input named in ``secret_inputs`` are
redacted from every reason and never logged; no error message holds a key,
a passphrase or an input value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from convection.software.deploy import (
    DEFAULT_TIMEOUT,
    ServiceHost,
    deploy,
    marker_paths,
    run_timeout,
)
from convection.software.derived import (
    DEFAULT_ACTIONS,
    DEPLOY_ACTIONS,
    RERUN_SAFE_OPTION,
    SIGNAL_TRANSPORTS,
    TIMEOUT_OPTION,
    UNGROUPED,
    DeployContext,
    DerivedConfig,
    DerivedInput,
    InputDecl,
    OutputDecl,
    SignalInputs,
    SourceConfig,
    Substitution,
    agent_input_values,
    build_derived_config,
    derived_config_id,
    replace_on_change_inputs,
    resolve_component,
    should_deploy,
    stack_path,
)
from convection.software.errors import (
    AuthenticationFailed,
    ConnectionLost,
    DeploymentInterrupted,
    HookNotFound,
    HostKeyError,
    HostKeyMismatch,
    HostKeyUnknown,
    HostUnreachable,
    InputMissing,
    InvalidConfig,
    NodeError,
    PrivateKeyError,
    SandboxError,
    SoftwareError,
)
from convection.software.hooks import (
    AnsibleHook,
    Hook,
    HookRegistry,
    ScriptHook,
    default_registry,
)
from convection.software.node_root import (
    NODE_ROOT_ENV,
    SYSTEM_NODE_ROOT,
    node_root,
    safe_dir_name,
)
from convection.software.outcome import (
    COMPLETE,
    FAILED,
    DeployOutcome,
    DeployResult,
    evaluate,
    outcome_of,
    redact,
)
from convection.software.structured import substitute_inputs
from convection.software.transports import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_SESSIONS_PER_HOST,
    KEEPALIVE_INTERVAL,
    AnsibleTarget,
    FileBatch,
    FileWrite,
    LocalNode,
    RunResult,
    ServiceInfo,
    SSHHost,
    Transport,
    known_hosts_entry_name,
)

if TYPE_CHECKING:
    from convection.software.transports import SSHPool, SSHTransport, open_connection

__all__ = [
    "COMPLETE",
    "DEFAULT_ACTIONS",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_SESSIONS_PER_HOST",
    "DEFAULT_TIMEOUT",
    "DEPLOY_ACTIONS",
    "FAILED",
    "KEEPALIVE_INTERVAL",
    "NODE_ROOT_ENV",
    "RERUN_SAFE_OPTION",
    "SIGNAL_TRANSPORTS",
    "SYSTEM_NODE_ROOT",
    "TIMEOUT_OPTION",
    "UNGROUPED",
    "AnsibleHook",
    "AnsibleTarget",
    "AuthenticationFailed",
    "ConnectionLost",
    "DeployContext",
    "DeployOutcome",
    "DeployResult",
    "DeploymentInterrupted",
    "DerivedConfig",
    "DerivedInput",
    "FileBatch",
    "FileWrite",
    "Hook",
    "HookNotFound",
    "HookRegistry",
    "HostKeyError",
    "HostKeyMismatch",
    "HostKeyUnknown",
    "HostUnreachable",
    "InputDecl",
    "InputMissing",
    "InvalidConfig",
    "LocalNode",
    "NodeError",
    "OutputDecl",
    "PrivateKeyError",
    "RunResult",
    "SSHHost",
    "SSHPool",
    "SSHTransport",
    "SandboxError",
    "ScriptHook",
    "ServiceHost",
    "ServiceInfo",
    "SignalInputs",
    "SoftwareError",
    "SourceConfig",
    "Substitution",
    "Transport",
    "agent_input_values",
    "build_derived_config",
    "default_registry",
    "deploy",
    "derived_config_id",
    "evaluate",
    "known_hosts_entry_name",
    "marker_paths",
    "node_root",
    "open_connection",
    "outcome_of",
    "redact",
    "replace_on_change_inputs",
    "resolve_component",
    "run_timeout",
    "safe_dir_name",
    "should_deploy",
    "stack_path",
    "substitute_inputs",
]


#: Names whose modules import asyncssh: loaded on first use.
_ON_USE = ("SSHPool", "SSHTransport", "open_connection")

if not TYPE_CHECKING:  # mypy sees the imports above, never an Any-typed getattr

    def __getattr__(name: str) -> Any:
        """``SSHPool`` and ``SSHTransport`` on first use: see ``.transports``."""
        if name in _ON_USE:
            from convection.software import transports

            return getattr(transports, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
