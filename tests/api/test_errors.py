"""Heat's error bodies and status codes, redirects and body limits, seen
at the HTTP level (what heatclient hides)."""

from __future__ import annotations

from typing import Any

import httpx

from .conftest import heat_fault as _fault

BAD_TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  ok:
    type: OS::Heat::None
  broken:
    type: OS::Heat::RandomString
    properties:
      lenght: 8
"""
GOOD_TEMPLATE = "heat_template_version: 2018-08-31\nresources:\n  r: {type: OS::Heat::None}\n"


def _create(http: httpx.Client, name: str, template: str = GOOD_TEMPLATE) -> httpx.Response:
    return http.post("/stacks", json={"stack_name": name, "template": template})


def test_unknown_stack_is_heats_404(http: httpx.Client) -> None:
    body = _fault(http.get("/stacks/missing"), 404, "EntityNotFound")
    assert body["title"] == "Not Found"
    assert body["explanation"] == "The resource could not be found."
    assert body["error"]["message"] == "The Stack (missing) could not be found."
    _fault(http.get("/stacks/missing/0000-id"), 404, "EntityNotFound")


def test_bad_template_is_400_with_file_and_line(http: httpx.Client) -> None:
    body = _fault(_create(http, "bad", BAD_TEMPLATE), 400, "StackValidationFailed")
    message = body["error"]["message"]
    assert message.startswith("template:8:"), message
    assert "resources.broken.properties" in message
    assert "lenght" in message
    _fault(http.get("/stacks/bad"), 404, "EntityNotFound")  # nothing was created


def test_unparsable_template_names_the_line(http: httpx.Client) -> None:
    body = _fault(
        _create(http, "bad", "resources:\n  a: [unclosed\n"), 400, "StackValidationFailed"
    )
    assert body["error"]["message"].startswith("template:")


def test_duplicate_name_is_409(http: httpx.Client) -> None:
    assert _create(http, "twice").status_code == 201
    body = _fault(_create(http, "twice"), 409, "StackExists")
    assert body["error"]["message"] == "The Stack (twice) already exists."


def test_name_only_urls_redirect_with_302(http: httpx.Client) -> None:
    created = _create(http, "named")
    assert created.status_code == 201
    stack_id = created.json()["stack"]["id"]
    assert created.headers["location"].endswith(f"/stacks/named/{stack_id}")

    found = http.get("/stacks/named")
    assert found.status_code == 302
    assert found.headers["location"] == f"{str(http.base_url).rstrip('/')}/stacks/named/{stack_id}"
    by_id = http.get(f"/stacks/{stack_id}")
    assert by_id.headers["location"] == found.headers["location"]
    sub = http.get("/stacks/named/resources", params={"nested_depth": "2"})
    assert sub.status_code == 302
    assert sub.headers["location"].endswith(f"/stacks/named/{stack_id}/resources?nested_depth=2")
    shown = http.get(found.headers["location"])
    assert shown.json()["stack"]["stack_name"] == "named"
    _fault(http.get(f"/stacks/other-name/{stack_id}"), 404, "EntityNotFound")


def test_json_body_over_heats_limit_is_refused(http: httpx.Client) -> None:
    big = {"stack_name": "big", "template": GOOD_TEMPLATE, "files": {"x": "y" * (1024 * 1024)}}
    body = _fault(http.post("/stacks", json=big), 400, "RequestLimitExceeded")
    assert "exceeds maximum allowed size (1048576 bytes)" in body["error"]["message"]


def test_chunked_body_over_the_limit_is_refused(http: httpx.Client) -> None:
    def chunks() -> Any:
        for _ in range(40):
            yield b"x" * 32768  # 1.25 MiB without a Content-Length

    response = http.post("/stacks", content=chunks(), headers={"content-type": "application/json"})
    _fault(response, 400, "RequestLimitExceeded")


def test_template_over_heats_limit_is_refused(http: httpx.Client) -> None:
    template = GOOD_TEMPLATE + "description: " + "d" * (512 * 1024) + "\n"
    body = _fault(_create(http, "huge", template), 400, "RequestLimitExceeded")
    assert "Template size" in body["error"]["message"]
    assert "(524288 bytes)" in body["error"]["message"]


def test_malformed_bodies_are_400(http: httpx.Client) -> None:
    raw = http.post("/stacks", content=b"{not json", headers={"content-type": "application/json"})
    _fault(raw, 400, "HTTPBadRequest")
    _fault(http.post("/stacks", json=[1, 2]), 400, "HTTPBadRequest")
    nameless = _fault(http.post("/stacks", json={"template": GOOD_TEMPLATE}), 400, "HTTPBadRequest")
    assert nameless["error"]["message"] == "No stack name specified"


def test_bad_actions_are_400(http: httpx.Client) -> None:
    stack_id = _create(http, "acts").json()["stack"]["id"]
    url = f"/stacks/acts/{stack_id}/actions"
    assert _fault(http.post(url, json={}), 400, "HTTPBadRequest")["error"]["message"] == (
        "No action specified"
    )
    _fault(http.post(url, json={"suspend": None, "resume": None}), 400, "HTTPBadRequest")
    _fault(http.post(url, json={"explode": None}), 400, "HTTPBadRequest")


def test_unknown_resource_and_type_are_404(http: httpx.Client) -> None:
    stack_id = _create(http, "res").json()["stack"]["id"]
    _fault(http.get(f"/stacks/res/{stack_id}/resources/nope"), 404, "ResourceNotFound")
    _fault(http.get("/resource_types/OS::Nope::Nothing"), 404, "ResourceTypeNotFound")
    _fault(http.get(f"/stacks/res/{stack_id}/outputs/nope"), 404, "NotFound")


def test_unknown_route_is_a_heat_shaped_404(http: httpx.Client) -> None:
    _fault(http.get("/no-such-collection"), 404, "HTTPNotFound")


def test_every_answer_carries_a_request_id(http: httpx.Client) -> None:
    response = http.get("/stacks")
    assert response.status_code == 200
    assert response.headers["x-openstack-request-id"].startswith("req-")


def test_a_huge_timeout_is_400_not_500(http: httpx.Client) -> None:
    """Found by schemathesis: a ``timeout_mins`` past Heat's 32-bit column
    overflowed the deadline's arithmetic (500) on a PATCH update."""
    assert _create(http, "huge-timeout").status_code == 201
    stack = http.get("/stacks/huge-timeout", follow_redirects=True).json()["stack"]
    url = f"/stacks/huge-timeout/{stack['id']}"
    for method in ("PATCH", "PUT"):
        body: dict[str, Any] = {"timeout_mins": 10**38}
        if method == "PUT":
            body["template"] = GOOD_TEMPLATE
        body = _fault(http.request(method, url, json=body), 400, "HTTPBadRequest")
        assert "timeout_mins" in body["error"]["message"]
    refused = http.post(
        "/stacks", json={"stack_name": "t", "template": GOOD_TEMPLATE, "timeout_mins": 2**31}
    )
    _fault(refused, 400, "HTTPBadRequest")


def test_a_huge_nested_depth_answers_at_once(http: httpx.Client) -> None:
    """Found by schemathesis: ``nested_depth=727167976`` walked that many
    (empty) levels of nested stacks, holding the request for minutes."""
    assert _create(http, "deep-walk").status_code == 201
    stack = http.get("/stacks/deep-walk", follow_redirects=True).json()["stack"]
    url = f"/stacks/deep-walk/{stack['id']}"
    for sub in ("events", "resources"):
        answer = http.get(f"{url}/{sub}", params={"nested_depth": 10**12}, timeout=10)
        assert answer.status_code == 200, answer.text
