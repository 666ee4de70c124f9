"""The dashboard in a real browser (Debian's chromium, driven by Playwright).

Stacks and workflows are made with the CLI, as a user makes them; the
tests then look at what the page shows, status words included (the graph
draws on a canvas, so the page's ``window.convection.status(name)``
reports the word a node shows, and the resource table carries it too).
"""

from __future__ import annotations

import re
from typing import Any

from convection.tokens import Role

from .conftest import FIXTURES, Dashboard

LIVE_TIMEOUT = 60_000


def sign_in(page: Any, dashboard: Dashboard, token: str) -> None:
    page.goto(dashboard.url + "/login")
    page.fill("#token", token)
    page.click("#login button[type=submit]")
    page.wait_for_url(re.compile(r".*/stacks$"))


def open_stack(page: Any, dashboard: Dashboard, name: str) -> None:
    page.goto(dashboard.url + "/stacks")
    page.click(f'tr[data-stack="{name}"] a')
    page.wait_for_selector("body[data-ready='1']")


def shown(page: Any, node: str) -> str:
    return str(page.evaluate("(n) => window.convection.status(n)", node))


def wait_status(page: Any, node: str, status: str, timeout: int = LIVE_TIMEOUT) -> None:
    page.wait_for_function(
        "([n, s]) => window.convection.status(n) === s", arg=[node, status], timeout=timeout
    )


def preview_update(page: Any) -> None:
    """From a stack's page: a PATCH update with one more app server and
    a new release (the load balancer is replaced), up to its plan."""
    page.click("#action-update")
    page.check("#existing")
    page.fill("#template", "")
    page.fill("#parameters", "app_count=3\nrelease=v2")
    page.click("#preview")
    page.wait_for_selector("#plan")


def click_node(page: Any, node: str) -> None:
    """A real mouse click on the node where the canvas draws it."""
    point = page.evaluate(
        """(n) => { const box = document.querySelector('#graph').getBoundingClientRect();
                    const p = window.convection.graph.$id(n).renderedPosition();
                    return {x: box.left + p.x, y: box.top + p.y}; }""",
        node,
    )
    page.mouse.click(point["x"], point["y"])


def test_signing_in_with_a_wrong_token_then_a_right_one_and_out(
    page: Any, dashboard: Dashboard, member: str
) -> None:
    page.goto(dashboard.url + "/stacks")
    page.wait_for_url(re.compile(r".*/login\?next=.*"))
    page.fill("#token", "cvt_wrong")
    page.click("#login button[type=submit]")
    assert page.text_content("p.error[role=alert]") == "That token is not valid."
    sign_in(page, dashboard, member)
    assert page.is_visible("#sign-out")
    page.click("#sign-out")
    page.wait_for_url(re.compile(r".*/login$"))
    page.goto(dashboard.url + "/stacks")
    page.wait_for_url(re.compile(r".*/login\?next=.*"))


def test_a_stack_created_from_the_cli_turns_green_node_by_node(
    page: Any, dashboard: Dashboard, project: str, member: str
) -> None:
    sign_in(page, dashboard, member)
    dashboard.create(project, member, "shop", wait=2)
    open_stack(page, dashboard, "shop")
    page.evaluate(
        """() => { window.seen = {};
                   const note = () => { for (const n of ['network', 'database', 'app', 'lb']) {
                       const s = window.convection.status(n);
                       const list = (window.seen[n] = window.seen[n] || []);
                       if (list[list.length - 1] !== s) list.push(s); } };
                   window.note = note; note(); window.setInterval(note, 50); }"""
    )
    wait_status(page, "lb", "CREATE_COMPLETE")
    page.wait_for_selector('#stack-status[data-status="CREATE_COMPLETE"]', timeout=LIVE_TIMEOUT)
    seen: dict[str, list[str]] = page.evaluate("() => { window.note(); return window.seen; }")
    # each node was watched going through its create, not just found done
    for node in ("database", "app", "lb"):
        assert seen[node][-2:] == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"], seen
    # in dependency order: nothing started before what it needs was complete
    assert "CREATE_IN_PROGRESS" not in seen["lb"][:1]
    row = page.locator('tr[data-resource="database"] td.status')
    assert row.text_content() == "CREATE_COMPLETE"
    assert page.locator("#events li").count() >= 8


def test_a_nested_group_expands_on_click(
    page: Any, dashboard: Dashboard, project: str, member: str
) -> None:
    dashboard.create(project, member, "grouped", "--parameter", "app_count=3", done=True)
    sign_in(page, dashboard, member)
    open_stack(page, dashboard, "grouped")
    assert page.evaluate("() => window.convection.graph.$id('app/0').length") == 0
    click_node(page, "app")
    page.wait_for_function("() => window.convection.graph.$id('app/2').length === 1")
    assert shown(page, "app/0") == "CREATE_COMPLETE"


def test_a_paused_hook_is_cleared_from_the_page(
    page: Any, dashboard: Dashboard, project: str, member: str
) -> None:
    dashboard.create(project, member, "held", "-e", str(FIXTURES / "hold-database.yaml"))
    sign_in(page, dashboard, member)
    open_stack(page, dashboard, "held")
    page.wait_for_function(
        "() => /PAUSED/.test(window.convection.status('database'))", timeout=LIVE_TIMEOUT
    )
    assert "pre-create" in shown(page, "database")
    assert shown(page, "app") == "INIT_COMPLETE"  # nothing after it has started
    click_node(page, "database")
    page.click("#panel button:has-text('Continue')")
    wait_status(page, "database", "CREATE_COMPLETE")
    page.wait_for_selector('#stack-status[data-status="CREATE_COMPLETE"]', timeout=LIVE_TIMEOUT)


def test_an_update_preview_shows_a_replacement_then_applies(
    page: Any, dashboard: Dashboard, project: str, member: str
) -> None:
    dashboard.create(project, member, "web", done=True)
    sign_in(page, dashboard, member)
    open_stack(page, dashboard, "web")
    preview_update(page)
    replaced = page.locator('li.change[data-change="replaced"][data-resource="lb"]')
    assert replaced.count() == 1
    assert replaced.locator(".reason").text_content()
    assert page.locator('li.change[data-change="updated"][data-resource="app"]').count() == 1
    assert page.text_content("#plan-summary") == (
        "Plan: 0 to add, 1 to update, 1 to replace, 0 to delete, 2 unchanged."
    )
    page.click("#apply")
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_selector('#stack-status[data-status="UPDATE_COMPLETE"]', timeout=LIVE_TIMEOUT)
    # the replacement, as `resource list` shows it: not its deleted old copy
    wait_status(page, "lb", "CREATE_COMPLETE")
    assert shown(page, "app") == "UPDATE_COMPLETE"


def test_a_failing_step_that_retries_then_succeeds(
    page: Any, dashboard: Dashboard, project: str, member: str, flaky: str
) -> None:
    execution = dashboard.start_deploy(project, member, flaky)
    sign_in(page, dashboard, member)
    page.goto(f"{dashboard.url}/executions/{execution}")
    page.wait_for_selector("body[data-ready='1']")
    wait_status(page, "report", "SUCCESS")
    page.wait_for_selector('#execution-state[data-status="SUCCESS"]', timeout=LIVE_TIMEOUT)
    verify = page.locator('tr[data-task="verify"]')
    assert "2" in (verify.locator(".retries").text_content() or "")
    assert page.locator('tr[data-task="install"] .progress').text_content() == "3/3"
    assert shown(page, "alert") == "NOT_STARTED"


def test_a_reader_sees_the_stack_and_no_action(
    page: Any, dashboard: Dashboard, project: str, member: str
) -> None:
    dashboard.create(project, member, "readonly", "-e", str(FIXTURES / "hold-database.yaml"))
    sign_in(page, dashboard, dashboard.mint(project, Role.READER))
    open_stack(page, dashboard, "readonly")
    page.wait_for_function("() => /PAUSED/.test(window.convection.status('database'))")
    assert page.locator("#stack-actions").count() == 0
    click_node(page, "database")
    page.wait_for_selector("#panel:not([hidden])")
    assert page.locator("#panel form").count() == 0
    assert (
        page.locator("#panel button:has-text('Continue'), #panel button:has-text('Signal')").count()
        == 0
    )
    # a forged post with the page's own CSRF value is refused all the same
    csrf = page.get_attribute('meta[name="csrf-token"]', "content")
    action = page.eval_on_selector("#stack-page", "e => e.dataset.actionUrl")
    for path, form in (
        ("actions/suspend", {"csrf": csrf}),
        ("resources/database/hook", {"csrf": csrf, "hook": "pre-create"}),
        ("actions/delete", {"csrf": csrf, "confirm": "readonly"}),
    ):
        answer = page.request.post(dashboard.url + action + path, form=form, max_redirects=0)
        assert answer.status == 403, path
    assert "PAUSED" in shown(page, "database")


def test_another_projects_stack_is_not_found_by_url(
    page: Any, dashboard: Dashboard, project: str, member: str
) -> None:
    dashboard.create(project, member, "private", done=True)
    sign_in(page, dashboard, member)
    open_stack(page, dashboard, "private")
    url = page.url
    page.click("#sign-out")
    sign_in(page, dashboard, dashboard.mint("intruders", Role.ADMIN))
    answer = page.goto(url)
    assert answer is not None and answer.status == 404
    assert page.locator("#stack-page").count() == 0
    assert "private" not in (page.text_content("main") or "")


def test_the_stack_list_follows_the_engine_without_a_reload(
    page: Any, dashboard: Dashboard, project: str, member: str
) -> None:
    dashboard.create(project, member, "listed", wait=1)
    sign_in(page, dashboard, member)
    cell = page.locator('tr[data-stack="listed"] td.status')
    assert cell.text_content() in ("CREATE_IN_PROGRESS", "CREATE_COMPLETE")
    page.wait_for_selector('tr[data-stack="listed"] td.status[data-status="CREATE_COMPLETE"]',
                           timeout=LIVE_TIMEOUT)  # fmt: skip
    assert page.locator("p.notice").is_hidden()
    dashboard.create(project, member, "newcomer")
    page.wait_for_selector("p.notice:has-text('reload')", timeout=LIVE_TIMEOUT)
