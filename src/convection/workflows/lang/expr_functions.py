"""Mistral's expression functions (``mistral/expressions/std_functions.py``).

The same eleven functions Mistral registers for both languages (its
``mistral.expression.functions`` entry points): ``env``, ``execution``,
``executions``, ``global``, ``json_dump``, ``json_parse``, ``task``,
``tasks``, ``uuid``, ``yaml_dump``, ``yaml_parse``. They take and return
plain data; each language's adapter (``expr_yaql``, ``expr_jinja``)
unwraps the arguments it passes and views what comes back.

Those that need engine data ask the evaluation's
:class:`~convection.workflows.lang.expr_state.ExpressionHost`; evaluated
without one (an environment evaluated against itself), ``env()`` reads the
data context's ``__env`` as Mistral's ``env_`` does, and the others fail
with a message saying why.
"""

from __future__ import annotations

import json
import uuid as _uuid
from collections.abc import Callable, Mapping
from typing import Any, Final

import yaml

from convection.workflows.lang import expr_state
from convection.workflows.lang.expr_data import unwrap
from convection.workflows.lang.expr_state import ExpressionHost, check_length


class Unavailable(Exception):
    """A function needs the engine, and this evaluation has no host."""


def _host(name: str) -> ExpressionHost:
    found = expr_state.host()
    if found is None:
        raise Unavailable(f"{name}() needs a workflow execution, and there is none here")
    return found


def env_() -> Any:
    """``env()``: the environment; outside an execution, the data's ``__env``."""
    found = expr_state.host()
    if found is not None:
        return found.env()
    data = unwrap(expr_state.data())
    return data.get("__env") if isinstance(data, Mapping) else None


def execution_() -> Any:
    return _host("execution").execution()


def executions_(
    id: str | None = None,  # Mistral's keyword: ``executions(id => ...)``
    root_execution_id: str | None = None,
    state: str | None = None,
    from_time: str | None = None,
    to_time: str | None = None,
) -> Any:
    return _host("executions").executions(id, root_execution_id, state, from_time, to_time)


def global_(var_name: str) -> Any:
    """``global(name)``: the workflow execution's context value, or None."""
    return _host("global").global_context().get(var_name)


def task_(task_name: str | None = None) -> Any:
    return _host("task").task(task_name or None)


def tasks_(
    workflow_execution_id: str | None = None,
    recursive: bool = False,
    state: str | None = None,
    flat: bool = False,
) -> Any:
    return _host("tasks").tasks(workflow_execution_id, bool(recursive), state, bool(flat))


def uuid_() -> str:
    return str(_uuid.uuid4())


def json_parse_(data: Any) -> Any:
    return json.loads(data)


def json_dump_(data: Any) -> str:
    """JSON with ``indent=4``, as oslo's ``jsonutils.dumps`` writes it."""
    text = json.dumps(data, indent=4, default=_json_default)
    check_length(len(text))
    return text


def _json_default(value: Any) -> Any:
    """What oslo's ``to_primitive`` does for the types JSON lacks."""
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raw = unwrap(value)
    if raw is not value:
        return raw
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


class _PlainLoader(yaml.SafeLoader):
    """Mistral's hardened loader (``mistral/utils/safe_yaml.py``): anchors and
    aliases read as plain text, so no billion laughs; ``@`` may start a
    plain scalar."""

    def fetch_alias(self) -> None:
        self.fetch_plain()  # type: ignore[no-untyped-call]

    def fetch_anchor(self) -> None:
        self.fetch_plain()  # type: ignore[no-untyped-call]

    def check_plain(self) -> bool:
        return self.peek() == "@" or bool(super().check_plain())  # type: ignore[no-untyped-call]


class _PlainDumper(yaml.SafeDumper):
    """A shared value is written out again, never as ``&id001`` / ``*id001``
    (Mistral sets ``SafeDumper.ignore_aliases`` the same way)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def yaml_parse_(data: Any) -> Any:
    return yaml.load(data, Loader=_PlainLoader)


def yaml_dump_(data: Any) -> str:
    text: str = yaml.dump(data, Dumper=_PlainDumper, default_flow_style=False)
    check_length(len(text))
    return text


#: Mistral's function names and what they call.
FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "env": env_,
    "execution": execution_,
    "executions": executions_,
    "global": global_,
    "json_dump": json_dump_,
    "json_parse": json_parse_,
    "task": task_,
    "tasks": tasks_,
    "uuid": uuid_,
    "yaml_dump": yaml_dump_,
    "yaml_parse": yaml_parse_,
}

#: Those whose first argument is data, not an optional filter: in Jinja
#: ``{{ x | json_dump }}`` dumps ``x``.
TAKES_DATA: Final = frozenset({"global", "json_dump", "json_parse", "yaml_dump", "yaml_parse"})
