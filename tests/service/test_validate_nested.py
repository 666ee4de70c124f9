"""Template validate's ``show_nested`` and the preview's parameters at the
service level: the cases the heatclient conformance tests
(``tests/api/test_conformance_validate.py``) do not spell out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from convection.cli.main import run
from convection.model import StackInputs
from convection.service import Stacks, validate_template
from convection.store.memory import MemoryStore

CHILD = """\
heat_template_version: 2018-08-31
description: child
parameters:
  p: {type: string, default: d}
  n: {type: number, default: 1}
  names: {type: comma_delimited_list, default: ""}
resources:
  r: {type: OS::Heat::None}
"""


def _validate(template: str, **kw: Any) -> dict[str, Any]:
    inputs = StackInputs.from_text(template, files={"child.yaml": CHILD}, **kw)
    body, _ = validate_template(inputs, show_nested=True)
    return body


def test_a_chain_shows_every_member_and_a_remote_stack_shows_none() -> None:
    body = _validate(
        """\
heat_template_version: 2018-08-31
resources:
  chain:
    type: OS::Heat::ResourceChain
    properties:
      resources: [child.yaml, OS::Heat::None, child.yaml]
  remote:
    type: OS::Heat::Stack
    properties:
      template: {get_file: child.yaml}
"""
    )
    chain = body["NestedParameters"]["chain"]
    assert chain["Type"] == "OS::Heat::ResourceChain"
    assert set(chain["NestedParameters"]) == {"0", "2"}  # "1" has no child stack
    assert "remote" not in body["NestedParameters"]  # Heat's is a remote stack


def test_nested_values_are_the_properties_as_heat_passes_them() -> None:
    """A list property reaches the child as a comma-delimited string; a
    property the child has no parameter for never arrives; a falsy value
    is not shown (``if param.user_value``)."""
    body = _validate(
        """\
heat_template_version: 2018-08-31
parameters:
  top: {type: string, default: from-top}
resources:
  c:
    type: child.yaml
    properties:
      p: {get_param: top}
      n: 0
      names: [a, b]
"""
    )
    params = body["NestedParameters"]["c"]["Parameters"]
    assert params["p"]["Value"] == "from-top"
    assert "Value" not in params["n"]
    assert params["names"]["Value"] == "a,b"
    assert body["NestedParameters"]["c"]["Description"] == "child"


def test_parameter_defaults_reach_the_nested_defaults() -> None:
    """Heat's child environment keeps the owner's parameter_defaults."""
    env = ("env.yaml", "parameter_defaults: {p: shared}\n")
    body = _validate(
        "heat_template_version: 2018-08-31\nresources:\n  c: {type: child.yaml}\n",
        environments=[env],
    )
    assert body["NestedParameters"]["c"]["Parameters"]["p"]["Default"] == "shared"


def test_without_show_nested_there_are_no_nested_parameters() -> None:
    inputs = StackInputs.from_text(
        "heat_template_version: 2018-08-31\nresources:\n  c: {type: child.yaml}\n",
        files={"child.yaml": CHILD},
    )
    body, _ = validate_template(inputs)
    assert "NestedParameters" not in body
    assert body["Environment"]["resource_registry"] == {
        "resources": {},
        "child.yaml": "child.yaml",
    }


def test_preview_parameters_are_heats_texts() -> None:
    stacks = Stacks(MemoryStore())
    template = """\
heat_template_version: 2018-08-31
parameters:
  num: {type: number, default: "2.5"}
  flag: {type: boolean, default: "false"}
  empty: {type: comma_delimited_list, default: ""}
  data: {type: json, default: [1, "ü"]}
resources: {}
"""
    shown = stacks.preview_stack("proj", "pv", StackInputs.from_text(template))
    assert shown["parameters"] == {
        "OS::project_id": "proj",
        "OS::stack_id": "None",
        "OS::stack_name": "pv",
        "num": "2.5",
        "flag": "False",
        "empty": "",
        "data": '[1, "\\u00fc"]',
    }
    assert shown["description"] == "No description"


def test_cli_validate_show_nested(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "child.yaml").write_text(CHILD)
    top = tmp_path / "top.yaml"
    top.write_text("heat_template_version: 2018-08-31\nresources:\n  c: {type: child.yaml}\n")
    assert run(["template", "validate", "-t", str(top), "--show-nested", "-f", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    (entry,) = body["NestedParameters"].values()
    assert entry["Description"] == "child" and set(entry["Parameters"]) == {"p", "n", "names"}
    assert run(["template", "validate", "-t", str(top), "--show-nested"]) == 0
    assert "Nested c" in capsys.readouterr().out
