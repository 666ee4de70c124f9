"""The derived config: what a SoftwareDeployment hands to a node (pure).

Heat's SoftwareDeployment never sends its source config as is. On every
action it builds a *derived* config (``_build_derived_config_params``):

* ``group`` is the source's, or ``Heat::Ungrouped``;
* ``config`` and ``options`` are the source's (a StructuredDeployment first
  substitutes ``get_input``, see :mod:`convection.software.structured`);
* ``inputs`` are, in this order: each declared input with its value from
  ``input_values`` (else its default); then every undeclared
  ``input_values`` key as an extra input; then the ``deploy_*`` inputs:
  ``deploy_server_id``, ``deploy_action``, ``deploy_stack_id`` (the stack
  path ``name/id``), ``deploy_resource_name``, ``deploy_signal_transport``,
  and by transport: CFN_SIGNAL adds ``deploy_signal_id`` and
  ``deploy_signal_verb: POST``; TEMP_URL_SIGNAL adds ``deploy_signal_id``
  and ``deploy_signal_verb: PUT``; HEAT_SIGNAL and ZAQAR_SIGNAL add
  ``deploy_auth_url``, ``deploy_username``, ``deploy_user_id``,
  ``deploy_password`` and ``deploy_project_id``, and ZAQAR_SIGNAL then
  ``deploy_queue_id``; NO_SIGNAL adds nothing;
* ``outputs`` are the source's;
* ``name`` is the deployment's ``name`` property, else the source's name,
  else the deployment's physical resource name.

Everything here is pure: values in, values out, no I/O.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Final

from convection.common import JSON
from convection.software._coerce import INPUT_TYPES, coerce_default
from convection.software.errors import InvalidConfig
from convection.software.structured import substitute_inputs

UNGROUPED: Final = "Heat::Ungrouped"
COMPONENT: Final = "component"

SIGNAL_TRANSPORTS: Final = (
    "CFN_SIGNAL",
    "TEMP_URL_SIGNAL",
    "HEAT_SIGNAL",
    "NO_SIGNAL",
    "ZAQAR_SIGNAL",
)
DEPLOY_ACTIONS: Final = ("CREATE", "UPDATE", "DELETE", "SUSPEND", "RESUME")
#: The SoftwareDeployment ``actions`` property default.
DEFAULT_ACTIONS: Final = ("CREATE", "UPDATE")

#: Options Convection reads from a config's ``options`` (documented in
#: :mod:`convection.software`): re-run an interrupted deployment, and the
#: per-config run timeout in seconds.
RERUN_SAFE_OPTION: Final = "rerun_safe"
TIMEOUT_OPTION: Final = "timeout"

#: Derived inputs whose value is a credential: never logged, redacted in reasons.
SECRET_DEPLOY_INPUTS: Final = frozenset({"deploy_password"})


@dataclass(frozen=True, slots=True)
class InputDecl:
    """One declared input of a software config (Heat's ``InputConfig`` schema)."""

    name: str
    type: str = "String"
    description: str | None = None
    default: JSON = None
    replace_on_change: bool = False


@dataclass(frozen=True, slots=True)
class OutputDecl:
    """One declared output. ``error_output``: a value here means failure."""

    name: str
    type: str = "String"
    description: str | None = None
    error_output: bool = False

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"name": self.name, "type": self.type}
        if self.description is not None:
            out["description"] = self.description
        out["error_output"] = self.error_output
        return out


@dataclass(frozen=True, slots=True)
class SourceConfig:
    """A SoftwareConfig (or StructuredConfig) as stored: the deployment's source."""

    group: str = UNGROUPED
    config: JSON = None
    options: Mapping[str, JSON] = field(default_factory=lambda: MappingProxyType({}))
    inputs: tuple[InputDecl, ...] = ()
    outputs: tuple[OutputDecl, ...] = ()
    name: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> SourceConfig:
        """Parse a config as the SoftwareConfig resource stores it, checking
        the input/output schemas and coercing defaults as Heat does."""
        options = data.get("options") or {}
        if not isinstance(options, Mapping):
            raise InvalidConfig("must be a map", field="options")
        group = data.get("group") or UNGROUPED
        if not isinstance(group, str):
            raise InvalidConfig("must be a string", field="group")
        name = data.get("name")
        return cls(
            group=group,
            config=data.get("config"),
            options=MappingProxyType(dict(options)),
            inputs=tuple(_parse_input(i, n) for n, i in enumerate(_io_list(data, "inputs"))),
            outputs=tuple(_parse_output(o, n) for n, o in enumerate(_io_list(data, "outputs"))),
            name=name if isinstance(name, str) else None,
        )


def _io_list(data: Mapping[str, JSON], key: str) -> list[Mapping[str, JSON]]:
    items = data.get(key) or []
    if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
        raise InvalidConfig("must be a list of maps", field=key)
    return items


def _check_common(item: Mapping[str, JSON], where: str) -> tuple[str, str]:
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidConfig("name is required and must be a string", field=where)
    type_ = item.get("type") or "String"
    if type_ not in INPUT_TYPES:
        raise InvalidConfig(f"type must be one of {', '.join(INPUT_TYPES)}", field=where)
    return name, type_


def _parse_input(item: Mapping[str, JSON], index: int) -> InputDecl:
    name, type_ = _check_common(item, f"inputs[{index}]")
    description = item.get("description")
    return InputDecl(
        name=name,
        type=type_,
        description=description if isinstance(description, str) else None,
        default=coerce_default(name, type_, item.get("default")),
        replace_on_change=bool(item.get("replace_on_change", False)),
    )


def _parse_output(item: Mapping[str, JSON], index: int) -> OutputDecl:
    name, type_ = _check_common(item, f"outputs[{index}]")
    description = item.get("description")
    return OutputDecl(
        name=name,
        type=type_,
        description=description if isinstance(description, str) else None,
        error_output=bool(item.get("error_output", False)),
    )


@dataclass(frozen=True, slots=True)
class DeployContext:
    """What the deployment knows about itself when it derives a config."""

    server_id: str
    action: str
    stack_id: str
    resource_name: str
    signal_transport: str = "NO_SIGNAL"

    def __post_init__(self) -> None:
        if self.action not in DEPLOY_ACTIONS:
            raise InvalidConfig(f"must be one of {', '.join(DEPLOY_ACTIONS)}", field="action")
        if self.signal_transport not in SIGNAL_TRANSPORTS:
            raise InvalidConfig(
                f"must be one of {', '.join(SIGNAL_TRANSPORTS)}", field="signal_transport"
            )


def stack_path(stack_name: str, stack_id: str) -> str:
    """Heat's ``deploy_stack_id`` value: ``identifier().stack_path()``."""
    return f"{stack_name}/{stack_id}"


@dataclass(frozen=True, slots=True)
class SignalInputs:
    """Values for the transport-specific ``deploy_*`` inputs.

    Which of them appear depends on the signal transport (see the module
    docstring); a value not supplied is ``None``, as Heat would send when it
    has none. ``password`` is a secret and never shown.
    """

    signal_id: str | None = None
    auth_url: str | None = None
    username: str | None = None
    user_id: str | None = None
    password: str | None = field(default=None, repr=False)
    project_id: str | None = None
    queue_id: str | None = None


@dataclass(frozen=True, slots=True)
class DerivedInput:
    """One input of a derived config, with its value."""

    name: str
    value: JSON
    type: str = "String"
    description: str | None = None
    default: JSON = None
    replace_on_change: bool = False

    def to_json(self) -> dict[str, JSON]:
        """Heat's ``InputConfig.as_dict``: unset fields and a false
        ``replace_on_change`` are left out; ``value`` is always there."""
        out: dict[str, JSON] = {"name": self.name, "type": self.type}
        if self.description is not None:
            out["description"] = self.description
        if self.default is not None:
            out["default"] = self.default
        if self.replace_on_change:
            out["replace_on_change"] = True
        out["value"] = self.value
        return out


@dataclass(frozen=True, slots=True)
class DerivedConfig:
    """The config a node runs for one action of one deployment."""

    id: str
    name: str
    group: str
    config: JSON
    options: Mapping[str, JSON]
    inputs: tuple[DerivedInput, ...]
    outputs: tuple[OutputDecl, ...]
    secret_inputs: frozenset[str] = frozenset()

    def input_values(self) -> dict[str, JSON]:
        """``{name: value}`` for every input, as Heat's ``input_data`` pairs."""
        return {i.name: i.value for i in self.inputs}

    def secret_values(self) -> tuple[str, ...]:
        """The string forms of secret input values, for redaction."""
        found = []
        for inp in self.inputs:
            if inp.name in self.secret_inputs and inp.value not in (None, ""):
                found.append(inp.value if isinstance(inp.value, str) else json.dumps(inp.value))
        return tuple(found)

    @property
    def action(self) -> str | None:
        value = self.input_values().get("deploy_action")
        return value if isinstance(value, str) else None

    @property
    def rerun_safe(self) -> bool:
        """Whether the config says an interrupted run may simply run again."""
        return self.options.get(RERUN_SAFE_OPTION) is True

    @property
    def digest(self) -> str:
        """A digest of what the node would do: config, options, outputs and
        the inputs' values, without the ``deploy_*`` inputs (they change with
        the action and the signal credentials, not with the intent). Equal
        digests mean an UPDATE has nothing new to run."""
        doc = {
            "group": self.group,
            "config": self.config,
            "options": dict(self.options),
            "outputs": [o.to_json() for o in self.outputs],
            "inputs": {
                i.name: [i.type, i.value] for i in self.inputs if not i.name.startswith("deploy_")
            },
        }
        text = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()

    def to_json(self) -> dict[str, JSON]:
        """The document heat-agents reads: ``id, name, group, config, options,
        inputs, outputs``. It holds secret values; keep it off logs."""
        return {
            "id": self.id,
            "name": self.name,
            "group": self.group,
            "config": self.config,
            "options": dict(self.options),
            "inputs": [i.to_json() for i in self.inputs],
            "outputs": [o.to_json() for o in self.outputs],
        }


@dataclass(frozen=True, slots=True)
class Substitution:
    """StructuredDeployment's ``input_key`` and ``input_values_validate``."""

    input_key: str = "get_input"
    validate: str = "LAX"


def derived_config_id(deployment_id: str, operation_id: str) -> str:
    """A derived config id that is the same when one action is re-run after a
    crash and new for the next action: the idempotence marker's key."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"convection:{deployment_id}:{operation_id}"))


def build_derived_config(
    source: SourceConfig,
    context: DeployContext,
    *,
    config_id: str,
    input_values: Mapping[str, JSON] | None = None,
    signal: SignalInputs | None = None,
    name: str | None = None,
    physical_resource_name: str = "",
    substitution: Substitution | None = None,
    secret_inputs: Collection[str] = (),
) -> DerivedConfig:
    """Heat's ``_build_derived_config_params`` for one action.

    ``substitution`` makes this a StructuredDeployment: ``get_input`` (or the
    chosen key) in ``source.config`` is replaced by the derived inputs'
    values, including the ``deploy_*`` ones. ``secret_inputs`` names inputs
    whose values come from hidden parameters, so they are redacted wherever
    a reason or log could show them.
    """
    inputs = tuple(_derive_inputs(source, context, input_values or {}, signal or SignalInputs()))
    if substitution is not None:
        values = {i.name: i.value for i in inputs}
        config: JSON = substitute_inputs(
            source.config,
            values,
            input_key=substitution.input_key,
            strict=substitution.validate == "STRICT",
        )
        empty: JSON = {}
    else:
        config, empty = source.config, ""
    return DerivedConfig(
        id=config_id,
        name=name or source.name or physical_resource_name,
        group=source.group or UNGROUPED,
        config=config or empty,
        options=MappingProxyType(dict(source.options)),
        inputs=inputs,
        outputs=source.outputs,
        secret_inputs=frozenset(secret_inputs) | SECRET_DEPLOY_INPUTS,
    )


def _derive_inputs(
    source: SourceConfig,
    context: DeployContext,
    input_values: Mapping[str, JSON],
    signal: SignalInputs,
) -> Iterator[DerivedInput]:
    remaining = dict(input_values)
    for decl in source.inputs:
        yield DerivedInput(
            name=decl.name,
            value=remaining.pop(decl.name, decl.default),
            type=decl.type,
            description=decl.description,
            default=decl.default,
            replace_on_change=decl.replace_on_change,
        )
    for key, value in remaining.items():
        yield DerivedInput(name=key, value=value)
    yield from _deploy_inputs(context, signal)


def _deploy_inputs(context: DeployContext, signal: SignalInputs) -> Iterator[DerivedInput]:
    def make(name: str, value: JSON, description: str) -> DerivedInput:
        return DerivedInput(name=name, value=value, description=description)

    yield make("deploy_server_id", context.server_id, "ID of the server being deployed to")
    yield make("deploy_action", context.action, "Name of the current action being deployed")
    yield make("deploy_stack_id", context.stack_id, "ID of the stack this deployment belongs to")
    yield make(
        "deploy_resource_name",
        context.resource_name,
        "Name of this deployment resource in the stack",
    )
    yield make(
        "deploy_signal_transport",
        context.signal_transport,
        "How the server should signal to heat with the deployment output values.",
    )
    transport = context.signal_transport
    if transport in ("CFN_SIGNAL", "TEMP_URL_SIGNAL"):
        yield make(
            "deploy_signal_id", signal.signal_id, "ID of signal to use for signaling output values"
        )
        verb = "POST" if transport == "CFN_SIGNAL" else "PUT"
        yield make("deploy_signal_verb", verb, "HTTP verb to use for signaling outputvalues")
    elif transport in ("HEAT_SIGNAL", "ZAQAR_SIGNAL"):
        yield make("deploy_auth_url", signal.auth_url, "URL for API authentication")
        yield make("deploy_username", signal.username, "Username for API authentication")
        yield make("deploy_user_id", signal.user_id, "User ID for API authentication")
        yield make("deploy_password", signal.password, "Password for API authentication")
        yield make("deploy_project_id", signal.project_id, "ID of project for API authentication")
    if transport == "ZAQAR_SIGNAL":
        yield make(
            "deploy_queue_id", signal.queue_id, "ID of queue to use for signaling output values"
        )


def should_deploy(
    source: SourceConfig, action: str, actions: Sequence[str] = DEFAULT_ACTIONS
) -> bool:
    """Heat's ``_handle_action`` gate: does this action run the config at all?

    A ``component`` config runs for the actions its parts name; any other
    config for the deployment's ``actions`` property.
    """
    if source.group == COMPONENT:
        return action in _component_actions(source.config)
    return action in actions


def _component_actions(config: JSON) -> set[str]:
    found: set[str] = set()
    parts = config.get("configs") if isinstance(config, Mapping) else None
    for part in parts or []:
        if isinstance(part, Mapping):
            found.update(a for a in part.get("actions") or [] if isinstance(a, str))
    return found


def resolve_component(derived: DerivedConfig) -> DerivedConfig | None:
    """heat-agents' handling of ``group: component``: pick the first part
    whose ``actions`` include ``deploy_action`` and run its ``config`` with
    its ``tool`` as the group. ``None`` when no part matches (skipped).
    Other groups are returned unchanged."""
    if derived.group != COMPONENT:
        return derived
    action = derived.action
    parts = derived.config.get("configs") if isinstance(derived.config, Mapping) else None
    for part in parts or []:
        if isinstance(part, Mapping) and action in (part.get("actions") or []):
            tool = part.get("tool")
            if not isinstance(tool, str) or not tool:
                raise InvalidConfig("a component part needs a tool", field="config.configs")
            return replace(derived, config=part.get("config"), group=tool)
    return None


def replace_on_change_inputs(old: DerivedConfig, new: DerivedConfig) -> tuple[str, ...]:
    """Heat's ``handle_update`` rule: the inputs marked ``replace_on_change``
    (in the new config) that existed before with a different value. Any name
    here means the deployment is replaced rather than updated."""
    before = old.input_values()
    return tuple(
        i.name
        for i in new.inputs
        if i.replace_on_change and i.name in before and before[i.name] != i.value
    )


def agent_input_values(derived: DerivedConfig) -> dict[str, Any]:
    """Input values as a hook sees them after heat-agents' sanitising.

    ``55-heat-config`` turns the value of every ``String`` input that is not
    a string into ``str(value)`` before calling the hook, so ``True`` arrives
    as ``"True"`` and ``3`` as ``"3"``. Maps and lists are kept structured
    here, where the agent would have produced a Python repr: hooks then give
    them as JSON (script) or as structured variables (ansible).
    """
    values: dict[str, Any] = {}
    for inp in derived.inputs:
        value = inp.value
        if inp.type == "String" and value is not None and not isinstance(value, str | dict | list):
            value = str(value)
        values[inp.name] = value
    return values
