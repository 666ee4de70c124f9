"""The script hook through a real local node: real processes, real files."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from convection.software import (
    DeployContext,
    DeployOutcome,
    DerivedConfig,
    LocalNode,
    ScriptHook,
    SourceConfig,
    build_derived_config,
    deploy,
)

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def derived(
    script: str,
    *,
    inputs: list[dict[str, Any]] | None = None,
    outputs: list[dict[str, Any]] | None = None,
    values: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
) -> DerivedConfig:
    source = SourceConfig.from_json(
        {
            "group": "script",
            "config": script,
            "inputs": inputs or [],
            "outputs": outputs or [],
            "options": options or {},
        }
    )
    context = DeployContext("server-1", "CREATE", "stack/1", "deployment")
    return build_derived_config(
        source, context, config_id=uuid.uuid4().hex, input_values=values or {}
    )


@pytest.fixture
def node(tmp_path: Path) -> LocalNode:
    return LocalNode(tmp_path / "node", name="node-1", kill_grace=0.5)


def go(node: LocalNode, config: DerivedConfig, **kw: Any) -> DeployOutcome:
    return run(deploy(config, node, **kw))


def test_inputs_are_environment_variables_and_outputs_are_files(node: LocalNode) -> None:
    script = """#!/bin/sh
printf '%s|%s|%s|%s|%s\\n' "$name" "$count" "$map" "$list" "$deploy_action"
printf 'first\\n' > "$heat_outputs_path.result"
printf '%s' "$map" > "$heat_outputs_path.echo"
"""
    config = derived(
        script,
        inputs=[{"name": "name"}, {"name": "count", "type": "Number"}],
        outputs=[{"name": "result"}, {"name": "echo"}, {"name": "absent"}],
        values={"name": "web", "count": 3, "map": {"a": [1, 2]}, "list": ["x", "y"]},
    )
    outcome = go(node, config)
    assert outcome.ok, outcome.status_reason
    stdout = outcome.output_values["deploy_stdout"]
    assert stdout == 'web|3|{"a": [1, 2]}|["x", "y"]|CREATE\n'
    assert outcome.output_values["result"] == "first\n"  # read as is, newline kept
    assert json.loads(outcome.output_values["echo"]) == {"a": [1, 2]}
    assert "absent" not in outcome.output_values
    assert outcome.output_values["deploy_status_code"] == 0


def test_non_zero_status_fails_with_the_tail_of_stderr(node: LocalNode) -> None:
    config = derived("#!/bin/sh\necho progress\necho 'fatal: disk full' >&2\nexit 3\n")
    outcome = go(node, config)
    assert outcome.status == "FAILED"
    assert outcome.status_reason.startswith(
        "deploy_status_code : Deployment exited with non-zero status code: 3"
    )
    assert "fatal: disk full" in outcome.status_reason
    assert outcome.output_values["deploy_stdout"] == "progress\n"
    assert outcome.output_values["deploy_status_code"] == 3


def test_error_output_with_a_value_fails_despite_status_zero(node: LocalNode) -> None:
    script = "#!/bin/sh\nprintf 'quota exceeded' > \"$heat_outputs_path.failure\"\n"
    config = derived(script, outputs=[{"name": "failure", "error_output": True}])
    outcome = go(node, config)
    assert outcome.status == "FAILED"
    assert outcome.status_reason == "failure : quota exceeded"
    quiet = derived("#!/bin/sh\ntrue\n", outputs=[{"name": "failure", "error_output": True}])
    assert go(node, quiet).ok  # no file, no value: success


def test_timeout_kills_the_whole_process_group(node: LocalNode, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = f"""#!/bin/sh
sleep 60 &
echo $! > {pids}
echo $$ >> {pids}
sleep 60
"""
    started = time.monotonic()
    outcome = go(node, derived(script, options={"timeout": 1}))
    assert time.monotonic() - started < 6
    assert outcome.status == "FAILED"
    assert "timed out after 1 s" in outcome.status_reason
    assert outcome.result is not None and outcome.result.timed_out
    for pid in map(int, pids.read_text().split()):
        assert not _alive(pid), f"process {pid} survived the timeout"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_output_is_bounded_and_the_tail_is_kept(node: LocalNode) -> None:
    script = """#!/bin/sh
head -c 3000000 /dev/zero | tr '\\0' a
echo
echo LAST-LINE
head -c 2000000 /dev/zero | tr '\\0' e >&2
echo ERR-END >&2
exit 1
"""
    outcome = go(node, derived(script))
    assert outcome.result is not None and outcome.result.truncated
    stdout = outcome.output_values["deploy_stdout"]
    stderr = outcome.output_values["deploy_stderr"]
    assert len(stdout.encode()) == 1 << 20 and stdout.endswith("LAST-LINE\n")
    assert len(stderr.encode()) == 1 << 20 and stderr.endswith("ERR-END\n")
    assert outcome.status_reason.endswith("ERR-END")


def test_a_background_child_holding_stdout_does_not_hang_the_run(
    node: LocalNode, tmp_path: Path
) -> None:
    pid = tmp_path / "bg.pid"
    started = time.monotonic()
    outcome = go(node, derived(f"#!/bin/sh\nsleep 30 &\necho $! > {pid}\necho done\n"))
    assert outcome.ok and outcome.output_values["deploy_stdout"] == "done\n"
    assert time.monotonic() - started < 5
    os.kill(int(pid.read_text()), signal.SIGKILL)  # the script's own business; tidy up


def test_a_script_without_interpreter_line_fails_clearly(node: LocalNode) -> None:
    outcome = go(node, derived("echo no shebang\n"))
    assert outcome.status == "FAILED"
    assert outcome.output_values["deploy_status_code"] == 126
    assert "Exec format error" in outcome.status_reason


def test_hidden_values_are_redacted_from_the_reason(node: LocalNode) -> None:
    script = '#!/bin/sh\necho "password is $db_password" >&2\nexit 1\n'
    config = derived(script, values={"db_password": "pa55-w0rd"})
    outcome = go(node, config, secrets=["pa55-w0rd"])
    assert "pa55-w0rd" not in outcome.status_reason
    assert "password is ******" in outcome.status_reason


def test_hook_alone_runs_in_the_working_dir(node: LocalNode) -> None:
    result = run(ScriptHook().run(derived("#!/bin/sh\npwd\n"), node, timeout=10))
    work = run(node.workdir())
    assert result.stdout.strip() == os.path.join(work, "heat-config-script")
    assert result.status_code == 0


# -- the hook registry ----------------------------------------------------------------


def test_registry_maps_ungrouped_to_script_and_loads_entry_points() -> None:
    from importlib.metadata import EntryPoint

    from convection.software import HookNotFound, HookRegistry, default_registry
    from convection.software.hooks import ENTRY_POINT_GROUP

    registry = default_registry(entry_points=False)
    assert registry.get("Heat::Ungrouped") is registry.get("script")
    eps = [
        EntryPoint("my-tool", "convection.software.hooks.script:ScriptHook", ENTRY_POINT_GROUP),
        EntryPoint("script", "convection.software.hooks.ansible:AnsibleHook", ENTRY_POINT_GROUP),
        EntryPoint("broken", "no_such_module_xyz:Hook", ENTRY_POINT_GROUP),
    ]
    registry = HookRegistry({"script": ScriptHook()}, eps)
    assert isinstance(registry.get("my-tool"), ScriptHook)  # a class, instantiated
    assert isinstance(registry.get("script"), ScriptHook)  # built-ins cannot be taken over
    with pytest.raises(HookNotFound, match="entry point no_such_module_xyz:Hook failed"):
        registry.get("broken")
    with pytest.raises(HookNotFound, match="known groups: broken, my-tool, script"):
        registry.get("chef")
    registry.unavailable("ansible", "ansible-playbook is not installed")
    with pytest.raises(HookNotFound, match="ansible-playbook is not installed"):
        registry.get("ansible")
