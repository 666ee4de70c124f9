"""``get_file`` through python-heatclient, as Heat's ``GetFile``
(heat/engine/hot/functions.py) has it: the content is looked up in
``files`` by its exact key only when the call is resolved. heatclient
fetches a URL it finds in ``get_file`` and keys the content by the URL, so
such a key must be found; a key missing from ``files`` is no error for
template validate (``GetFile`` has no ``validate``)."""

from __future__ import annotations

from typing import Any

from heatclient.client import Client

URL = "https://example.com/motd.txt"

TEMPLATE = f"""\
heat_template_version: 2021-04-16
resources:
  motd:
    type: OS::Heat::Value
    properties:
      value: {{get_file: "{URL}"}}
outputs:
  motd: {{value: {{get_attr: [motd, value]}}}}
"""

MISSING = """\
heat_template_version: 2021-04-16
resources:
  r:
    type: OS::Heat::Value
    properties:
      value: {get_file: scripts/not-sent.sh}
outputs:
  missing: {value: {get_file: not-sent.txt}}
"""


def test_a_url_key_in_files_is_what_get_file_reads(heat: Client, settle: Any) -> None:
    stack_id = heat.stacks.create(stack_name="url-file", template=TEMPLATE, files={URL: "hello\n"})[
        "stack"
    ]["id"]
    stack = settle(heat, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    outputs = heat.stacks.get(stack_id).to_dict()["outputs"]
    assert [(o["output_key"], o["output_value"]) for o in outputs] == [("motd", "hello\n")]


def test_validate_accepts_a_get_file_key_missing_from_files(heat: Client) -> None:
    body = heat.stacks.validate(template=MISSING)
    assert body["Description"] == "No description"
    assert heat.stacks.validate(template=TEMPLATE)["Description"] == "No description"
