"""Child stacks, as the engine makes them for a plugin (``ctx.nested``).

A child is a real stack in the store: its own record (linked to its owner
by ``parent_id``, ``parent_resource``, ``root_id`` and ``nested_depth``),
its own template and traversal, run by whichever engine takes it up. This
module is the engine's side of ``resources._nested.NestedStacks``:

* **compiling** a child with the owner's environment, as Heat's
  ``get_child_environment``: the registry (minus the entry that made this
  template resource, and narrowed to the owner's per-resource settings) and
  ``parameter_defaults`` reach the child; its parameters are the child's own.
* **limits**: ``max_nested_stack_depth`` (with the chain of templates named
  when a template includes itself) and ``max_resources_per_stack`` over the
  whole tree, kept as a running total on the root (one conditional UPDATE
  per child, never a recount of the tree).
* **idempotence**: a child is named ``<stack>-<resource>-<shortid>``, stable
  for the resource version, so a create run again after a crash finds it.

The owner's node sleeps on a timer while the child runs; when the child's
traversal ends, ``engine.nested_wake`` writes a wake for that node.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from convection.compiler import Compiled, StackIdentity, StackInputs, compile_stack
from convection.definition import StackDefinition
from convection.engine.config import EngineConfig
from convection.engine.context import short_id
from convection.engine.journal import Journal
from convection.engine.operations import Operation, Warm, start_operation
from convection.engine.run import TraversalRun
from convection.engine.templates import Definitions
from convection.engine.view import StackView
from convection.errors import InvalidInput
from convection.hot.environment import (
    EVENT_SINKS,
    PARAMETER_DEFAULTS,
    RESOURCE_REGISTRY,
    is_template_name,
)
from convection.hot.loader import Document, SourceMap, load
from convection.limits import Limits
from convection.plan import build_plan
from convection.plan.resolve import reference_id
from convection.resources._nested import ChildResource, ChildStack, ChildState
from convection.resources._plugin import ResourceFailure
from convection.resources.registry import TypeRegistry
from convection.states import Action, Status
from convection.store.api import (
    ResourceRecord,
    StackExists,
    StackRecord,
    Store,
    TraversalRecord,
)
from convection.types import JSON

#: Heat's messages (``RequestLimitExceeded``).
LIMIT_ERROR = "RequestLimitExceeded"
TOO_MANY = (
    "Request limit exceeded: You have reached the maximum resources per stack, "
    "please delete some resources."
)


@dataclass
class NestedHub:
    """What every child-stack operation of one engine shares: the compiled
    definitions cache, the warm hand-over to the walker, and a cache of
    loaded child templates by content (a group's 1,000 members share one)."""

    definitions: Definitions
    warm: Warm
    #: Called with a traversal id this engine just started (take it up now).
    started: Callable[[str], None] = lambda _tid: None
    _docs: OrderedDict[str, Document] = field(default_factory=OrderedDict)

    def document(self, template: Mapping[str, Any] | str, name: str, limits: Limits) -> Document:
        """The child's template as a loaded document, cached by content."""
        if not isinstance(template, str):
            return Document(name, dict(template), SourceMap(name))
        key = hashlib.blake2b(f"{name}\0{template}".encode(), digest_size=16).hexdigest()
        found = self._docs.get(key)
        if found is None:
            found = self._docs[key] = load(template, name, limits=limits)
            while len(self._docs) > 64:
                self._docs.popitem(last=False)
        return found


class EngineNestedStacks:
    """``ctx.nested`` for one resource of one traversal."""

    __slots__ = ("_hub", "_name", "_outputs", "_physical_name", "_run")

    def __init__(self, run: TraversalRun, hub: NestedHub, row: ResourceRecord) -> None:
        self._run = run
        self._hub = hub
        self._name = row.name
        #: Outputs read once per job: the engine asks for each attribute.
        self._outputs: dict[str, Mapping[str, JSON]] = {}
        #: The child's name: the owner's physical resource name (Heat).
        self._physical_name = f"{run.stack.name}-{row.name}-{short_id(row.stack_id, row.id)}"

    @property
    def _store(self) -> Store:
        return self._run.store

    @property
    def _limits(self) -> Limits:
        return self._run.config.limits

    # -- operations ----------------------------------------------------------------

    async def create(self, child: ChildStack) -> str:
        parent = self._run.stack
        existing = self._store.get_stack(parent.project, self._physical_name)
        if existing is not None and existing.parent_id == parent.id:
            # A re-run after a crash: the child is there. If the crash came
            # between its record and its traversal, start that now (its
            # resources were counted before the record was written).
            if existing.traversal_id is None and existing.template_id is not None:
                self._resume_create(existing)
            return existing.id
        self._check_depth(parent)
        stack_id = str(uuid.uuid4())
        identity = StackIdentity(self._physical_name, stack_id, parent.project)
        compiled = self._compile(child, identity)
        count = len(compiled.definition.resources)
        root_id = parent.root_id or parent.id
        if not self._store.reserve_resources(root_id, count, self._limits.max_resources_per_stack):
            raise ResourceFailure(TOO_MANY, error=LIMIT_ERROR)
        template_id = self._put(compiled, stack_id)
        record = StackRecord(
            id=stack_id,
            project=parent.project,
            name=self._physical_name,
            action=Action.CREATE,
            status=Status.IN_PROGRESS,
            template_id=template_id,
            parameters=dict(compiled.environment.parameters),
            timeout_mins=child.timeout_mins or parent.timeout_mins,
            parent_id=parent.id,
            parent_resource=self._name,
            root_id=root_id,
            nested_depth=parent.nested_depth + 1,
            resource_count=count,
        )
        try:
            self._store.create_stack(record)
        except StackExists:
            self._store.reserve_resources(root_id, -count, -1)
            raced = self._store.get_stack(parent.project, self._physical_name)
            if raced is None:
                raise
            return raced.id
        plan = build_plan(compiled.definition, [], self._run.registry, operation=Action.CREATE)
        self._start(record, Action.CREATE, plan, compiled, [], template_id, {})
        return stack_id

    def _resume_create(self, stack: StackRecord) -> None:
        assert stack.template_id is not None
        definition = self._hub.definitions.get(
            self._store, self._run.registry, stack, stack.template_id
        )
        assert definition is not None
        plan = build_plan(definition, [], self._run.registry, operation=Action.CREATE)
        op = Operation(
            stack=stack,
            action=Action.CREATE,
            plan=plan,
            definition=definition,
            stored=[],
            template_id=stack.template_id,
            timeout_mins=stack.timeout_mins,
        )
        self._hub.started(start_operation(self._store, op, self._hub.warm))

    async def update(self, stack_id: str, child: ChildStack) -> None:
        stack = self._child(stack_id)
        identity = StackIdentity(stack.name, stack.id, stack.project)
        compiled = self._compile(child, identity)
        count = len(compiled.definition.resources)
        root_id = stack.root_id or self._run.stack.id
        limit = self._limits.max_resources_per_stack
        if not self._store.reserve_resources(root_id, count - stack.resource_count, limit):
            raise ResourceFailure(TOO_MANY, error=LIMIT_ERROR)
        template_id = self._put(compiled, stack_id)
        stored = self._store.list_resources(stack.id)
        plan = build_plan(compiled.definition, stored, self._run.registry, operation=Action.UPDATE)
        fields = {
            "parameters": dict(compiled.environment.parameters),
            "resource_count": count,
            "timeout_mins": child.timeout_mins or stack.timeout_mins,
        }
        self._start(stack, Action.UPDATE, plan, compiled, stored, template_id, fields)

    async def delete(self, stack_id: str) -> None:
        stack = self._store.get_stack_by_id(stack_id)
        if stack is None or stack.deleted_at is not None:
            return
        if (stack.action, stack.status) == (Action.DELETE, Status.IN_PROGRESS):
            return  # already deleting (a re-run)
        stored = self._store.list_resources(stack.id)
        plan = build_plan(None, stored, operation=Action.DELETE)
        op = Operation(
            stack=stack,
            action=Action.DELETE,
            plan=plan,
            definition=None,
            stored=stored,
            template_id=stack.template_id,
            timeout_mins=stack.timeout_mins,
        )
        self._hub.started(start_operation(self._store, op, self._hub.warm))

    async def state(self, stack_id: str) -> ChildState | None:
        stack = self._store.get_stack_by_id(stack_id)
        if stack is None:
            return None
        return ChildState(stack.action, stack.status, stack.status_reason, stack.name)

    async def outputs(self, stack_id: str) -> Mapping[str, JSON]:
        found = self._outputs.get(stack_id)
        if found is None:
            stack = self._store.get_stack_by_id(stack_id)
            listed = [] if stack is None else stack.outputs
            found = {
                o["output_key"]: o.get("output_value") for o in listed if "output_error" not in o
            }
            self._outputs[stack_id] = found
        return found

    async def resources(self, stack_id: str) -> Sequence[ChildResource]:
        rows = self._store.list_resources(stack_id, current_only=True)
        return [
            ChildResource(
                name=r.name,
                type=r.type,
                action=r.action,
                status=r.status,
                physical_id=r.physical_id,
                reference_id=reference_id(r),
                attributes=r.attributes,
            )
            for r in sorted(rows, key=lambda r: r.name)
        ]

    # -- helpers ----------------------------------------------------------------------

    def _child(self, stack_id: str) -> StackRecord:
        stack = self._store.get_stack_by_id(stack_id)
        if stack is None or stack.deleted_at is not None:
            raise ResourceFailure(f"The nested stack {stack_id} does not exist")
        return stack

    def _check_depth(self, parent: StackRecord) -> None:
        """Heat's ``Recursion depth exceeds N``; when a template includes
        itself, the chain says so (found only on failure: O(depth) reads)."""
        cap = self._limits.max_nested_stack_depth
        if parent.nested_depth < cap:
            return
        chain = _template_chain(self._store, parent, self._owner_type())
        message = f"Request limit exceeded: Recursion depth exceeds {cap}."
        repeated = [t for i, t in enumerate(chain) if t in chain[:i] and is_template_name(t)]
        if repeated:
            message += f" The template {repeated[0]} includes itself: " + " -> ".join(chain) + "."
        raise ResourceFailure(message, error=LIMIT_ERROR)

    def _owner_type(self) -> str:
        definition = self._run.definition
        if definition is None or self._name not in definition.resources:
            return self._name
        return definition.resources[self._name].resolved_type

    def _compile(self, child: ChildStack, identity: StackIdentity) -> Compiled:
        definition = self._run.definition
        files = dict(definition.template.files) if definition is not None else {}
        files.update(child.files)
        name = self._owner_type() if is_template_name(self._owner_type()) else "template"
        try:
            doc = self._hub.document(child.template, name, self._limits)
            envs = [self._parent_environment()]
            if child.environment:
                envs.append(Document("environment", dict(child.environment), SourceMap("env")))
            inputs = StackInputs(doc, tuple(envs), files, dict(child.parameters))
            return compile_stack(
                inputs, identity=identity, catalog=self._run.registry.catalog(), limits=self._limits
            )
        except InvalidInput as exc:
            errors = [str(d) for d in exc.diagnostics if d.is_error] or [str(exc)]
            raise ResourceFailure("; ".join(errors[:3]), error="StackValidationFailed") from exc

    def _parent_environment(self) -> Document:
        """Heat's child environment: the owner's registry and
        parameter_defaults, never its parameters."""
        definition = self._run.definition
        if definition is None:
            return Document("environment", {}, SourceMap("environment"))
        env = definition.environment
        registry = env.resource_registry
        rdef = definition.resources.get(self._name)
        entry = None
        if rdef is not None:
            resolved = registry.resolve(rdef.type, rdef.name)
            # Only a mapping to the template is removed (``type: web.yaml``
            # written directly has no registry entry to remove).
            mapped = resolved.is_template and resolved.requested != resolved.type_name
            entry = resolved if mapped else None
        data: dict[str, Any] = {
            RESOURCE_REGISTRY: registry.for_nested(self._name, remove=entry).as_dict(),
            PARAMETER_DEFAULTS: dict(env.parameter_defaults),
        }
        if env.event_sinks:
            data[EVENT_SINKS] = [dict(s) for s in env.event_sinks]
        return Document("environment", data, SourceMap("environment"))

    def _put(self, compiled: Compiled, stack_id: str) -> int:
        template_id = self._store.put_template(
            dict(compiled.template.raw),
            compiled.environment.env_as_dict(),
            dict(compiled.definition.template.files),
        )
        self._hub.definitions.put(template_id, stack_id, compiled.definition)
        return template_id

    def _start(
        self,
        stack: StackRecord,
        action: str,
        plan: Any,
        compiled: Compiled,
        stored: Sequence[Any],
        template_id: int,
        fields: Mapping[str, Any],
    ) -> None:
        op = Operation(
            stack=stack,
            action=action,
            plan=plan,
            definition=compiled.definition,
            stored=stored,
            template_id=template_id,
            timeout_mins=fields.get("timeout_mins", stack.timeout_mins),
            stack_fields=fields,
        )
        self._hub.started(start_operation(self._store, op, self._hub.warm))


def _template_chain(store: Store, parent: StackRecord, owner_type: str) -> list[str]:
    """The owning resources' types from the root down to ``owner_type``."""
    chain = [owner_type]
    stack: StackRecord | None = parent
    while stack is not None and stack.parent_id is not None:
        owner = store.get_stack_by_id(stack.parent_id)
        if owner is None or owner.template_id is None or stack.parent_resource is None:
            break
        resources = store.get_template(owner.template_id).template.get("resources", {})
        spec = resources.get(stack.parent_resource) if isinstance(resources, dict) else None
        kind = spec.get("type") if isinstance(spec, dict) else None
        chain.insert(0, str(kind or stack.parent_resource))
        stack = owner
    return chain


def outside_traversal(
    services: tuple[Store, TypeRegistry, EngineConfig],
    hub: NestedHub,
    stack: StackRecord,
    definition: StackDefinition | None,
    row: ResourceRecord,
) -> EngineNestedStacks:
    """``ctx.nested`` for a signal, which runs outside any traversal.

    Added for the groups (brief C): Heat's AutoScalingGroup resizes its
    child when a scaling policy signals it. The child's operation is
    started in the store; whichever engine runs next takes it up. The run
    here is a stand-in carrying only what child operations read (the
    stack, its definition, the store, registry and limits).
    """
    store, registry, config = services
    traversal = TraversalRecord(id=f"signal:{stack.id}", stack_id=stack.id, action="SIGNAL")
    run = TraversalRun(
        traversal,
        stack,
        definition,
        StackView([row]),
        services=(store, Journal(store), registry, config),
    )
    run.hub = hub
    return EngineNestedStacks(run, hub, row)
