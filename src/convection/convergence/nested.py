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
* **batching**: a group's members are hundreds of children started in one
  engine turn. Inside an engine, the turn's child creates (and deletes) are
  queued on the :class:`NestedHub` and written in one transaction
  (``Store.start_stacks`` / ``start_traversals``) with this engine's lease
  already on their traversals, then run at once from the warm hand-over,
  with no read back. A batch the store refuses as a whole (a name already
  taken after a crash, the resource limit) goes one child at a time, the
  path that finds an existing child and says which member did not fit.

The owner's node sleeps on a timer while the child runs; when the child's
traversal ends, ``engine.nested_wake`` writes a wake for that node (in the
same transaction as the child's final state). The owner's first poll after
starting the child needs no read (it is in progress), and its poll after
the wake takes the record the child's end left on the hub.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from convection.common import JSON, Action, InvalidInput, Limits, Status
from convection.convergence.config import EngineConfig
from convection.convergence.context import short_id
from convection.convergence.hub import (
    LIMIT_ERROR,
    TOO_MANY,
    ChildRestart,
    ChildStart,
    NestedHub,
)
from convection.convergence.operations import (
    Operation,
    _new_row,
    _node_records,
    delete_operation,
    stack_event,
    start_operation,
    whole_stack_operation,
)
from convection.convergence.run import TraversalRun
from convection.convergence.view import StackView
from convection.hot import (
    Document,
    SourceMap,
    is_template_name,
)
from convection.kernel import Journal
from convection.model import (
    Compiled,
    StackDefinition,
    StackIdentity,
    StackInputs,
    child_environment,
    compile_stack,
)
from convection.plan import Action as PlanAction
from convection.plan import NodeKind, action_key, build_plan, cleanup_key, reference_id, update_key
from convection.resources import (
    ChildResource,
    ChildStack,
    ChildState,
    ResourceFailure,
    TypeRegistry,
)
from convection.store import (
    NewStack,
    ResourceRecord,
    StackExists,
    StackRecord,
    Store,
    TraversalRecord,
    TraversalStart,
)

#: The whole-stack actions an owner passes down to its child (``act``).
_WHOLE_STACK: dict[str, NodeKind] = {
    Action.SUSPEND: NodeKind.SUSPEND,
    Action.RESUME: NodeKind.RESUME,
    Action.CHECK: NodeKind.CHECK,
}


class EngineNestedStacks:
    """``ctx.nested`` for one resource of one traversal."""

    __slots__ = ("_begun", "_hub", "_name", "_outputs", "_physical_name", "_row_id", "_run")

    def __init__(self, run: TraversalRun, hub: NestedHub, row: ResourceRecord) -> None:
        self._run = run
        self._hub = hub
        self._name = row.name
        self._row_id = row.id
        #: Outputs read once per job: the engine asks for each attribute.
        self._outputs: dict[str, Mapping[str, JSON]] = {}
        #: Children whose action this job started: in progress, no read needed.
        self._begun: dict[str, ChildState] = {}
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
        if self._hub.adopt is not None:
            made = await self._create_batched(child)
            if made is not None:
                return made
        return self._create_one(child)

    async def _create_batched(self, child: ChildStack) -> str | None:
        """The child written with this turn's other child creates, in one
        transaction (``Store.start_stacks``); None when that batch could
        not be written (a name already taken after a crash, the resource
        limit), and this create must go :meth:`_create_one`'s way, which
        finds an existing child and says which member passed the limit."""
        parent = self._run.stack
        self._check_depth(parent)
        stack_id = str(uuid.uuid4())
        identity = StackIdentity(self._physical_name, stack_id, parent.project)
        compiled = self._compile(child, identity)
        start = ChildStart(
            store=self._store,
            limit=self._limits.max_resources_per_stack,
            new=self._new_stack(child, compiled, stack_id),
            definition=compiled.definition,
        )
        written = await self._hub.start_later(start)
        if not written:
            return None
        self._began(stack_id, Action.CREATE)
        return stack_id

    def _began(self, stack_id: str, action: str) -> None:
        """This job started ``action`` on the child: its first poll needs no
        read (it is in progress), and its end wakes this run's node."""
        self._begun[stack_id] = ChildState(
            action, Status.IN_PROGRESS, name=self._physical_name, project=self._run.stack.project
        )
        self._hub.began(stack_id, (self._run.id, update_key(self._name)))

    def _new_stack(self, child: ChildStack, compiled: Compiled, stack_id: str) -> NewStack:
        """Every row of a new child, as ``create_stack`` + ``start_operation``
        would write them; the store allocates the ids."""
        parent, config = self._run.stack, self._run.config
        definition = compiled.definition
        plan = build_plan(definition, [], self._run.registry, operation=Action.CREATE)
        traversal_id = str(uuid.uuid4())
        now = datetime.now(UTC)
        timeout = child.timeout_mins or parent.timeout_mins
        reason = f"Stack {Action.CREATE} started"
        record = StackRecord(
            id=stack_id,
            project=parent.project,
            name=self._physical_name,
            action=Action.CREATE,
            status=Status.IN_PROGRESS,
            status_reason=reason,
            traversal_id=traversal_id,
            parameters=dict(compiled.environment.parameters),
            timeout_mins=timeout,
            parent_id=parent.id,
            parent_resource=self._name,
            root_id=parent.root_id or parent.id,
            nested_depth=parent.nested_depth + 1,
            resource_count=len(definition.resources),
        )
        traversal = TraversalRecord(
            id=traversal_id,
            stack_id=stack_id,
            action=Action.CREATE,
            deadline=now + timedelta(minutes=config.timeout_mins(timeout)),
            started_at=now,
            lease_owner=config.owner,
            lease_until=now + timedelta(seconds=config.lease_seconds),
        )
        return NewStack(
            stack=record,
            template=dict(compiled.template.raw),
            environment=compiled.environment.env_as_dict(),
            files=dict(definition.template.files),
            resources=[
                _new_row(stack_id, definition, n.name)
                for n in plan.nodes
                if n.action is PlanAction.CREATE and n.resource_id is None
            ],
            traversal=traversal,
            nodes=_node_records(traversal_id, plan, {}),
            events=[stack_event(record, Action.CREATE, Status.IN_PROGRESS, reason)],
        )

    def _create_one(self, child: ChildStack) -> str:
        """The child's rows one call at a time, after looking for it: the
        way back after a crash (the child may exist, or only its record)."""
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
        self._began(stack_id, Action.CREATE)
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
            timeout_mins=self._run.config.timeout_mins(stack.timeout_mins),
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
        self._began(stack_id, Action.UPDATE)

    async def delete(self, stack_id: str) -> None:
        stack = self._store.get_stack_by_id(stack_id)
        if stack is None or stack.deleted_at is not None:
            return
        if (stack.action, stack.status) == (Action.DELETE, Status.IN_PROGRESS):
            return  # already deleting (a re-run)
        op = delete_operation(stack, self._store.list_resources(stack.id), self._run.config)
        self._hub.began(stack_id, (self._run.id, cleanup_key(self._row_id)))
        if self._hub.adopt is None or not await self._hub.restart_later(self._restart(op)):
            self._hub.started(start_operation(self._store, op, self._hub.warm))
        self._begun[stack_id] = ChildState(
            Action.DELETE, Status.IN_PROGRESS, name=stack.name, project=stack.project
        )

    def _restart(self, op: Operation) -> ChildRestart:
        """``op`` (a delete: no rows to allocate) as ``start_operation``
        would write it, its lease already this engine's, so that a turn's
        child deletes are written together and run without a take-up."""
        config, stack = self._run.config, op.stack
        traversal_id = str(uuid.uuid4())
        now = datetime.now(UTC)
        reason = f"Stack {op.action} started"
        fields: dict[str, Any] = {
            "action": op.action,
            "status": Status.IN_PROGRESS,
            "status_reason": reason,
            "template_id": op.template_id,
        }
        traversal = TraversalRecord(
            id=traversal_id,
            stack_id=stack.id,
            action=op.action,
            deadline=None if not op.timeout_mins else now + timedelta(minutes=op.timeout_mins),
            started_at=now,
            lease_owner=config.owner,
            lease_until=now + timedelta(seconds=config.lease_seconds),
        )
        start = TraversalStart(
            traversal=traversal,
            nodes=_node_records(traversal_id, op.plan, {}),
            stack_fields=fields,
            events=[stack_event(stack, op.action, Status.IN_PROGRESS, reason)],
        )
        started = dataclasses.replace(stack, traversal_id=traversal_id, updated_at=now, **fields)
        return ChildRestart(store=self._store, start=start, stack=started, records=list(op.stored))

    async def act(self, stack_id: str, action: str) -> None:
        """A whole-stack suspend, resume or check of the child, as
        ``Stacks`` starts one; its end wakes this owner's action node."""
        kind = _WHOLE_STACK.get(action)
        if kind is None:
            raise ResourceFailure(f"{action} is not an action a nested stack passes down")
        stack = self._child(stack_id)
        if (stack.action, stack.status) != (action, Status.IN_PROGRESS):
            stored = self._store.list_resources(stack.id)
            op = whole_stack_operation(stack, stored, kind, action, self._run.config)
            self._hub.began(stack_id, (self._run.id, action_key(kind, self._name)))
            self._hub.started(start_operation(self._store, op, self._hub.warm))
        self._begun[stack_id] = ChildState(
            action, Status.IN_PROGRESS, name=stack.name, project=stack.project
        )

    async def state(self, stack_id: str) -> ChildState | None:
        begun = self._begun.get(stack_id)
        if begun is not None:
            return begun
        stack = self._hub.recall(stack_id, keep=True)
        if stack is None:
            stack = self._store.get_stack_by_id(stack_id)
            if stack is None:
                return None
            if stack.status != Status.IN_PROGRESS:
                self._hub.remember(stack)
        return ChildState(
            stack.action, stack.status, stack.status_reason, stack.name, stack.project
        )

    async def outputs(self, stack_id: str) -> Mapping[str, JSON]:
        found = self._outputs.get(stack_id)
        if found is None:
            stack = self._hub.recall(stack_id) or self._store.get_stack_by_id(stack_id)
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
            envs = [child_environment(self._run.definition, self._name)]
            if child.environment:
                envs.append(Document("environment", dict(child.environment), SourceMap("env")))
            inputs = StackInputs(doc, tuple(envs), files, dict(child.parameters))
            return compile_stack(
                inputs,
                identity=identity,
                catalog=self._run.registry.catalog(),
                limits=self._limits,
                shared=self._hub.compiles,
                owner=self._run.stack.id,
            )
        except InvalidInput as exc:
            errors = [str(d) for d in exc.diagnostics if d.is_error] or [str(exc)]
            raise ResourceFailure("; ".join(errors[:3]), error="StackValidationFailed") from exc

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
            timeout_mins=self._run.config.timeout_mins(
                fields.get("timeout_mins", stack.timeout_mins)
            ),
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
