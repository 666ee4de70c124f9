"""The simple std actions, validation and the registry, against
Mistral's std_actions.py and engine/utils.py."""

from __future__ import annotations

import importlib.metadata
from typing import Any, ClassVar

import pytest

from convection.workflows import (
    ENTRY_POINT_GROUP,
    ActionLoadError,
    ActionPlugin,
    ActionRegistry,
    DuplicateAction,
    Failure,
    InputParam,
    Pending,
    Sleep,
    Success,
    UnknownAction,
    builtin_actions,
    default_registry,
    validate_input,
)
from convection.workflows.actions import std

from .conftest import CTX, run

INPUT = ("workflows", "deploy", "tasks", "install", "input")


def act(name: str, params: dict[str, Any] | None = None) -> Any:
    return run(default_registry().lookup(name)().run(CTX, params or {}))


def test_noop_and_async_noop() -> None:
    assert act("std.noop") == Success(None)
    assert act("std.async_noop") == Pending()
    assert default_registry().lookup("std.async_noop").is_async


def test_echo_returns_output_and_delays_on_a_timer() -> None:
    assert act("std.echo", {"output": {"a": [1]}}) == Success({"a": [1]})
    slept = act("std.echo", {"output": "x", "delay": "0.25"})
    assert slept == Sleep(0.25)
    echo = std.Echo()
    assert run(echo.resume(CTX, {"output": "x"}, slept.state)) == Success("x")
    # Mistral's leniency: negative or invalid delays are no delay
    assert act("std.echo", {"output": 1, "delay": -3}) == Success(1)
    assert act("std.echo", {"output": 1, "delay": "soon"}) == Success(1)


def test_fail_with_and_without_error_data() -> None:
    assert act("std.fail") == Failure("Fail action expected exception.")
    assert act("std.fail", {"error_data": {"code": 7}}) == Failure({"code": 7})


def test_sleep_parks_on_a_timer_and_never_sleeps_itself() -> None:
    assert act("std.sleep") == Sleep(1.0)  # Mistral's default seconds=1
    assert act("std.sleep", {"seconds": 0.05}) == Sleep(0.05)
    assert act("std.sleep", {"seconds": "nope"}) == Success(None)
    assert act("std.sleep", {"seconds": 0}) == Success(None)
    assert run(std.SleepAction().resume(CTX, {}, {})) == Success(None)


def test_test_dict() -> None:
    assert act("std.test_dict", {"size": 3, "key_prefix": "k", "val": "v"}) == Success(
        {"k0": "v", "k1": "v", "k2": "v"}
    )
    assert act("std.test_dict") == Success({})
    huge = act("std.test_dict", {"size": 10**9})
    assert isinstance(huge, Failure) and "value size limit" in huge.error


def test_javascript_is_refused_clearly() -> None:
    for name in ("std.javascript", "std.js"):
        outcome = act(name, {"script": "return 1"})
        assert isinstance(outcome, Failure)
        assert "no sandboxed JavaScript engine" in outcome.error


# -- validation ----------------------------------------------------------------


def test_missing_and_unexpected_in_mistrals_words() -> None:
    diags = validate_input(std.Echo, {"outptu": 1, "delay": 1}, INPUT)
    [diag] = diags.errors
    assert diag.message == (
        "Invalid input [name=std.echo, class=convection.workflows.actions.std.Echo, "
        "missing=['output'], unexpected=['outptu']]"
    )
    assert diag.path == INPUT


def test_only_unexpected() -> None:
    [diag] = validate_input(std.NoOp, {"a": 1, "b": 2}, INPUT).errors
    assert diag.message.endswith(", unexpected=['a', 'b']]")
    assert "missing" not in diag.message


def test_types_are_checked_and_located_without_values() -> None:
    http = default_registry().lookup("std.http")
    diags = validate_input(
        http, {"url": 5, "timeout": "soon", "auth": 12345, "headers": {"a": 1}}, INPUT
    )
    found = {d.path[-1]: d.message for d in diags.errors}
    assert set(found) == {"url", "timeout", "auth"}
    assert found["url"].endswith("'url' must be string, not integer")
    assert found["timeout"].endswith("'timeout' must be number or null, not string")
    assert all("12345" not in m for m in found.values())  # auth is a secret
    assert diags.errors[0].path == (*INPUT, "url")


def test_expressions_and_integers_for_numbers_pass() -> None:
    http = default_registry().lookup("std.http")
    params = {"url": "<% $.url %>", "timeout": 3, "verify": "{{ _.ca }}"}
    assert not validate_input(http, params, INPUT).has_errors
    assert not validate_input(std.Echo, {"output": None}, INPUT).has_errors


def test_secrets_are_declared() -> None:
    reg = default_registry()
    assert reg.lookup("std.email").secret_params() == {"smtp_password"}
    assert reg.lookup("std.ssh").secret_params() == {"password", "private_key"}
    assert reg.lookup("std.http").secret_params() == {"auth"}


def test_input_param_rules() -> None:
    with pytest.raises(ValueError, match="unknown JSON type"):
        InputParam("str")
    with pytest.raises(ValueError, match="required parameter has no default"):
        InputParam(required=True, default=1)


# -- registry ------------------------------------------------------------------


class Custom(ActionPlugin):
    name: ClassVar[str] = "acme.hello"

    async def run(self, ctx: Any, params: Any) -> Success:
        return Success("hello")


class Impostor(ActionPlugin):
    name: ClassVar[str] = "std.echo"


def test_lookup_suggests_a_near_name() -> None:
    with pytest.raises(UnknownAction) as err:
        default_registry().lookup("std.ecko")
    assert str(err.value) == "Failed to find action [action_name=std.ecko]; did you mean std.echo?"
    with pytest.raises(UnknownAction) as err:
        default_registry().lookup("zzz")
    assert str(err.value) == "Failed to find action [action_name=zzz]"


def test_names_are_mistrals_and_convections() -> None:
    names = default_registry().names()
    for name in ("std.noop", "std.echo", "std.fail", "std.sleep", "std.test_dict",
                 "std.async_noop", "std.http", "std.mistral_http", "std.ssh",
                 "std.email", "std.javascript", "convection.stack.create",
                 "convection.stack.update", "convection.stack.delete",
                 "convection.stack.show", "convection.stack.outputs",
                 "convection.signal"):  # fmt: skip
        assert name in names
    assert names == sorted(names)


def test_installed_entry_points_declare_the_builtins() -> None:
    declared = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    loaded = {cls for ep in declared for cls in ep.load()}
    assert loaded == set(builtin_actions())


def test_entry_points_load_and_report_every_problem() -> None:
    def ep(name: str, value: str) -> importlib.metadata.EntryPoint:
        return importlib.metadata.EntryPoint(name, value, ENTRY_POINT_GROUP)

    reg = ActionRegistry(builtin_actions())
    module = __name__
    reg.load_entry_points([ep("ok", f"{module}:Custom")])
    assert run(reg.lookup("acme.hello")().run(None, {})) == Success("hello")
    with pytest.raises(ActionLoadError) as err:
        reg.load_entry_points([ep("dup", f"{module}:Impostor"), ep("gone", "no_such_module_xyz:X")])
    assert len(err.value.problems) == 2
    assert "std.echo is already registered" in err.value.problems[0]
    assert "ModuleNotFoundError" in err.value.problems[1]
    with pytest.raises(DuplicateAction):
        reg.register(Impostor)
