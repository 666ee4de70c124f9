"""The declared surface of ``convection.software``: what the resource plugins use."""

from __future__ import annotations

from pathlib import Path

import convection.software as software
from convection.software import LocalNode, SSHHost, SSHPool, SSHTransport, Transport

EXPECTED = {
    "AnsibleHook", "AnsibleTarget", "AuthenticationFailed", "COMPLETE", "ConnectionLost",
    "DEFAULT_ACTIONS", "DEFAULT_TIMEOUT", "DEPLOY_ACTIONS", "DeployContext", "DeployOutcome",
    "DeployResult", "DeploymentInterrupted", "DerivedConfig", "DerivedInput", "FAILED", "Hook",
    "HookNotFound", "HookRegistry", "HostKeyError", "HostKeyMismatch", "HostKeyUnknown",
    "HostUnreachable", "InputDecl", "InputMissing", "InvalidConfig", "LocalNode", "NodeError",
    "OutputDecl", "PrivateKeyError", "RERUN_SAFE_OPTION", "RunResult", "SIGNAL_TRANSPORTS",
    "SSHHost", "SSHPool", "SSHTransport", "SandboxError", "ScriptHook", "ServiceHost",
    "ServiceInfo", "SignalInputs", "SoftwareError", "SourceConfig", "Substitution",
    "TIMEOUT_OPTION", "Transport", "UNGROUPED", "agent_input_values", "build_derived_config",
    "default_registry", "deploy", "derived_config_id", "evaluate", "marker_paths", "outcome_of",
    "replace_on_change_inputs", "resolve_component", "should_deploy", "stack_path",
    "substitute_inputs",
    # What the node plugins (``resources.nodes``) and deployments use:
    "DEFAULT_CONNECT_TIMEOUT", "DEFAULT_SESSIONS_PER_HOST", "KEEPALIVE_INTERVAL", "FileBatch",
    "FileWrite", "known_hosts_entry_name", "open_connection", "redact", "run_timeout",
    # Where local nodes live (the node resources and convection.software.run):
    "NODE_ROOT_ENV", "SYSTEM_NODE_ROOT", "node_root", "safe_dir_name",
}  # fmt: skip


def test_public_names_are_pinned_and_importable() -> None:
    assert set(software.__all__) == EXPECTED
    for name in software.__all__:
        assert getattr(software, name) is not None


def test_both_transports_satisfy_the_protocol(tmp_path: Path) -> None:
    host = SSHHost(host="h", username="u", known_hosts=tmp_path / "known_hosts")
    assert isinstance(LocalNode(tmp_path / "node", name="x"), Transport)
    assert isinstance(SSHTransport(host, SSHPool(), name="h"), Transport)
