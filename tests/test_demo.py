"""``make demo`` as a user runs it: ``python -m convection.cli.demo`` in its own
process, with its store and nodes under a private ``TMPDIR``. The service it
deploys must answer at the URL it prints, and a second run must replace the
first cleanly (the old service stopped, a new one answering)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from convection.cli import demo_dashboard

GREETING = "Hello from the web node"
URL = re.compile(r"curl (http://127\.0\.0\.1:\d+/)")
DASHBOARD = re.compile(r"sign in with this token:\n  (http://127\.0\.0\.1:\d+/)\n  token: (\S+)")


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVECTION_")}
    env.update(TMPDIR=str(tmp), CONVECTION_CONFIG=str(tmp / "absent.toml"))
    return env


def _demo(tmp: Path) -> tuple[str, str]:
    """Run the demo; its output and the URL it says the service answers at."""
    done = subprocess.run(
        [sys.executable, "-m", "convection.cli.demo"],
        env=_env(tmp),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "Traceback" not in out
    found = URL.search(out)
    assert found is not None, out
    return out, found.group(1)


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as reply:
        return str(reply.read().decode()).strip()


@pytest.fixture
def demo_tmp(tmp_path: Path) -> Iterator[Path]:
    """A private TMPDIR; the demo stack is deleted afterwards (its service
    outlives the demo process by design)."""
    yield tmp_path
    demo_dashboard.stop_previous(tmp_path / "convection-demo")
    db = tmp_path / "convection-demo" / "demo.db"
    if db.exists():
        subprocess.run(
            [sys.executable, "-c", "import sys; from convection.cli.main import run; "
             "sys.exit(run(sys.argv[1:]))",
             "--db", f"sqlite:///{db}", "stack", "delete", "demo", "--wait", "-y"],
            env=_env(tmp_path),
            capture_output=True,
            timeout=120,
            check=False,
        )  # fmt: skip


def test_demo_deploys_two_nodes_whose_service_answers(demo_tmp: Path) -> None:
    out, url = _demo(demo_tmp)
    assert "Stack demo CREATE_COMPLETE" in out
    # the client node reached the service (step 2's output) ...
    assert re.search(rf"answer\s*│\s*{GREETING}", out), out
    # ... and so do we, after the demo process has ended
    assert _get(url) == GREETING
    nodes = demo_tmp / "convection-demo" / "nodes"
    assert sorted(p.name.split("-")[1] for p in nodes.iterdir()) == ["client", "web"]
    assert "stack delete demo" in out
    _dashboard_shows_the_stack(out)

    again, new_url = _demo(demo_tmp)
    assert "an earlier demo is still deployed: delete it" in again
    assert "Stack demo DELETE_COMPLETE" in again and "Stack demo CREATE_COMPLETE" in again
    assert _get(new_url) == GREETING
    if new_url != url:
        with pytest.raises(OSError):
            _get(url)  # the first run's service was stopped with its node
    assert len(list(nodes.iterdir())) == 2  # the first run's sandboxes are gone


def _dashboard_shows_the_stack(out: str) -> None:
    """The URL and token the demo prints sign in, and the stack is listed."""
    found = DASHBOARD.search(out)
    assert found is not None, out
    url, token = found.groups()
    with httpx.Client(base_url=url, timeout=10) as browser:
        form = browser.get("/login")
        assert form.status_code == 200
        login_csrf = re.search(r'name="login_csrf" value="([^"]+)"', form.text)
        assert login_csrf is not None
        signed = browser.post("/login", data={"token": token, "login_csrf": login_csrf.group(1)})
        assert signed.status_code == 303, signed.text
        listing = browser.get("/stacks")
        assert 'data-stack="demo"' in listing.text
        assert "CREATE_COMPLETE" in listing.text
