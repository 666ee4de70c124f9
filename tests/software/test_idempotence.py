"""heat-agents' "deployed" marker: a deployment runs at most once, and an
interrupted one runs again only when its config says that is safe."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from convection.software import (
    DeployContext,
    DeploymentInterrupted,
    DerivedConfig,
    HookNotFound,
    LocalNode,
    SignalInputs,
    SourceConfig,
    build_derived_config,
    deploy,
    marker_paths,
)

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def derived(
    script: str, *, options: dict[str, Any] | None = None, group: str = "script", **kw: Any
) -> DerivedConfig:
    source = SourceConfig.from_json({"group": group, "config": script, "options": options or {}})
    context = DeployContext("server-1", "CREATE", "stack/1", "dep", signal_transport="HEAT_SIGNAL")
    return build_derived_config(
        source, context, config_id=kw.get("config_id") or uuid.uuid4().hex, **kw.get("extra", {})
    )


@pytest.fixture
def node(tmp_path: Path) -> LocalNode:
    return LocalNode(tmp_path / "node", name="node-1", kill_grace=0.2)


def paths(node: LocalNode, config: DerivedConfig) -> tuple[Path, Path]:
    marker, notify = marker_paths(run(node.workdir()), config.id)
    return Path(marker), Path(notify)


def test_marker_is_written_before_the_hook_runs(node: LocalNode) -> None:
    config = derived("")
    marker, notify = paths(node, config)
    script = (
        f"#!/bin/sh\ntest -f {marker} && echo marker-present\n"
        f'test -f {notify} || echo "no notify"\n'
    )
    config = derived(script, config_id=config.id)
    outcome = run(deploy(config, node))
    assert outcome.output_values["deploy_stdout"] == "marker-present\nno notify\n"
    record = json.loads(marker.read_text())
    assert record["config"]["id"] == config.id and record["attempt"] == 1
    assert record["digest"] == config.digest
    assert marker.stat().st_mode & 0o777 == 0o600  # it holds input values
    assert notify.stat().st_mode & 0o777 == 0o600


def test_a_failed_deployment_is_not_run_again(node: LocalNode, tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    config = derived(f"#!/bin/sh\necho run >> {counter}\necho oops >&2\nexit 7\n")
    first = run(deploy(config, node))
    second = run(deploy(config, node))
    assert counter.read_text() == "run\n"
    assert first.status == second.status == "FAILED"
    assert second.replayed and not first.replayed
    assert second.status_reason == first.status_reason
    assert second.output_values == first.output_values


def test_the_secret_password_input_never_reaches_a_reason(node: LocalNode) -> None:
    config = derived(
        '#!/bin/sh\necho "pw=$deploy_password" >&2\nexit 1\n',
        extra={"signal": SignalInputs(password="Sup3r-Secret")},
    )
    outcome = run(deploy(config, node))
    assert "Sup3r-Secret" not in outcome.status_reason and "pw=******" in outcome.status_reason


def _interrupt(node: LocalNode, config: DerivedConfig, started: Path) -> None:
    """Cancel a deployment while its hook runs (what a lost job looks like)."""

    async def scenario() -> None:
        task = asyncio.create_task(deploy(config, node))
        for _ in range(250):
            if started.exists():
                break
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(scenario())


def test_an_interrupted_run_is_refused_unless_rerun_safe(node: LocalNode, tmp_path: Path) -> None:
    started = tmp_path / "started"
    script = f"#!/bin/sh\ntouch {started}\nsleep 30\n"
    config = derived(script)
    _interrupt(node, config, started)
    marker, notify = paths(node, config)
    assert marker.exists() and not notify.exists()
    with pytest.raises(DeploymentInterrupted) as err:
        run(deploy(config, node))
    assert err.value.deployment_id == config.id and err.value.node == "node-1"
    assert "rerun_safe" in str(err.value) and str(marker) in str(err.value)


def test_an_interrupted_rerun_safe_config_runs_again(node: LocalNode, tmp_path: Path) -> None:
    started = tmp_path / "started"
    script = (
        f"#!/bin/sh\nif [ -f {started} ]; then echo second; exit 0; fi\ntouch {started}\nsleep 30\n"
    )
    config = derived(script, options={"rerun_safe": True})
    _interrupt(node, config, started)
    outcome = run(deploy(config, node))
    assert outcome.ok and outcome.output_values["deploy_stdout"] == "second\n"
    marker, _ = paths(node, config)
    assert json.loads(marker.read_text())["attempt"] == 2


ENGINE = """
import asyncio, sys
from convection.software import *
src = SourceConfig.from_json({"config": sys.argv[2], "group": "script"})
ctx = DeployContext("server-1", "CREATE", "stack/1", "dep")
cfg = build_derived_config(src, ctx, config_id=sys.argv[3])
asyncio.run(deploy(cfg, LocalNode(sys.argv[1], name="node-1")))
"""


def test_engine_killed_mid_run_leaves_an_interrupted_marker(
    node: LocalNode, tmp_path: Path
) -> None:
    pidfile = tmp_path / "script.pid"
    script = f"#!/bin/sh\necho $$ > {pidfile}\nsleep 30\n"
    config = derived(script)
    engine = subprocess.Popen([sys.executable, "-c", ENGINE, str(node.root), script, config.id])
    try:
        deadline = time.monotonic() + 20
        while not (pidfile.exists() and pidfile.read_text().strip()):
            assert time.monotonic() < deadline and engine.poll() is None
            time.sleep(0.02)
        engine.send_signal(signal.SIGKILL)  # kill -9 of the engine mid-run
        engine.wait()
    finally:
        if engine.poll() is None:
            engine.kill()
    try:
        with pytest.raises(DeploymentInterrupted):
            run(deploy(config, node))
    finally:
        os.killpg(int(pidfile.read_text()), signal.SIGKILL)  # the orphaned script


def test_unknown_group_fails_before_any_marker(node: LocalNode) -> None:
    config = derived("x", group="puppet")
    with pytest.raises(HookNotFound, match="puppet"):
        run(deploy(config, node))
    marker, _ = paths(node, config)
    assert not marker.exists()


def test_component_without_a_part_for_the_action_is_skipped(node: LocalNode) -> None:
    parts = {
        "configs": [{"actions": ["DELETE"], "config": "#!/bin/sh\nexit 1\n", "tool": "script"}]
    }
    source = SourceConfig.from_json({"group": "component", "config": parts})
    context = DeployContext("server-1", "CREATE", "stack/1", "dep")
    config = build_derived_config(source, context, config_id=uuid.uuid4().hex)
    outcome = run(deploy(config, node))
    assert outcome.ok and outcome.skipped
