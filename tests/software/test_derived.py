"""The derived config (Heat's SoftwareDeployment), StructuredDeployment's
get_input, and Heat's signal verdict: all pure."""

from __future__ import annotations

from typing import Any

import pytest

from convection.software import (
    DeployContext,
    DeployResult,
    InputMissing,
    InvalidConfig,
    SignalInputs,
    SourceConfig,
    Substitution,
    agent_input_values,
    build_derived_config,
    derived_config_id,
    evaluate,
    outcome_of,
    replace_on_change_inputs,
    resolve_component,
    should_deploy,
    stack_path,
    substitute_inputs,
)
from convection.software.derived import OutputDecl

BASE_DEPLOY = [
    "deploy_server_id",
    "deploy_action",
    "deploy_stack_id",
    "deploy_resource_name",
    "deploy_signal_transport",
]
CREDENTIALS = [
    "deploy_auth_url",
    "deploy_username",
    "deploy_user_id",
    "deploy_password",
    "deploy_project_id",
]


def source(**extra: Any) -> SourceConfig:
    data: dict[str, Any] = {
        "group": "script",
        "config": "#!/bin/sh\necho hi\n",
        "inputs": [
            {"name": "foo", "default": "dfoo"},
            {"name": "count", "type": "Number", "default": "5"},
            {"name": "flag", "type": "Boolean", "default": "yes"},
            {"name": "pinned", "replace_on_change": True},
        ],
        "outputs": [{"name": "result"}, {"name": "err", "error_output": True}],
        "options": {"rerun_safe": True},
        "name": "cfg",
    }
    data.update(extra)
    return SourceConfig.from_json(data)


def context(transport: str = "NO_SIGNAL", action: str = "CREATE") -> DeployContext:
    return DeployContext(
        server_id="server-1",
        action=action,
        stack_id=stack_path("stack", "1234"),
        resource_name="deployment",
        signal_transport=transport,
    )


def derive(transport: str = "NO_SIGNAL", action: str = "CREATE", **kw: Any) -> Any:
    kw.setdefault("input_values", {"foo": "v", "extra": {"a": [1]}})
    return build_derived_config(source(), context(transport, action), config_id="id-1", **kw)


def names(derived: Any) -> list[str]:
    return [i.name for i in derived.inputs]


def test_inputs_are_declared_then_extra_then_deploy_in_heat_order() -> None:
    derived = derive()
    assert names(derived) == ["foo", "count", "flag", "pinned", "extra", *BASE_DEPLOY]
    values = derived.input_values()
    assert values["foo"] == "v"  # input_values win over the default
    assert values["count"] == 5  # the default, coerced to the declared type
    assert values["flag"] is True
    assert values["pinned"] is None  # declared, no default, no value
    assert values["extra"] == {"a": [1]}
    assert values["deploy_stack_id"] == "stack/1234"
    assert values["deploy_signal_transport"] == "NO_SIGNAL"


@pytest.mark.parametrize(
    ("transport", "extra"),
    [
        ("NO_SIGNAL", []),
        ("CFN_SIGNAL", ["deploy_signal_id", "deploy_signal_verb"]),
        ("TEMP_URL_SIGNAL", ["deploy_signal_id", "deploy_signal_verb"]),
        ("HEAT_SIGNAL", CREDENTIALS),
        ("ZAQAR_SIGNAL", [*CREDENTIALS, "deploy_queue_id"]),
    ],
)
def test_deploy_inputs_per_signal_transport(transport: str, extra: list[str]) -> None:
    signal = SignalInputs(signal_id="https://signal", password="s3cret", queue_id="q1")
    derived = derive(transport, signal=signal)
    assert names(derived)[5:] == [*BASE_DEPLOY, *extra]
    values = derived.input_values()
    if transport == "CFN_SIGNAL":
        assert values["deploy_signal_verb"] == "POST"
        assert values["deploy_signal_id"] == "https://signal"
    if transport == "TEMP_URL_SIGNAL":
        assert values["deploy_signal_verb"] == "PUT"
    if transport == "ZAQAR_SIGNAL":
        assert values["deploy_queue_id"] == "q1"


def test_derived_document_is_what_heat_agents_read() -> None:
    doc = derive("HEAT_SIGNAL", signal=SignalInputs(password="pw")).to_json()
    assert set(doc) == {"id", "name", "group", "config", "options", "inputs", "outputs"}
    assert doc["group"] == "script" and doc["name"] == "cfg" and doc["id"] == "id-1"
    by_name = {i["name"]: i for i in doc["inputs"]}
    assert by_name["foo"] == {"name": "foo", "type": "String", "default": "dfoo", "value": "v"}
    assert by_name["pinned"]["replace_on_change"] is True
    assert "replace_on_change" not in by_name["foo"]  # false is left out, as Heat does
    assert by_name["extra"] == {"name": "extra", "type": "String", "value": {"a": [1]}}
    assert doc["outputs"][1] == {"name": "err", "type": "String", "error_output": True}


def test_group_name_and_config_defaults() -> None:
    bare = SourceConfig.from_json({"config": None})
    derived = build_derived_config(
        bare, context(), config_id="x", physical_resource_name="stack-dep-abc"
    )
    assert derived.group == "Heat::Ungrouped"
    assert derived.config == ""  # SoftwareDeployment's empty config
    assert derived.name == "stack-dep-abc"
    named = build_derived_config(bare, context(), config_id="x", name="10-first")
    assert named.name == "10-first"


def test_secret_values_include_deploy_password_and_named_inputs() -> None:
    derived = derive("HEAT_SIGNAL", signal=SignalInputs(password="pw-1"), secret_inputs={"foo"})
    assert set(derived.secret_values()) == {"pw-1", "v"}
    assert "pw-1" not in repr(SignalInputs(password="pw-1"))


def test_invalid_defaults_and_schemas_are_refused() -> None:
    with pytest.raises(InvalidConfig, match=r"inputs\.n\.default"):
        SourceConfig.from_json({"inputs": [{"name": "n", "type": "Number", "default": "abc"}]})
    with pytest.raises(InvalidConfig, match="type must be one of"):
        SourceConfig.from_json({"inputs": [{"name": "n", "type": "Float"}]})
    with pytest.raises(InvalidConfig, match="name is required"):
        SourceConfig.from_json({"outputs": [{"type": "String"}]})
    # Heat's legacy path: an empty-string default passes for any type.
    legacy = SourceConfig.from_json({"inputs": [{"name": "n", "type": "Number", "default": ""}]})
    assert legacy.inputs[0].default == ""
    coerced = SourceConfig.from_json(
        {"inputs": [{"name": "l", "type": "CommaDelimitedList", "default": "a, b"}]}
    )
    assert coerced.inputs[0].default == ["a", "b"]
    with pytest.raises(InvalidConfig):
        DeployContext("s", "DESTROY", "s/1", "r")
    with pytest.raises(InvalidConfig):
        DeployContext("s", "CREATE", "s/1", "r", signal_transport="SMOKE_SIGNAL")


def test_digest_ignores_deploy_inputs_and_sees_config_and_inputs() -> None:
    create = derive(action="CREATE")
    update = derive(action="UPDATE", signal=SignalInputs(signal_id="other"))
    assert create.digest == update.digest  # only deploy_* differ
    assert derive(input_values={"foo": "changed"}).digest != create.digest
    other = build_derived_config(
        source(config="#!/bin/sh\necho changed\n"), context(), config_id="id-1"
    )
    assert other.digest != build_derived_config(source(), context(), config_id="id-1").digest


def test_replace_on_change_names_only_changed_flagged_inputs() -> None:
    old = derive(input_values={"foo": "a", "pinned": "1"})
    assert replace_on_change_inputs(old, derive(input_values={"foo": "b", "pinned": "1"})) == ()
    new = derive(action="UPDATE", input_values={"foo": "a", "pinned": "2"})
    assert replace_on_change_inputs(old, new) == ("pinned",)


def test_derived_config_id_is_stable_per_operation() -> None:
    assert derived_config_id("dep", "op-1") == derived_config_id("dep", "op-1")
    assert derived_config_id("dep", "op-1") != derived_config_id("dep", "op-2")


def test_should_deploy_and_component_resolution() -> None:
    assert should_deploy(source(), "CREATE") and not should_deploy(source(), "DELETE")
    assert should_deploy(source(), "DELETE", ["DELETE"])
    component = SourceConfig.from_json(
        {
            "group": "component",
            "config": {
                "configs": [
                    {"actions": ["CREATE"], "config": "#!/bin/sh\necho c\n", "tool": "script"},
                    {"actions": ["DELETE"], "config": "- hosts: localhost", "tool": "ansible"},
                ]
            },
        }
    )
    assert should_deploy(component, "DELETE", []) and not should_deploy(component, "UPDATE")
    created = resolve_component(build_derived_config(component, context(), config_id="c"))
    assert created is not None and created.group == "script"
    assert created.config == "#!/bin/sh\necho c\n"
    update_ctx = context(action="UPDATE")
    assert resolve_component(build_derived_config(component, update_ctx, config_id="c")) is None


def test_agent_input_values_stringify_string_scalars_like_55_heat_config() -> None:
    derived = derive(input_values={"foo": 3, "extra": True, "m": {"k": 1}})
    values = agent_input_values(derived)
    assert values["foo"] == "3" and values["extra"] == "True"
    assert values["m"] == {"k": 1}  # structures stay structured
    assert values["count"] == 5  # a Number input keeps its number


# -- StructuredDeployment get_input ---------------------------------------------


def test_get_input_substitution_follows_heats_rules() -> None:
    inputs = {"a": "A", "n": 1, "nested": {"get_input": "a"}}
    snippet = {
        "x": {"get_input": "a"},
        "list": [{"get_input": "n"}, "plain", {"get_input": "missing"}],
        "two_keys": {"get_input": "a", "other": 1},
        "non_string_arg": {"get_input": ["a"]},
        "nested": {"get_input": "nested"},
    }
    out = substitute_inputs(snippet, inputs)
    assert out["x"] == "A"
    assert out["list"] == [1, "plain", None]  # LAX: missing input is None
    assert out["two_keys"] == {"get_input": "a", "other": 1}  # not a call: walked as a map
    assert out["non_string_arg"] == {"get_input": ["a"]}
    assert out["nested"] == {"get_input": "a"}  # a value is not substituted again
    with pytest.raises(InputMissing, match=r"The Parameter \(missing\) was not provided"):
        substitute_inputs(snippet, inputs, strict=True)
    assert substitute_inputs({"my_in": "a"}, inputs, input_key="my_in") == "A"


def test_structured_deployment_substitutes_with_deploy_inputs() -> None:
    structured = SourceConfig.from_json(
        {
            "group": "os-apply-config",
            "config": {"who": {"get_input": "foo"}, "act": {"get_input": "deploy_action"}},
            "inputs": [{"name": "foo"}],
        }
    )
    derived = build_derived_config(
        structured,
        context(),
        config_id="s",
        input_values={"foo": "bar"},
        substitution=Substitution(),
    )
    assert derived.config == {"who": "bar", "act": "CREATE"}
    empty = build_derived_config(
        SourceConfig.from_json({}), context(), config_id="s", substitution=Substitution()
    )
    assert empty.config == {}  # StructuredDeployment's empty config
    with pytest.raises(InputMissing):
        build_derived_config(
            SourceConfig.from_json({"config": {"x": {"get_input": "nope"}}}),
            context(),
            config_id="s",
            substitution=Substitution(validate="STRICT"),
        )


# -- the verdict ----------------------------------------------------------------

OUTPUTS = (OutputDecl("result"), OutputDecl("err", error_output=True))


def test_evaluate_success_and_status_code_failure() -> None:
    ok = {"result": "r", "deploy_stdout": "o", "deploy_stderr": "", "deploy_status_code": 0}
    status, reason, values = evaluate(OUTPUTS, ok)
    assert (status, reason) == ("COMPLETE", "Outputs received")
    assert values == {
        "result": "r",
        "deploy_stdout": "o",
        "deploy_stderr": "",
        "deploy_status_code": 0,
    }
    status, reason, _ = evaluate(OUTPUTS, {**ok, "deploy_status_code": "0"})
    assert status == "COMPLETE"
    bad = {**ok, "deploy_status_code": 2, "deploy_stderr": "line1\nboom\n"}
    status, reason, _ = evaluate(OUTPUTS, bad)
    assert status == "FAILED"
    assert reason.startswith("deploy_status_code : Deployment exited with non-zero status code: 2")
    assert reason.endswith("stderr (tail): line1\nboom")


def test_error_output_presence_fails_and_reason_is_redacted() -> None:
    details = {"err": "bad thing with hunter2", "deploy_status_code": 0, "deploy_stderr": ""}
    status, reason, values = evaluate(OUTPUTS, details, secrets=["hunter2"])
    assert status == "FAILED"
    assert reason == "err : bad thing with ******"
    assert values["err"] == "bad thing with hunter2"  # values are data, not reasons
    assert values["deploy_stdout"] is None


def test_reason_carries_a_bounded_tail_of_stderr() -> None:
    stderr = "x" * 10_000 + "THE END"
    result = DeployResult({}, "", stderr, 1)
    outcome = outcome_of(result, OUTPUTS)
    assert not outcome.ok
    assert outcome.status_reason.endswith("THE END")
    assert len(outcome.status_reason) < 2200


def test_timeout_reason() -> None:
    result = DeployResult({}, "", "", -9, timed_out=True, timeout=3.0)
    outcome = outcome_of(result, OUTPUTS)
    assert outcome.status == "FAILED"
    assert "timed out after 3 s" in outcome.status_reason
