"""How the service's views write and mask values (``convection.service.views``),
pure: Heat's ``str(Parameter)`` per type, and ``get_environment``'s mask."""

from __future__ import annotations

from typing import Any

import pytest

from convection.service.views import (
    MASK,
    masked_environment,
    output_view,
    parameter_text,
    parameter_view,
)
from convection.store.api import StackRecord, TemplateRecord


@pytest.mark.parametrize(
    ("ptype", "value", "text"),
    [
        ("number", 10, "10"),
        ("number", "10", "10"),
        ("number", " 7 ", "7"),
        ("number", "1.50", "1.5"),
        ("number", "1e3", "1000.0"),
        ("number", True, "True"),  # a bool is a number to Heat's str_to_num
        ("boolean", "yes", "True"),
        ("boolean", "OFF", "False"),
        ("boolean", False, "False"),
        ("comma_delimited_list", "a, b", "a, b"),  # split and joined: as given
        ("comma_delimited_list", ["a", 2, None], "a,2,None"),
        ("comma_delimited_list", "", ""),
        ("json", {"b": [1, 2], "a": None}, '{"b": [1, 2], "a": null}'),
        ("json", '{"k":"v"}', '{"k": "v"}'),
        ("json", "", '""'),
        ("json", ["x"], '["x"]'),
        ("string", True, "True"),
        ("string", 5, "5"),
        ("number", "not a number", "not a number"),  # never checked: as given
    ],
)
def test_parameter_text_is_heats_str(ptype: str, value: Any, text: str) -> None:
    assert parameter_text(ptype, value) == text


def _stack(parameters: dict[str, Any]) -> StackRecord:
    return StackRecord(
        id="sid",
        project="proj",
        name="s",
        action="CREATE",
        status="COMPLETE",
        parameters=parameters,
    )


def test_parameter_view_order_sources_and_mask() -> None:
    template = TemplateRecord(
        id=1,
        template={
            "parameters": {
                "given": {"type": "number", "default": 1},
                "env": {"type": "number", "default": 1},
                "schema": {"type": "number", "default": 1},
                "none": {"type": "string"},
                "pw": {"type": "string", "hidden": True},
            }
        },
        environment={"parameter_defaults": {"env": 2, "given": 9, "none": None}},
    )
    shown = parameter_view(_stack({"given": 3, "pw": "s3cret"}), template)
    assert list(shown) == [
        "OS::stack_id",
        "OS::project_id",
        "OS::stack_name",
        "given",
        "env",
        "schema",
        "pw",
    ]
    assert shown == {
        "OS::stack_id": "sid",
        "OS::project_id": "proj",
        "OS::stack_name": "s",
        "given": "3",
        "env": "2",
        "schema": "1",
        "pw": MASK,
    }


def test_outputs_are_never_masked_and_old_flags_dropped() -> None:
    stored = {"output_key": "o", "output_value": "v", "description": "d", "secret": True}
    assert output_view(stored) == {"output_key": "o", "output_value": "v", "description": "d"}


def test_environment_masks_by_the_template_then_its_files() -> None:
    child = (
        "heat_template_version: 2018-08-31\n"
        "parameters:\n"
        "  nested: {type: string, hidden: true}\n"
        "  both: {type: string, hidden: true}\n"
    )
    files = {"child.yaml": child, "script.sh": "echo heat_template_version", "bad.yaml": "[: x"}
    template = {"parameters": {"both": {"type": "string"}, "top": {"hidden": True}}}
    env = {"parameters": {"top": "t"}, "parameter_defaults": {"nested": "n", "both": "b", "x": 1}}
    masked = masked_environment(env, template, files)
    assert masked == {
        "parameters": {"top": MASK},
        # The stack's own template wins over a file's: ``both`` is not hidden there.
        "parameter_defaults": {"nested": MASK, "both": "b", "x": 1},
    }
    assert env["parameters"]["top"] == "t"  # a copy was masked
