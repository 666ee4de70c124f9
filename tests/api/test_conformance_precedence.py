"""Which parameter value wins, through python-heatclient, as Heat decides it.

Heat's API (``InstantiationData.environment``, heat/api/openstack/v1/stacks.py)
applies a request's ``parameters`` over its inline ``environment`` unless
``environment_files`` are given; then the inline environment is ignored and
the engine merges the files over the request's ``parameters``
(``merge_environments``, heat/common/environment_util.py, called from
heat/engine/service.py ``_parse_template_and_validate_stack``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from heatclient.client import Client
from heatclient.common import template_utils

from .conftest import Settle

TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  who: {type: string, default: nobody}
  what: {type: string, default: nothing}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_param: who}}}
outputs:
  who: {value: {get_param: who}}
  what: {value: {get_param: what}}
"""


def _outputs(heat: Client, stack_id: str) -> dict[str, Any]:
    return {
        o["output_key"]: o["output_value"] for o in heat.stacks.get(stack_id).to_dict()["outputs"]
    }


def _create(heat: Client, settle: Settle, name: str, **fields: Any) -> str:
    stack_id = str(heat.stacks.create(stack_name=name, template=TEMPLATE, **fields)["stack"]["id"])
    stack = settle(heat, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    return stack_id


def test_request_parameters_win_over_the_inline_environment(heat: Client, settle: Settle) -> None:
    stack_id = _create(
        heat,
        settle,
        "inline",
        environment={"parameters": {"who": "environment", "what": "environment"}},
        parameters={"who": "request"},
    )
    assert _outputs(heat, stack_id) == {"who": "request", "what": "environment"}
    assert heat.stacks.environment(stack_id)["parameters"] == {
        "who": "request",
        "what": "environment",
    }


def test_environment_files_win_over_request_parameters(
    heat: Client, settle: Settle, tmp_path: Path
) -> None:
    """What ``openstack stack create -e env.yaml --parameter who=flag`` sends."""
    (tmp_path / "env.yaml").write_text("parameters:\n  who: env-file\n")
    names: list[str] = []
    files, env = template_utils.process_multiple_environments_and_files(
        env_paths=[str(tmp_path / "env.yaml")], env_list_tracker=names
    )
    stack_id = _create(
        heat,
        settle,
        "files",
        files=files,
        environment=env,
        environment_files=names,
        parameters={"who": "flag", "what": "flag"},
    )
    assert _outputs(heat, stack_id) == {"who": "env-file", "what": "flag"}


def test_the_inline_environment_is_ignored_when_environment_files_are_given(
    heat: Client, settle: Settle
) -> None:
    stack_id = _create(
        heat,
        settle,
        "ignored",
        files={"env.yaml": '{"parameters": {"who": "env-file"}}'},
        environment={"parameters": {"who": "inline", "what": "inline"}},
        environment_files=["env.yaml"],
    )
    assert _outputs(heat, stack_id) == {"who": "env-file", "what": "nothing"}


def test_a_later_file_keeps_only_declared_parameters(heat: Client, settle: Settle) -> None:
    """The first file's parameters are taken whole; a later file's keys the
    template does not declare are dropped, not refused (merge_parameters)."""
    stack_id = _create(
        heat,
        settle,
        "undeclared",
        files={
            "a.yaml": '{"parameters": {"who": "a"}}',
            "b.yaml": '{"parameters": {"what": "b", "unknown": "b"}}',
        },
        environment={"parameters": {"who": "a", "what": "b", "unknown": "b"}},
        environment_files=["a.yaml", "b.yaml"],
    )
    assert _outputs(heat, stack_id) == {"who": "a", "what": "b"}


def test_merge_strategy_joins_a_file_onto_the_request_parameter(
    heat: Client, settle: Settle
) -> None:
    env = '{"parameters": {"who": "-file"}, "parameter_merge_strategies": {"who": "merge"}}'
    stack_id = _create(
        heat,
        settle,
        "merged",
        files={"env.yaml": env},
        environment={"parameters": {"who": "-file"}},
        environment_files=["env.yaml"],
        parameters={"who": "flag"},
    )
    assert _outputs(heat, stack_id)["who"] == "flag-file"


def test_patch_request_parameters_win_over_its_inline_environment(
    heat: Client, settle: Settle
) -> None:
    stack_id = _create(heat, settle, "patched", parameters={"who": "first", "what": "first"})
    heat.stacks.update(
        stack_id,
        existing=True,
        environment={"parameters": {"who": "environment"}},
        parameters={"who": "request"},
    )
    stack = settle(heat, stack_id)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    assert _outputs(heat, stack_id) == {"who": "request", "what": "first"}


def test_patch_file_merge_replaces_a_stored_value_the_request_does_not_send(
    heat: Client, settle: Settle
) -> None:
    """``stack update --existing -e env.yaml`` whose file merges ``who``: Heat
    merges the file over the request's parameters, then loads the result
    over the stored ones (``_prepare_stack_updates``, heat/engine/service.py),
    so the stored value is replaced, not merged onto; a value the request
    sends is merged onto, and a stored value nothing names is kept."""
    stack_id = _create(heat, settle, "patch-merge", parameters={"who": "first", "what": "first"})
    env = '{"parameters": {"who": "-file"}, "parameter_merge_strategies": {"who": "merge"}}'
    heat.stacks.update(
        stack_id, existing=True, files={"env.yaml": env}, environment_files=["env.yaml"]
    )
    stack = settle(heat, stack_id)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    assert _outputs(heat, stack_id) == {"who": "-file", "what": "first"}
    heat.stacks.update(
        stack_id,
        existing=True,
        files={"env.yaml": env},
        environment_files=["env.yaml"],
        parameters={"who": "flag"},
    )
    stack = settle(heat, stack_id)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    assert _outputs(heat, stack_id) == {"who": "flag-file", "what": "first"}


def test_patch_file_merge_replaces_stored_parameter_defaults(heat: Client, settle: Settle) -> None:
    stack_id = _create(
        heat,
        settle,
        "patch-defaults",
        files={"a.yaml": '{"parameter_defaults": {"what": "stored"}}'},
        environment_files=["a.yaml"],
    )
    assert _outputs(heat, stack_id) == {"who": "nobody", "what": "stored"}
    env = (
        '{"parameter_defaults": {"what": "-new"}, "parameter_merge_strategies": {"what": "merge"}}'
    )
    heat.stacks.update(stack_id, existing=True, files={"b.yaml": env}, environment_files=["b.yaml"])
    stack = settle(heat, stack_id)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    assert _outputs(heat, stack_id) == {"who": "nobody", "what": "-new"}


def test_a_request_body_becomes_the_inputs_heat_merges() -> None:
    """The body as the service's inputs (no server): the inline environment
    carries the request's values over its own, or is dropped for files."""
    from convection.api.inputs import stack_inputs
    from convection.common import DEFAULT_LIMITS

    inline = stack_inputs(
        {
            "template": TEMPLATE,
            "environment": "parameters:\n  who: env\n  what: env\n",
            "parameters": {"who": "request"},
        },
        DEFAULT_LIMITS,
    )
    assert [d.data for d in inline.environments] == [
        {"parameters": {"who": "request", "what": "env"}}
    ]
    assert inline.environments[0].source.mark(("parameters", "what")) is not None
    assert dict(inline.parameters) == {}

    files = stack_inputs(
        {
            "template": TEMPLATE,
            "environment": {"parameters": {"who": "inline"}},
            "files": {"e.yaml": "parameters: {who: file}"},
            "environment_files": ["e.yaml"],
            "parameters": {"who": "request"},
        },
        DEFAULT_LIMITS,
    )
    assert [d.name for d in files.environments] == ["e.yaml"]
    assert dict(files.parameters) == {"who": "request"}
