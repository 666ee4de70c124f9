"""``openstack stack ...`` (python-openstackclient with heatclient's plugin),
unchanged, as a subprocess against a live server with token auth.

Slow by nature: every ``openstack`` run starts a large client, and
``--wait`` polls every 5 s (heatclient's ``poll_for_events``).

There is no Keystone: keystoneauth's ``admin_token`` auth type sends the
token as it is and ``--os-endpoint`` replaces the catalog lookup, so the
endpoint is the server's ``/v1/{project}``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from convection.tokens._tokens import Role

from .conftest import AuthServer

TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  word: {type: string, default: hello}
  secret: {type: string, hidden: true}
resources:
  r: {type: OS::Heat::None}
outputs:
  said: {value: {get_param: word}}
"""

OPENSTACK = str(Path(sys.executable).parent / "openstack")


class Osc:
    """Runs ``openstack`` with an endpoint and a token, nothing else from
    the environment (no OS_* variables, no clouds.yaml)."""

    def __init__(self, endpoint: str, token: str, home: Path) -> None:
        self.auth = ["--os-auth-type", "admin_token", "--os-endpoint", endpoint]
        self.auth += ["--os-token", token]
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
        self.env["HOME"] = str(home)

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [OPENSTACK, *self.auth, *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=120,
            check=False,
        )
        if check:
            assert done.returncode == 0, done.stderr
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-f", "json").stdout)


@pytest.fixture
def template(tmp_path: Path) -> Path:
    path = tmp_path / "stack.yaml"
    path.write_text(TEMPLATE, encoding="utf-8")
    return path


def test_openstack_stack_create_show_output_delete(
    auth_server: AuthServer, template: Path, tmp_path: Path
) -> None:
    endpoint = auth_server.live.endpoint("p-osc")
    osc = Osc(endpoint, auth_server.mint("p-osc"), tmp_path)
    created = osc.run(
        "stack", "create", "-t", str(template), "--parameter", "word=hi",
        "--parameter", "secret=osc-hidden-value", "--wait", "ours",
    )  # fmt: skip
    assert "CREATE_COMPLETE" in created.stdout  # --wait prints the events, then the stack
    shown = osc.json("stack", "show", "ours")
    assert shown["stack_status"] == "CREATE_COMPLETE"
    assert shown["parameters"]["secret"] == "******"
    said = osc.json("stack", "output", "show", "ours", "said")
    assert said["output_value"] == "hi"
    osc.run("stack", "delete", "--yes", "--wait", "ours")
    with auth_server.client("p-osc", auth_server.mint("p-osc", Role.READER)) as http:
        assert http.get("/stacks").json() == {"stacks": []}
    assert "osc-hidden-value" not in auth_server.live.logs()


def test_openstack_with_a_bad_token_fails_cleanly(auth_server: AuthServer, tmp_path: Path) -> None:
    osc = Osc(auth_server.live.endpoint("p-osc-bad"), "cvt_wrong", tmp_path)
    done = osc.run("stack", "list", check=False)
    assert done.returncode != 0
    assert "Authentication required" in done.stderr and "Traceback" not in done.stderr
