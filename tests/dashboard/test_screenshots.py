"""Screenshots at a fixed viewport, compared with the baselines kept here.

The graph is drawn on a canvas, so only a picture shows that it is drawn
right. Each test brings a page to a state that does not move (a create
held at a hook, a plan, an execution that has ended) and compares an
element's screenshot with ``screenshots/<name>.png``: at most
``TOLERANCE`` of its pixels may differ by more than ``CHANNEL`` in any
colour channel.

``CONVECTION_UPDATE_SCREENSHOTS=1`` rewrites the baselines, and writes
the full-page pictures docs/dashboard.md shows into docs/dashboard/.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops

from .conftest import FIXTURES, Dashboard
from .test_browser import open_stack, preview_update, sign_in, wait_status

BASELINES = Path(__file__).parent / "screenshots"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "dashboard"
UPDATE = os.environ.get("CONVECTION_UPDATE_SCREENSHOTS") == "1"
#: Share of pixels allowed to differ, and by how much a channel may differ.
#: Runs on one machine are pixel-identical; this leaves room for font
#: rasterising to shift a few glyph edges, and still fails when a single
#: node changes colour (its border alone is ~0.2% of the graph).
TOLERANCE = 0.001
CHANNEL = 16


def differing(actual: Path, expected: Path) -> float:
    """The share of pixels that differ noticeably (1.0 if sizes differ)."""
    with Image.open(actual) as a, Image.open(expected) as b:
        if a.size != b.size:
            return 1.0
        diff = ImageChops.difference(a.convert("RGB"), b.convert("RGB"))
        bands = [band.point(lambda v: 255 if v > CHANNEL else 0) for band in diff.split()]
        mask = ImageChops.lighter(ImageChops.lighter(bands[0], bands[1]), bands[2])
        histogram = mask.histogram()
        return histogram[255] / (a.size[0] * a.size[1])


def check(page: Any, selector: str, name: str, tmp_path: Path) -> None:
    page.evaluate("() => document.fonts.ready")
    page.wait_for_timeout(500)  # the last redraw of a coalesced batch
    shot = tmp_path / f"{name}.png"
    page.locator(selector).screenshot(path=str(shot), animations="disabled")
    baseline = BASELINES / f"{name}.png"
    if UPDATE:
        BASELINES.mkdir(exist_ok=True)
        baseline.write_bytes(shot.read_bytes())
        DOCS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS / f"{name}.png"), animations="disabled")
        return
    if not baseline.exists():
        pytest.fail(f"no baseline {baseline}: run with CONVECTION_UPDATE_SCREENSHOTS=1")
    share = differing(shot, baseline)
    assert share <= TOLERANCE, f"{name}: {share:.2%} of pixels differ (see {shot})"


def test_the_stack_graph_mid_create(
    page: Any, dashboard: Dashboard, project: str, member: str, tmp_path: Path
) -> None:
    dashboard.create(project, member, "shop", "-e", str(FIXTURES / "hold-app.yaml"))
    sign_in(page, dashboard, member)
    open_stack(page, dashboard, "shop")
    page.wait_for_function("() => /PAUSED/.test(window.convection.status('app'))")
    wait_status(page, "database", "CREATE_COMPLETE")
    check(page, "#graph", "stack-mid-create", tmp_path)


def test_the_plan_view(
    page: Any, dashboard: Dashboard, project: str, member: str, tmp_path: Path
) -> None:
    dashboard.create(project, member, "shop", done=True)
    sign_in(page, dashboard, member)
    open_stack(page, dashboard, "shop")
    preview_update(page)
    check(page, "#plan", "plan", tmp_path)


def test_a_workflow_execution_with_a_retry(
    page: Any, dashboard: Dashboard, project: str, member: str, flaky: str, tmp_path: Path
) -> None:
    execution = dashboard.start_deploy(project, member, flaky)
    sign_in(page, dashboard, member)
    page.goto(f"{dashboard.url}/executions/{execution}")
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_selector('#execution-state[data-status="SUCCESS"]', timeout=60_000)
    wait_status(page, "report", "SUCCESS")
    check(page, "#graph", "execution-retry", tmp_path)
