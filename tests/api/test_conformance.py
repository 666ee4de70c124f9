"""Heat API conformance at the HTTP level: status codes, headers and JSON
shapes of the existing routes, as Heat's api-ref and its v1 controllers
give them (heat/api/openstack/v1/*.py, heat/engine/api.py)."""

from __future__ import annotations

import re
from typing import Any

import httpx

from .conftest import heat_fault
from .conftest import settled as _settled

REQUEST_ID = re.compile(r"^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

MEMBER = """\
heat_template_version: 2018-08-31
resources:
  inner: {type: OS::Heat::Value, properties: {value: deep}}
"""
TEMPLATE = """\
heat_template_version: 2018-08-31
description: conformance
resources:
  a:
    type: OS::Heat::RandomString
    description: the random one
    properties: {length: 6}
  b: {type: OS::Heat::Value, properties: {value: {get_attr: [a, value]}}}
  child: {type: member.yaml}
outputs:
  out: {description: b's value, value: {get_attr: [b, value]}}
"""
SIMPLE = "heat_template_version: 2018-08-31\nresources:\n  r: {type: OS::Heat::None}\n"
SLOW = """\
heat_template_version: 2018-08-31
resources:
  slow: {type: OS::Heat::TestResource, properties: {action_wait_secs: {create: 30}}}
"""

#: Heat's stack show keys (heat/engine/api.py format_stack through
#: stacks_view.format_stack: ``stack_id`` -> id + links, action folded in).
SHOW_KEYS = {
    "id",
    "links",
    "stack_name",
    "description",
    "template_description",
    "creation_time",
    "updated_time",
    "deletion_time",
    "notification_topics",
    "capabilities",
    "parameters",
    "outputs",
    "disable_rollback",
    "timeout_mins",
    "stack_owner",
    "parent",
    "stack_user_project_id",
    "tags",
    "stack_status",
    "stack_status_reason",
}
#: Heat's stack list keys (stacks_view.basic_keys).
LIST_KEYS = {
    "id",
    "links",
    "stack_name",
    "description",
    "stack_status",
    "stack_status_reason",
    "creation_time",
    "deletion_time",
    "updated_time",
    "stack_owner",
    "parent",
    "stack_user_project_id",
    "tags",
}
#: Heat's resource list keys (format_stack_resource, detail off).
RESOURCE_KEYS = {
    "resource_name",
    "logical_resource_id",
    "physical_resource_id",
    "resource_type",
    "resource_status",
    "resource_status_reason",
    "required_by",
    "creation_time",
    "updated_time",
    "links",
}
#: Heat's event list keys (events.summary_keys).
EVENT_KEYS = {
    "id",
    "links",
    "event_time",
    "resource_name",
    "logical_resource_id",
    "resource_status",
    "resource_status_reason",
    "physical_resource_id",
}


def _create(http: httpx.Client, name: str, template: str, **extra: Any) -> httpx.Response:
    body = {"stack_name": name, "template": template, **extra}
    if template is TEMPLATE:
        body["files"] = {"member.yaml": MEMBER}
    return http.post("/stacks", json=body)


def _stack(http: httpx.Client, name: str, template: str = TEMPLATE, **extra: Any) -> str:
    """The path of a created, settled stack (``/stacks/{name}/{id}``)."""
    made = _create(http, name, template, **extra)
    assert made.status_code == 201, made.text
    path = f"/stacks/{name}/{made.json()['stack']['id']}"
    assert _settled(http, path)["stack_status"] == "CREATE_COMPLETE"
    return path


def _fault(response: httpx.Response, code: int, kind: str) -> str:
    """The message of Heat's error body (its shape checked)."""
    return str(heat_fault(response, code, kind)["error"]["message"])


def test_create_is_201_with_location_and_a_request_id(http: httpx.Client) -> None:
    made = _create(http, "made", SIMPLE)
    assert made.status_code == 201
    body = made.json()
    assert set(body["stack"]) == {"id", "links"}
    assert body["stack"]["links"] == [{"href": made.headers["location"], "rel": "self"}]
    assert made.headers["location"].endswith(f"/stacks/made/{body['stack']['id']}")
    for response in (made, http.get("/stacks/nothing-here"), http.get("/build_info")):
        assert REQUEST_ID.match(response.headers["x-openstack-request-id"])
    assert (
        made.headers["x-openstack-request-id"]
        != http.get("/stacks").headers["x-openstack-request-id"]
    )


def test_stack_show_and_list_carry_heats_keys(http: httpx.Client) -> None:
    path = _stack(http, "shown", TEMPLATE, timeout_mins=7)
    stack = http.get(path).json()["stack"]
    assert set(stack) == SHOW_KEYS
    assert stack["capabilities"] == [] and stack["notification_topics"] == []
    assert stack["tags"] is None and stack["parent"] is None and stack["deletion_time"] is None
    assert stack["timeout_mins"] == 7 and stack["description"] == "conformance"
    assert stack["outputs"][0]["output_key"] == "out"
    assert stack["links"] == [{"href": str(http.base_url).rstrip("/") + path, "rel": "self"}]
    assert "outputs" not in http.get(path, params={"resolve_outputs": "false"}).json()["stack"]
    tagged = _stack(http, "tagged", SIMPLE, tags="x,y")
    assert http.get(tagged).json()["stack"]["tags"] == ["x", "y"]
    listed = http.get("/stacks").json()["stacks"]
    assert {s["stack_name"] for s in listed} == {"shown", "tagged"}
    assert all(set(s) == LIST_KEYS for s in listed)


def test_name_only_urls_redirect_with_sub_path_and_query(http: httpx.Client) -> None:
    path = _stack(http, "found", SIMPLE)
    base = str(http.base_url).rstrip("/")
    plain = http.get("/stacks/found")
    assert plain.status_code == 302 and plain.headers["location"] == base + path
    sub = http.get("/stacks/found/resources", params={"with_detail": "true"})
    assert sub.status_code == 302
    assert sub.headers["location"] == f"{base}{path}/resources?with_detail=true"
    for sub_path in ("events", "template", "environment", "files"):
        assert http.get(f"/stacks/found/{sub_path}").headers["location"].endswith(sub_path)
    posted = http.post("/stacks/found/actions", json={"check": None})
    assert posted.status_code == 302 and posted.headers["location"] == f"{base}{path}/actions"
    by_id = http.get(f"/stacks/{path.rsplit('/', 1)[1]}")
    assert by_id.status_code == 302 and by_id.headers["location"] == base + path
    assert REQUEST_ID.match(plain.headers["x-openstack-request-id"])


def test_status_codes_of_writes(http: httpx.Client) -> None:
    path = _stack(http, "writes", SIMPLE)
    put = http.put(path, json={"template": SIMPLE.replace("None", "RandomString")})
    assert put.status_code == 202
    _settled(http, path)
    assert http.patch(path, json={"parameters": {}}).status_code == 202
    _settled(http, path)
    action = http.post(f"{path}/actions", json={"check": None})
    assert action.status_code == 200
    _settled(http, path)
    mark = http.patch(f"{path}/resources/r", json={"mark_unhealthy": True})
    assert mark.status_code == 200
    deleted = http.delete(path)
    assert deleted.status_code == 204 and deleted.content == b""


def test_resource_list_and_show(http: httpx.Client) -> None:
    path = _stack(http, "res", TEMPLATE)
    listed = http.get(f"{path}/resources").json()["resources"]
    assert {r["resource_name"] for r in listed} == {"a", "b", "child"}
    assert all(set(r) == RESOURCE_KEYS for r in listed)
    by_name = {r["resource_name"]: r for r in listed}
    assert by_name["a"]["required_by"] == ["b"]
    assert [link["rel"] for link in by_name["a"]["links"]] == ["self", "stack"]
    assert by_name["a"]["links"][0]["href"].endswith(f"{path}/resources/a")
    nested = [link for link in by_name["child"]["links"] if link["rel"] == "nested"]
    assert len(nested) == 1 and "/stacks/res-child-" in nested[0]["href"]
    shown = http.get(f"{path}/resources/a").json()["resource"]
    assert shown["description"] == "the random one"
    assert len(shown["attributes"]["value"]) == 6
    assert "stack_name" not in shown
    message = _fault(http.get(f"{path}/resources/nope"), 404, "ResourceNotFound")
    assert message == "The Resource (nope) could not be found in Stack res."


def test_resource_list_nested_depth_and_bad_queries(http: httpx.Client) -> None:
    path = _stack(http, "deep", TEMPLATE)
    top = http.get(f"{path}/resources").json()["resources"]
    assert "inner" not in {r["resource_name"] for r in top}
    listed = http.get(f"{path}/resources", params={"nested_depth": 1}).json()["resources"]
    inner = [r for r in listed if r["resource_name"] == "inner"]
    assert len(inner) == 1 and inner[0]["parent_resource"] == "child"
    stack_link = next(link["href"] for link in inner[0]["links"] if link["rel"] == "stack")
    child_link = next(
        link["href"]
        for r in listed
        if r["resource_name"] == "child"
        for link in r["links"]
        if link["rel"] == "nested"
    )
    assert stack_link == child_link and "/stacks/deep-child-" in stack_link
    detail = http.get(f"{path}/resources", params={"with_detail": "true"}).json()["resources"]
    assert all("attributes" in r for r in detail)
    bad = _fault(http.get(f"{path}/resources", params={"bogus": "1"}), 400, "HTTPBadRequest")
    assert bad == "Invalid filter parameters ['bogus']"
    _fault(http.get(f"{path}/resources", params={"nested_depth": "x"}), 400, "HTTPBadRequest")


def test_events_list_show_and_nested_depth(http: httpx.Client) -> None:
    path = _stack(http, "ev", TEMPLATE)
    events = http.get(f"{path}/events").json()["events"]
    assert events and all(set(e) == EVENT_KEYS for e in events)
    first = next(e for e in events if e["resource_name"] == "a")
    assert [link["rel"] for link in first["links"]] == ["self", "resource", "stack"]
    shown = http.get(f"{path}/resources/a/events/{first['id']}").json()["event"]
    assert shown["resource_type"] == "OS::Heat::RandomString"
    assert "resource_properties" in shown
    deep = http.get(f"{path}/events", params={"nested_depth": 1}).json()["events"]
    inner = [e for e in deep if e["resource_name"] == "inner"]
    assert inner, deep
    rels = {link["rel"]: link["href"] for link in inner[0]["links"]}
    assert "/stacks/ev-child-" in rels["stack"] and rels["root_stack"].endswith(path)
    missing = _fault(http.get(f"{path}/resources/a/events/nope"), 404, "HTTPNotFound")
    assert missing == "No event nope found"
    _fault(http.get(f"{path}/resources/zzz/events"), 404, "HTTPNotFound")


def test_service_bodies(http: httpx.Client) -> None:
    info = http.get("/build_info").json()
    assert set(info) == {"api", "engine"} and set(info["api"]) == {"revision"}
    versions = http.get("/template_versions").json()["template_versions"]
    rocky = next(v for v in versions if v["version"] == "heat_template_version.2018-08-31")
    assert rocky == {
        "version": "heat_template_version.2018-08-31",
        "type": "hot",
        "aliases": ["heat_template_version.rocky"],
    }
    url = "/template_versions/heat_template_version.rocky/functions"
    functions = http.get(url).json()["template_functions"]
    assert all(set(f) == {"functions", "description"} for f in functions)
    assert "get_attr" in {f["functions"] for f in functions}
    message = _fault(http.get("/template_versions/2018-08-31/functions"), 404, "NotFound")
    assert message == "Template with version 2018-08-31 not found"


def test_conflicts_are_typed(http: httpx.Client) -> None:
    _stack(http, "twice", SIMPLE)
    _fault(_create(http, "twice", SIMPLE), 409, "StackExists")
    path = _stack(http, "calm", SIMPLE)
    cancel = http.post(f"{path}/actions", json={"cancel_update": None})
    assert "is not supported" in _fault(cancel, 400, "NotSupported")
    signal = http.post(f"{path}/resources/r/signal", json={})
    _fault(signal, 400, "ResourceActionNotSupported")
    nowhere = _fault(http.post(f"{path}/resources/nope/signal", json={}), 404, "ResourceNotFound")
    assert nowhere == "The Resource (nope) could not be found in Stack calm."
    slow = _create(http, "slow", SLOW)
    slow_path = f"/stacks/slow/{slow.json()['stack']['id']}"
    busy = http.post(f"{slow_path}/actions", json={"suspend": None})
    assert "already has an action" in _fault(busy, 409, "ActionInProgress")
    assert http.delete(slow_path).status_code == 204


def test_a_method_a_route_lacks_is_heats_405(http: httpx.Client) -> None:
    refused = http.delete("/stacks")
    _fault(refused, 405, "HTTPMethodNotAllowed")
    assert set(refused.headers["allow"].replace(" ", "").split(",")) == {"GET", "POST"}
    assert REQUEST_ID.match(refused.headers["x-openstack-request-id"])


def test_a_full_page_links_to_the_next_and_count_counts_all(http: httpx.Client) -> None:
    for name in ("p1", "p2", "p3"):
        assert _create(http, name, SIMPLE).status_code == 201
    page = http.get("/stacks", params={"limit": 2, "sort_keys": "stack_name", "sort_dir": "asc"})
    body = page.json()
    assert [s["stack_name"] for s in body["stacks"]] == ["p1", "p2"]
    [link] = body["links"]
    assert link["rel"] == "next" and "limit=2" in link["href"]
    assert f"marker={body['stacks'][1]['id']}" in link["href"]
    rest = httpx.get(link["href"], headers={"X-Auth-Token": "t"}).json()
    assert [s["stack_name"] for s in rest["stacks"]] == ["p3"] and "links" not in rest
    counted = http.get("/stacks", params={"limit": 1, "with_count": "true"}).json()
    assert len(counted["stacks"]) == 1 and counted["count"] == 3


def test_heats_rules_for_names_booleans_and_integers(http: httpx.Client) -> None:
    bad_name = _fault(_create(http, "1st stack", SIMPLE), 400, "StackValidationFailed")
    assert bad_name.startswith("Invalid stack name 1st stack must contain only alphanumeric")
    yes = _fault(http.get("/stacks", params={"show_deleted": "yes"}), 400, "HTTPBadRequest")
    assert yes == 'Unrecognized value "yes" for "show_deleted", acceptable values are: true, false.'
    assert http.get("/stacks", params={"show_deleted": "TRUE"}).status_code == 200
    limit = _fault(http.get("/stacks", params={"limit": "two"}), 400, "HTTPBadRequest")
    assert limit == "Only integer is acceptable by 'limit'."
    assert _create(http, "no-timeout", SIMPLE, timeout_mins=0).status_code == 201


def test_a_stack_given_no_timeout_shows_null_as_in_heat(http: httpx.Client) -> None:
    """Heat shows the ``timeout_mins`` a stack was given; its deadline, when
    none was, is the engine's default (engine tests hold that)."""
    stack = http.get(_stack(http, "untimed", TEMPLATE)).json()["stack"]
    assert stack["timeout_mins"] is None


def test_a_deleted_stack_shows_by_id_without_outputs(http: httpx.Client) -> None:
    path = _stack(http, "gone", TEMPLATE)
    assert http.delete(path).status_code == 204
    stack = _settled(http, path)
    assert stack["stack_status"] == "DELETE_COMPLETE" and stack["deletion_time"]
    assert "outputs" not in stack
    _fault(http.get("/stacks/gone"), 404, "EntityNotFound")


def test_preview_carries_heats_keys(http: httpx.Client) -> None:
    shown = http.post("/stacks/preview", json={"stack_name": "pv", "template": SIMPLE})
    assert shown.status_code == 200
    stack = shown.json()["stack"]
    assert SHOW_KEYS - {"outputs", "stack_status", "stack_status_reason"} <= set(stack)
    assert [r["resource_name"] for r in stack["resources"]] == ["r"]
