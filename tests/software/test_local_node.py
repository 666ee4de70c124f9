"""Local nodes: the sandbox's tree, environment and user, and supervised services."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from convection.software import (
    DeployContext,
    DerivedConfig,
    LocalNode,
    SandboxError,
    SourceConfig,
    build_derived_config,
    deploy,
)

T = TypeVar("T")
TEST_USER = "convection-test"


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def derived(script: str, outputs: list[str] = ()) -> DerivedConfig:  # type: ignore[assignment]
    source = SourceConfig.from_json(
        {"config": script, "outputs": [{"name": n} for n in outputs], "group": "script"}
    )
    context = DeployContext("server-1", "CREATE", "stack/1", "deployment")
    return build_derived_config(source, context, config_id=uuid.uuid4().hex)


def test_sandbox_tree_and_clean_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGINE_SECRET_TOKEN", "do-not-leak")
    node = LocalNode(tmp_path / "a", name="a", env={"APP_ENV": "staging"})
    result = run(node.run(["/bin/sh", "-c", "env"]))
    env = dict(line.split("=", 1) for line in result.stdout.decode().splitlines())
    root = tmp_path / "a"
    assert env["HOME"] == str(root / "home") and env["TMPDIR"] == str(root / "tmp")
    assert env["PWD"] == str(root / "work")
    assert env["APP_ENV"] == "staging" and env["LC_ALL"] == "C.UTF-8"
    assert "ENGINE_SECRET_TOKEN" not in env
    assert set(env) >= {"PATH", "USER", "LOGNAME", "SHELL", "CONVECTION_NODE"}
    for sub in ("work", "home", "tmp", "services", "state"):
        assert (root / sub).is_dir()
    assert (root / "state").stat().st_mode & 0o777 == 0o700


def test_two_nodes_do_not_share_home_or_files(tmp_path: Path) -> None:
    a = LocalNode(tmp_path / "a", name="a")
    b = LocalNode(tmp_path / "b", name="b")
    run(a.run(["/bin/sh", "-c", 'echo mine > "$HOME/file"']))
    result = run(b.run(["/bin/sh", "-c", 'cat "$HOME/file"']))
    assert result.status != 0
    assert (tmp_path / "a" / "home" / "file").read_text() == "mine\n"


def test_paths_outside_the_sandbox_are_refused(tmp_path: Path) -> None:
    node = LocalNode(tmp_path / "n", name="n")
    run(node.prepare())
    with pytest.raises(SandboxError, match="outside the node's sandbox"):
        run(node.put_file("/etc/convection-should-not-exist", b"x"))
    with pytest.raises(SandboxError):
        run(node.get_file(str(tmp_path / "n" / ".." / "elsewhere")))
    (tmp_path / "n" / "work" / "escape").symlink_to("/etc")
    with pytest.raises(SandboxError):
        run(node.put_file(str(tmp_path / "n" / "work" / "escape" / "passwd"), b"x"))
    with pytest.raises(SandboxError, match="use delete"):
        run(node.remove_tree(str(tmp_path / "n")))


def test_a_config_cannot_make_the_engine_read_through_a_symlink(tmp_path: Path) -> None:
    secret = tmp_path / "engine-only.txt"
    secret.write_text("engine secret")
    node = LocalNode(tmp_path / "n", name="n")
    script = f'#!/bin/sh\nln -s {secret} "$heat_outputs_path.stolen"\n'
    with pytest.raises(SandboxError, match="symbolic link"):
        run(deploy(derived(script, ["stolen"]), node))


def test_missing_command_is_a_result_not_a_crash(tmp_path: Path) -> None:
    node = LocalNode(tmp_path / "n", name="n")
    result = run(node.run(["/nonexistent/tool"]))
    assert result.status == 127 and b"No such file" in result.stderr


# -- run as another user -----------------------------------------------------------


@pytest.fixture(scope="module")
def test_user() -> Iterator[pwd.struct_passwd]:
    if os.geteuid() != 0:
        pytest.skip("running as another user needs root")
    try:
        entry = pwd.getpwnam(TEST_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", TEST_USER],
            check=True,
        )
        entry = pwd.getpwnam(TEST_USER)
    yield entry


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory other users can traverse (pytest's tmp dirs are 0700)."""
    path = Path(tempfile.mkdtemp(prefix="convection-node-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_commands_and_deployments_run_as_the_node_user(
    test_user: pwd.struct_passwd, open_dir: Path
) -> None:
    node = LocalNode(open_dir / "node", name="u", user=TEST_USER)
    result = run(node.run(["/bin/sh", "-c", "id -u; id -G; echo $USER"]))
    uid, groups, user = result.stdout.decode().split("\n")[:3]
    assert int(uid) == test_user.pw_uid and user == TEST_USER
    assert groups.split() == [str(test_user.pw_gid)]  # no supplementary groups kept
    script = '#!/bin/sh\nid -u > "$heat_outputs_path.uid"\ntouch "$HOME/made"\n'
    outcome = run(deploy(derived(script, ["uid"]), node))
    assert outcome.ok, outcome.status_reason
    assert int(outcome.output_values["uid"]) == test_user.pw_uid
    assert (open_dir / "node" / "home" / "made").stat().st_uid == test_user.pw_uid
    # The engine's own records stay out of the user's reach.
    assert (open_dir / "node" / "state").stat().st_uid == 0


def test_unknown_user_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="no such OS user"):
        LocalNode(tmp_path / "n", name="n", user="no-such-user-xyz")


# -- supervised services -------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _wait_for(path: Path, seconds: float = 5.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text()
        time.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


def test_service_requested_by_a_config_survives_the_step_and_dies_with_the_node(
    tmp_path: Path,
) -> None:
    root = tmp_path / "svc"
    request = json.dumps(
        {"argv": ["/bin/sh", "-c", 'echo $$ > "$HOME/web.pid"; sleep 300 & wait'], "env": {}}
    )
    script = f"#!/bin/sh\ncat > \"$CONVECTION_SERVICE_DIR/web.json\" <<'EOF'\n{request}\nEOF\n"
    node = LocalNode(root, name="svc", kill_grace=0.5)
    outcome = run(deploy(derived(script), node))
    assert outcome.ok, outcome.status_reason
    pid = int(_wait_for(root / "home" / "web.pid"))
    time.sleep(0.2)
    assert _alive(pid), "the service did not outlive the deploy step"
    assert [(s.name, s.running) for s in node.services()] == [("web", True)]
    assert not (root / "services" / "web.json").exists()  # the request was consumed
    # A restarted engine knows the node only by its directory: it can still stop it.
    restarted = LocalNode(root, name="svc", kill_grace=0.5)
    run(restarted.delete())
    assert not _alive(pid)
    assert node.services() == []  # and the first engine reaps its stopped child
    assert not root.exists()


def test_service_api_start_list_stop(tmp_path: Path) -> None:
    node = LocalNode(tmp_path / "api", name="api", kill_grace=0.5)
    run(node.prepare())

    async def scenario() -> list[str]:
        info = await node.start_service("worker", ["/bin/sleep", "300"], {"MODE": "x"})
        assert info.running and _alive(info.pid)
        again = await node.start_service("worker", ["/bin/sleep", "301"])  # restart
        assert again.pid != info.pid and not _alive(info.pid)
        stopped = await node.stop_all()
        assert not _alive(again.pid)
        return stopped

    assert run(scenario()) == ["worker"]
    assert node.services() == []


def test_bad_service_requests_are_refused(tmp_path: Path) -> None:
    node = LocalNode(tmp_path / "bad", name="bad")
    run(node.prepare())
    (tmp_path / "bad" / "services" / "x.json").write_text('{"argv": "not a list"}')
    with pytest.raises(SandboxError, match=r"service request x\.json"):
        run(node.start_requested_services())
    with pytest.raises(SandboxError, match="invalid service name"):
        run(node.start_service("../evil", ["/bin/true"]))
