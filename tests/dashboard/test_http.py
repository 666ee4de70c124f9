"""The dashboard over plain HTTP, as a browser speaks it: sessions, CSRF,
roles, projects, secrets, limits, errors and the live stream.

The browser tests (``test_browser.py``) show the pages working; these
show the rules the server keeps whatever a page or a forged request does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest

from convection.tokens import Role

from .conftest import Dashboard, csrf_of, sign_in

PASSWORD = "correct-horse-battery-staple"


def _create(dashboard: Dashboard, project: str, token: str, name: str, *extra: str) -> str:
    dashboard.create(project, token, name, *extra, done=True)
    with httpx.Client(base_url=dashboard.live.endpoint(project), timeout=30) as api:
        found = api.get(f"/stacks/{name}", headers={"X-Auth-Token": token}, follow_redirects=True)
        return str(found.json()["stack"]["id"])


@pytest.fixture
def stack_id(dashboard: Dashboard, project: str, member: str) -> str:
    return _create(dashboard, project, member, "shop")


@pytest.fixture
def session(dashboard: Dashboard, member: str) -> Iterator[httpx.Client]:
    with dashboard.signed_in(member) as client:
        yield client


def test_a_wrong_token_is_refused_and_a_right_one_sets_a_strict_cookie(
    dashboard: Dashboard, member: str
) -> None:
    with httpx.Client(base_url=dashboard.url, timeout=30) as client:
        refused = sign_in(client, "cvt_not-a-token")
        assert refused.status_code == 401
        assert "That token is not valid." in refused.text
        assert client.get("/stacks").status_code == 303  # still signed out
        signed = sign_in(client, member)
        assert signed.status_code == 303
        cookie = next(v for k, v in signed.headers.multi_items() if "convection_session" in v)
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
        assert "Secure" not in cookie  # plain HTTP on loopback; Secure over TLS
        assert client.get("/stacks").status_code == 200


def test_sign_in_needs_the_form_it_was_given(dashboard: Dashboard, member: str) -> None:
    """Login CSRF: a post without this site's own form value is refused."""
    with httpx.Client(base_url=dashboard.url, timeout=30) as client:
        forged = client.post("/login", data={"token": member, "login_csrf": "guess"})
        assert forged.status_code == 400
        assert "convection_session" not in forged.headers.get("set-cookie", "")


def test_signing_out_ends_the_session(session: httpx.Client) -> None:
    page = session.get("/stacks")
    out = session.post("/logout", data={"csrf": csrf_of(page.text)})
    assert out.status_code == 303 and out.headers["location"] == "/login"
    after = session.get("/stacks")
    assert after.status_code == 303 and after.headers["location"].startswith("/login?next=")


def test_a_revoked_token_ends_its_session_at_once(dashboard: Dashboard, project: str) -> None:
    issued = dashboard.tokens.issue(project, Role.MEMBER)
    with dashboard.signed_in(issued.secret) as client:
        assert client.get("/stacks").status_code == 200
        dashboard.tokens.revoke(issued.record.id)
        assert client.get("/stacks").status_code == 303
        assert client.get("/ui/api/stacks/x/graph").status_code == 401


def test_an_action_without_the_csrf_value_is_refused(session: httpx.Client, stack_id: str) -> None:
    refused = session.post(f"/stacks/{stack_id}/actions/suspend", data={"csrf": "forged"})
    assert refused.status_code == 403
    assert "security token" in refused.text
    shown = session.get(f"/ui/api/stacks/{stack_id}/graph").json()
    assert shown["stack"]["status"] == "CREATE_COMPLETE"  # nothing was started


def test_a_reader_sees_everything_and_can_change_nothing(
    dashboard: Dashboard, project: str, stack_id: str
) -> None:
    with dashboard.signed_in(dashboard.mint(project, Role.READER)) as reader:
        page = reader.get(f"/stacks/{stack_id}")
        assert page.status_code == 200
        assert 'data-role="reader"' in page.text
        assert 'id="stack-actions"' not in page.text
        csrf = csrf_of(page.text)
        for action in ("suspend", "check", "cancel"):
            refused = reader.post(f"/stacks/{stack_id}/actions/{action}", data={"csrf": csrf})
            assert refused.status_code == 403, action
        delete = reader.post(
            f"/stacks/{stack_id}/actions/delete", data={"csrf": csrf, "confirm": "shop"}
        )
        assert delete.status_code == 403
        assert reader.get(f"/ui/api/stacks/{stack_id}/graph").json()["can_write"] is False
        assert reader.get(f"/ui/api/stacks/{stack_id}/graph").json()["stack"]["status"] == (
            "CREATE_COMPLETE"
        )


def test_another_projects_stack_is_unreachable_by_url(dashboard: Dashboard, stack_id: str) -> None:
    other = dashboard.mint("someone-else", Role.ADMIN)
    with dashboard.signed_in(other) as client:
        for path in (
            f"/stacks/{stack_id}",
            f"/stacks/{stack_id}/update",
            f"/ui/api/stacks/{stack_id}/graph",
            f"/ui/api/stacks/{stack_id}/resources/database",
            f"/ui/api/stacks/{stack_id}/stream",
        ):
            found = client.get(path)
            assert found.status_code == 404, path
            assert "shop" not in found.text and PASSWORD not in found.text
        listing = client.get("/stacks")
        assert stack_id not in listing.text
        csrf = csrf_of(listing.text)
        refused = client.post(f"/stacks/{stack_id}/actions/suspend", data={"csrf": csrf})
        assert refused.status_code == 404


def test_hidden_values_are_masked_in_the_panel_and_the_page(
    session: httpx.Client, stack_id: str
) -> None:
    panel = session.get(f"/ui/api/stacks/{stack_id}/resources/database").json()
    assert panel["properties"]["value"] == "postgresql://app:******@db.internal/app"
    assert panel["resource"]["resource_status"] == "CREATE_COMPLETE"
    assert [e["resource_status"] for e in panel["events"]][-1] == "CREATE_COMPLETE"
    for text in (
        session.get(f"/stacks/{stack_id}").text,
        session.get(f"/ui/api/stacks/{stack_id}/graph").text,
        json.dumps(panel),
        _stream(session, f"/ui/api/stacks/{stack_id}/stream", 1)[0],
    ):
        assert PASSWORD not in text


def test_the_stream_resumes_from_the_last_event_id(session: httpx.Client, stack_id: str) -> None:
    everything = session.get(f"/ui/api/stacks/{stack_id}/graph").json()
    assert everything["cursor"]
    first = _stream(session, f"/ui/api/stacks/{stack_id}/stream", 1)
    events = json.loads(first[0])["events"]
    assert len(events) >= 4  # the whole create, from the start
    middle = events[len(events) // 2]["id"]
    resumed = _stream(
        session, f"/ui/api/stacks/{stack_id}/stream", 1, headers={"Last-Event-ID": middle}
    )
    later = [e["id"] for e in json.loads(resumed[0])["events"]]
    ids = [e["id"] for e in events]
    assert later == ids[ids.index(middle) + 1 :][-len(later) :]
    assert middle not in later


def test_a_template_error_is_shown_with_its_place(session: httpx.Client, stack_id: str) -> None:
    form = session.get(f"/stacks/{stack_id}/update")
    bad = "heat_template_version: 2018-08-31\nresources:\n  web:\n    type: OS::Heat::Nope\n"
    shown = session.post(
        f"/stacks/{stack_id}/preview", data={"csrf": csrf_of(form.text), "template": bad}
    )
    assert shown.status_code == 400
    assert "template:4:" in shown.text and "resources.web" in shown.text
    assert "Traceback" not in shown.text


def test_a_form_over_the_limit_is_refused_before_it_is_read(
    session: httpx.Client, stack_id: str
) -> None:
    csrf = csrf_of(session.get(f"/stacks/{stack_id}").text)
    huge = "#" * (3 * 1024 * 1024)
    refused = session.post(f"/stacks/{stack_id}/preview", data={"csrf": csrf, "template": huge})
    assert refused.status_code == 413
    assert "exceeds" in refused.text


def test_a_signal_that_is_not_a_json_object_names_the_problem(
    session: httpx.Client, stack_id: str
) -> None:
    csrf = csrf_of(session.get(f"/stacks/{stack_id}").text)
    shown = session.post(
        f"/stacks/{stack_id}/resources/lb/signal", data={"csrf": csrf, "data": "{oops"}
    )
    assert shown.status_code == 400
    assert "data:1:2: not JSON" in shown.text


def test_pages_carry_security_headers_and_apis_keep_their_answers(
    dashboard: Dashboard, session: httpx.Client
) -> None:
    page = session.get("/stacks")
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"
    # heatclient's and mistralclient's version discovery is unchanged ...
    versions = httpx.get(dashboard.url + "/", timeout=10)
    assert versions.status_code == 300 and versions.json()["versions"][0]["id"] == "v1.0"
    # ... while a browser is sent to the dashboard
    browser = httpx.get(dashboard.url + "/", headers={"Accept": "text/html"}, timeout=10)
    assert browser.status_code == 303 and browser.headers["location"] == "/stacks"


def test_sign_in_never_redirects_to_another_site(dashboard: Dashboard, member: str) -> None:
    with httpx.Client(base_url=dashboard.url, timeout=30) as client:
        form = client.get("/login", params={"next": "//evil.example/x"})
        assert 'name="next" value="/stacks"' in form.text


def _stream(
    client: httpx.Client, path: str, count: int, headers: dict[str, str] | None = None
) -> list[str]:
    """The data of the first ``count`` ``changes`` messages of a stream."""
    found: list[str] = []
    deadline = time.monotonic() + 20
    with client.stream("GET", path, headers=headers or {}) as response:
        assert response.status_code == 200
        event = ""
        for line in response.iter_lines():
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and event == "changes":
                found.append(line.split(":", 1)[1].strip())
                if len(found) >= count:
                    break
            assert time.monotonic() < deadline, "no message in time"
    return found
