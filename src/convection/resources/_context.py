"""What a plugin may see and do while it works on one resource.

A plugin gets this small context and nothing else: no stack object to read
its parents' state from, no store, no session, no clients pulled off a
runtime. Everything a plugin remembers goes through two writes,
``set_physical_id`` and ``set_data``, which the engine has made durable by the
time they return. That is the whole crash-safety contract:

* **persist before you wait.** A plugin that made something real records its
  id (and any small state it needs) before it returns a progress token or
  polls. After ``kill -9`` the engine calls the same method again with the
  same ``operation_id``, and the plugin finds what it made.
* **create must be safe to call again.** When ``physical_id`` is already set,
  or ``data`` shows the work for this ``operation_id`` began, a plugin
  continues (or just returns) instead of making a second one. Plugins whose
  backends allow it also name what they make with ``physical_resource_name``
  and look it up by that name, which closes the window between making the
  thing and recording its id.
* **never sleep.** A poll that is not done returns ``False`` or ``Wait``; the
  engine stores a timer and calls again, possibly in another process.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from convection.common import JSON, ConvectionError
from convection.resources._nested import NestedStacks
from convection.resources._workflows import WorkflowService


@dataclass(frozen=True, slots=True)
class Peer:
    """Another resource of the same stack, as the store last recorded it.

    Why a copy and not the record: a plugin must not be able to change
    another resource, and the fields here are what Heat lets one resource
    learn of another (a wait condition reads its handle's signals, a
    deployment its server's address).
    """

    name: str
    type: str
    action: str
    status: str
    physical_id: str | None
    reference_id: JSON
    properties: Mapping[str, Any]
    attributes: Mapping[str, JSON]
    data: Mapping[str, JSON]


def _keep_token(secret: str) -> None:
    """``ApiAccess.revoke_token`` where nothing can revoke (tests): the
    token then lives until its stack's tokens are revoked."""


@dataclass(frozen=True, slots=True)
class ApiAccess:
    """How a caller outside the engine reaches this stack through the REST
    API: the base URL (``http://host:8004``, no ``/v1``), the project, and
    narrowed credentials to hand out.

    Why plugins mint tokens through this and not a store: a
    WaitConditionHandle's ``curl_cli`` or a DeployedServer's agent config
    must work against the server, and the token in it must allow exactly
    one thing (signalling that resource; reading that server's
    deployments), never the stack.
    """

    url: str
    project: str
    #: resource name -> a secret that may signal that resource of this stack.
    issue_signal_token: Callable[[str], str]
    #: server id -> a secret that may read that server's deployments and
    #: signal them (the pull agent's credential).
    issue_server_token: Callable[[str], str]
    #: secret -> None: revoke a token this stack issued (its resource is
    #: deleted or replaced). Unknown or already revoked secrets are ignored.
    revoke_token: Callable[[str], None] = _keep_token


class SoftwareRecords(Protocol):
    """The rows Heat's software API shows for this stack's configs and
    deployments (``openstack software config/deployment ...``).

    Why a port and not the store: a config or deployment resource records
    what it made so the API and the pull agent can see it, but must not
    reach any other row. Every row written here is tagged with this stack
    and the calling resource; only such rows can be read back or deleted.
    Writes replace a row with the same id, so a re-run after a crash is
    harmless.
    """

    async def save_config(
        self,
        config_id: str,
        document: Mapping[str, JSON],
        *,
        secret_inputs: tuple[str, ...] = (),
    ) -> None:
        """Record a config: ``document`` is ``{name, group, config, inputs,
        outputs, options}``, as Heat's API shows it."""
        ...

    async def delete_config(self, config_id: str) -> None: ...

    async def save_deployment(
        self,
        deployment_id: str,
        *,
        server_id: str,
        config_id: str,
        input_values: Mapping[str, JSON],
        action: str,
        status: str,
        status_reason: str,
        output_values: Mapping[str, JSON] | None = None,
    ) -> None:
        """Record a deployment (replacing an earlier row of this id)."""
        ...

    async def deployment(self, deployment_id: str) -> Mapping[str, JSON] | None:
        """The deployment's row as Heat's API shows it (``status``,
        ``status_reason``, ``output_values``, ...), read fresh: a pull
        agent reports through the API."""
        ...

    async def delete_deployment(self, deployment_id: str) -> None: ...


@runtime_checkable
class ResourceContext(Protocol):
    """The engine's side of the plugin seam, for one action on one resource."""

    @property
    def resource_name(self) -> str:
        """The logical name in the template."""
        ...

    @property
    def stack_name(self) -> str: ...

    @property
    def stack_id(self) -> str: ...

    @property
    def physical_resource_name(self) -> str:
        """A name for the real thing, unique to this resource version and the
        same on every retry (Heat's ``stack-resource-shortid``)."""
        ...

    @property
    def operation_id(self) -> str:
        """Identifies this action on this resource: the same when a job is run
        again after a crash, different for the next action. Use it to tell a
        re-run from a new request."""
        ...

    @property
    def physical_id(self) -> str | None:
        """The stored physical id, or ``None`` when none was recorded yet."""
        ...

    @property
    def data(self) -> Mapping[str, JSON]:
        """The plugin's small persisted state (never shown to users)."""
        ...

    @property
    def previous_properties(self) -> Mapping[str, Any] | None:
        """On update, the properties the resource was last applied with."""
        ...

    def now(self) -> float:
        """Wall-clock seconds since the epoch; deadlines stored in ``data``
        are in this clock, so they survive a restart."""
        ...

    async def set_physical_id(self, physical_id: str | None, *, commit: bool = True) -> None:
        """Record the physical id durably before returning.

        ``commit=False`` is for an id that names nothing real (a placeholder
        such as ``OS::Heat::None``'s uuid, or a name derived from the
        resource): it is then written with the action's outcome, or with
        the next durable write, instead of in a transaction of its own. A
        crash before that loses only an id nothing was made under."""
        ...

    async def set_data(self, data: Mapping[str, JSON]) -> None:
        """Replace ``data`` durably before returning. Keep it small."""
        ...

    async def emit(self, reason: str) -> None:
        """Add an event to the resource's history (shown to users)."""
        ...

    async def peer(self, name: str) -> Peer | None:
        """Another resource of this stack by name or by reference id (what a
        ``get_resource`` property holds), read fresh from the store (a signal
        another process stored is seen), or ``None``."""
        ...

    async def reset_peer(self, name: str) -> None:
        """Ask another resource of this stack (by name or reference id) to
        forget what it was told: its own plugin's ``reset`` runs and writes
        its own ``data`` (a deleted wait condition empties its handle's
        signals, as Heat's). Durable before returning; an unknown name or
        a type with nothing to forget is a no-op. Why a request and not a
        write: a plugin reads another resource but never writes it."""
        ...

    @property
    def nested(self) -> NestedStacks:
        """Child stacks owned by this resource (see ``_nested``)."""
        ...

    # Added for groups (brief C): what Heat reads off the resource's
    # definition and stack, passed as values rather than a stack object.
    @property
    def update_policy(self) -> Mapping[str, Any] | None:
        """The resource's ``update_policy`` section, resolved, or ``None``
        (ResourceGroup reads ``rolling_update`` and ``batch_create`` here)."""
        ...

    @property
    def stack_timeout(self) -> float | None:
        """The stack action's timeout in seconds, or ``None``: a group
        refuses a rolling update whose pauses alone would outlast it."""
        ...

    @property
    def secrets(self) -> tuple[str, ...]:
        """The values of the stack's hidden parameters, as text. Properties
        hold them in clear (a deployment's ``input_values`` may carry a
        password), so a plugin that shows what it was given or what a
        script printed redacts these from it first (Heat shows ``******``)."""
        ...

    @property
    def api(self) -> ApiAccess | None:
        """The REST API as outsiders reach it, or ``None`` when no API URL is
        configured (plain CLI use): then signal URLs fall back to the
        ``convection stack resource signal`` command line."""
        ...

    @property
    def software(self) -> SoftwareRecords | None:
        """This stack's rows in Heat's software API, or ``None`` where there
        is no store behind the context (a throwaway run)."""
        ...

    @property
    def workflows(self) -> WorkflowService | None:
        """The stack's project's workflows (``OS::Mistral::*``), or ``None``
        where the engine runs stacks only (see ``_workflows``)."""
        ...


@dataclass
class InMemoryContext:
    """A plain :class:`ResourceContext` for tests and throwaway runs.

    Writes land in its own fields; ``writes`` counts them so a test can prove
    a plugin persisted before it returned. Give a fresh ``operation_id`` for
    each new action, and keep it to simulate a re-run after a crash.
    """

    resource_name: str = "resource"
    stack_name: str = "stack"
    stack_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    physical_id: str | None = None
    data: dict[str, JSON] = field(default_factory=dict)
    previous_properties: Mapping[str, Any] | None = None
    operation_id: str = "op-1"
    clock: Callable[[], float] = time.time
    events: list[str] = field(default_factory=list)
    writes: int = 0
    #: What :meth:`peer` returns, by name.
    peers: dict[str, Peer] = field(default_factory=dict)
    #: The names :meth:`reset_peer` was asked to reset, in order.
    resets: list[str] = field(default_factory=list)
    #: Child stacks; by default none can be made without an engine.
    nested: NestedStacks = field(default_factory=lambda: _NO_NESTED)
    update_policy: Mapping[str, Any] | None = None
    stack_timeout: float | None = None
    #: The hidden parameter values a plugin must not show.
    secrets: tuple[str, ...] = ()
    api: ApiAccess | None = None
    software: SoftwareRecords | None = None
    workflows: WorkflowService | None = None
    _short_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    @property
    def physical_resource_name(self) -> str:
        return f"{self.stack_name}-{self.resource_name}-{self._short_id}"

    def now(self) -> float:
        return self.clock()

    async def set_physical_id(self, physical_id: str | None, *, commit: bool = True) -> None:
        self.physical_id = physical_id
        self.writes += 1

    async def set_data(self, data: Mapping[str, JSON]) -> None:
        self.data = dict(data)
        self.writes += 1

    async def emit(self, reason: str) -> None:
        self.events.append(reason)

    async def peer(self, name: str) -> Peer | None:
        found = self.peers.get(name)
        if found is None:
            refs = (p for p in self.peers.values() if name in (p.physical_id, p.reference_id))
            found = next(refs, None)
        return found

    async def reset_peer(self, name: str) -> None:
        """Only recorded: there is no peer plugin here to run."""
        self.resets.append(name)


class NoNestedStacks(ConvectionError):
    """A plugin asked a context without child stacks for one."""


class _NoNestedStacks:
    """``InMemoryContext.nested`` by default. Child stacks live in a store
    and are run by an engine, which a throwaway context has not; saying so
    at the first use beats a plugin failing later on a missing child."""

    def __getattr__(self, name: str) -> Any:
        raise NoNestedStacks(
            f"this InMemoryContext has no nested stacks (asked for nested.{name}): "
            "run the plugin under an engine, or pass InMemoryContext(nested=...)"
        )


_NO_NESTED: Any = _NoNestedStacks()
