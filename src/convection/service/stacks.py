"""Stacks, as a Python API: the operations the CLI and the REST API call.

This is the one place that decides whether an operation is legal, and the
only caller of the store outside the engine. Each operation compiles what
it is given, plans against the stored resources, and starts a traversal;
the engine does the work (``run_engine`` / ``wait`` run it in this process).
Results are dicts with Heat's API field names, with every secret redacted.

Legality follows Heat's convergence engine: an update or a delete of a
stack that is still in progress supersedes the running operation; a
suspended or deleting stack cannot be updated; cancel needs an update (or,
without rollback, a create) in progress.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from convection.common import (
    DEFAULT_LIMITS,
    Action,
    ActionInProgress,
    ConvectionError,
    InvalidInput,
    Limits,
    NotFound,
    NotSupported,
    StackExists,
    Status,
)
from convection.convergence import (
    Definitions,
    Engine,
    EngineConfig,
    NestedHub,
    Operation,
    Warm,
    delete_operation,
    outside_traversal,
    parked,
    rollback_operation,
    start_operation,
    whole_stack_operation,
)
from convection.hot import changed_immutable, immutable_error, is_template_name
from convection.model import Compiled, StackDefinition, StackIdentity, StackInputs, compile_stack
from convection.plan import NodeKind, Plan, build_plan, preview, preview_parameters
from convection.resources import NestedStacks, TypeRegistry, default_registry
from convection.service import hooks as stack_hooks
from convection.service import signals as stack_signals
from convection.service.children import NestedPreview
from convection.service.inputs import StackPatch, patch_inputs
from convection.service.stacks_read import Dicts, StackReads
from convection.store import (
    AppendEvent,
    Change,
    ResourceRecord,
    StackRecord,
    Store,
    UpdateNode,
    UpdateResource,
    UpdateStack,
    UpdateTraversal,
)

__all__ = ["Dicts", "StackPatch", "Stacks", "StacksConfig"]

Changes = list[Change]

#: Heat's rule for the name of a stack a user creates (nested stacks are
#: named by the engine).
_STACK_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9_.-]*")


@dataclass(frozen=True, slots=True, kw_only=True)
class StacksConfig:
    limits: Limits = DEFAULT_LIMITS
    engine: EngineConfig = field(default_factory=EngineConfig)


class Stacks(StackReads):
    """The stack service over one store (reads: :class:`StackReads`)."""

    def __init__(
        self,
        store: Store,
        registry: TypeRegistry | None = None,
        *,
        config: StacksConfig | None = None,
        on_engine: Callable[[Stacks], None] | None = None,
    ) -> None:
        super().__init__(store, registry if registry is not None else default_registry())
        self.config = config or StacksConfig()
        #: Called once the engine is built: the layers above join it there
        #: (the CLI attaches workflows), and only a command that runs the
        #: engine pays for loading them.
        self._on_engine = on_engine
        self._definitions = Definitions()
        self._warm = Warm()
        self._engine: Engine | None = None

    # -- create, update, preview ---------------------------------------------

    def create(
        self,
        project: str,
        name: str,
        inputs: StackInputs,
        *,
        timeout_mins: int | None = None,
        enable_rollback: bool = False,
        tags: Sequence[str] = (),
    ) -> dict[str, Any]:
        """Start creating a stack; returns its identity (``id``, ``stack_name``)."""
        if not _STACK_NAME.fullmatch(name):
            raise InvalidInput.single(
                f'Invalid stack name {name} must contain only alphanumeric or "_-." '
                "characters, must start with alpha"
            )
        if self.store.get_stack(project, name) is not None:
            raise StackExists(f"The Stack ({name}) already exists.")
        stack_id = str(uuid.uuid4())
        compiled = self._compile(inputs, StackIdentity(name, stack_id, project))
        template_id = self._put_template(inputs, compiled, stack_id)
        stack = StackRecord(
            id=stack_id,
            project=project,
            name=name,
            action=Action.CREATE,
            status=Status.IN_PROGRESS,
            template_id=template_id,
            parameters=dict(compiled.environment.parameters),
            disable_rollback=not enable_rollback,
            timeout_mins=timeout_mins or None,  # null unless given, as in Heat
            tags=list(tags),
            resource_count=len(compiled.definition.resources),
        )
        self.store.create_stack(stack)
        plan = build_plan(compiled.definition, [], self.registry, operation=Action.CREATE)
        op = Operation(
            stack=stack,
            action=Action.CREATE,
            plan=plan,
            definition=compiled.definition,
            stored=[],
            template_id=template_id,
            rollback_enabled=enable_rollback,
            timeout_mins=self.config.engine.timeout_mins(timeout_mins),
        )
        start_operation(self.store, op, self._warm)
        return {"id": stack_id, "stack_name": name}

    def update(
        self,
        project: str,
        name_or_id: str,
        inputs: StackInputs | StackPatch | None,
        *,
        existing: bool = False,
        clear_parameters: Sequence[str] = (),
        rollback: bool | None = None,
        timeout_mins: int | None = None,
        tags: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """Start updating a stack. ``existing`` is Heat's PATCH update: the
        stored template, files, environment and parameters are reused, the
        given ones (a :class:`StackPatch` needs no template) merged over
        them, and ``clear_parameters`` dropped (see
        :func:`~convection.service.inputs.patch_inputs`). An update of a
        stack still in progress supersedes that operation."""
        stack = self._live(project, name_or_id)
        self._check_updatable(stack)
        merged = self._update_inputs(stack, inputs, existing, clear_parameters)
        identity = StackIdentity(stack.name, stack.id, stack.project)
        compiled = self._compile(merged, identity)
        self._check_immutable(stack, compiled)
        template_id = self._put_template(merged, compiled, stack.id)
        stored = self.store.list_resources(stack.id)
        plan = build_plan(
            compiled.definition,
            stored,
            self.registry,
            operation=Action.UPDATE,
            visit=stack_hooks.hooked(compiled.definition, "pre-update")
            | stack_signals.visited_on_update(compiled.definition, self.registry)
            | _template_resources(compiled.definition),
        )
        enabled = (not stack.disable_rollback) if rollback is None else rollback
        timeout = timeout_mins or stack.timeout_mins
        fields: dict[str, Any] = {
            "parameters": dict(compiled.environment.parameters),
            "disable_rollback": not enabled,
            "timeout_mins": timeout,
            "resource_count": len(compiled.definition.resources),
        }
        if tags is not None:
            fields["tags"] = list(tags)
        op = Operation(
            stack=stack,
            action=Action.UPDATE,
            plan=plan,
            definition=compiled.definition,
            stored=stored,
            template_id=template_id,
            rollback_enabled=enabled,
            timeout_mins=self.config.engine.timeout_mins(timeout),
            stack_fields=fields,
        )
        start_operation(self.store, op, self._warm)
        return {"id": stack.id, "stack_name": stack.name}

    def preview_create(self, project: str, name: str, inputs: StackInputs) -> dict[str, Dicts]:
        """What a create would do, in Heat's preview shape (all "added")."""
        changes: dict[str, Dicts] = self.preview_stack(project, name, inputs)["changes"]
        return changes

    def preview_stack(self, project: str, name: str, inputs: StackInputs) -> dict[str, Any]:
        """Heat's ``preview_stack``: the stack that a create would make, not
        stored. ``changes`` holds the preview buckets (all "added"),
        ``parameters`` every parameter as Heat's ``format_stack`` shows it
        (the pseudo-parameters of a stack with no id yet included, hidden
        ones masked), ``description`` the template's."""
        compiled = self._compile(inputs, StackIdentity(name, "None", project))
        plan = build_plan(compiled.definition, [], self.registry, operation=Action.CREATE)
        description = compiled.template.description or "No description"
        return {
            "changes": preview(plan, compiled.definition, [], stack_name=name),
            "parameters": preview_parameters(compiled.definition),
            "description": description,
        }

    def preview_update(
        self,
        project: str,
        name_or_id: str,
        inputs: StackInputs | StackPatch | None,
        *,
        existing: bool = False,
        clear_parameters: Sequence[str] = (),
        show_nested: bool = False,
    ) -> dict[str, Dicts]:
        """Heat's ``preview_update_stack``: unchanged, updated, replaced,
        added and deleted resources, each with the reason (a nested stack's
        owner is always updated, as Heat's ``StackResource._needs_update``
        says); with ``show_nested``, the resources of nested stacks and
        groups too (:class:`convection.service.children.NestedPreview`)."""
        stack = self._live(project, name_or_id)
        merged = self._update_inputs(stack, inputs, existing, clear_parameters)
        compiled = self._compile(merged, StackIdentity(stack.name, stack.id, stack.project))
        self._check_immutable(stack, compiled)
        stored = self.store.list_resources(stack.id)
        plan = build_plan(compiled.definition, stored, self.registry, operation=Action.UPDATE)
        out = preview(
            plan,
            compiled.definition,
            stored,
            stack_name=stack.name,
            stack_id=stack.id,
            schemas=self.registry,
        )
        if show_nested:
            nested = NestedPreview(self.store, self.registry, self.config.limits)
            nested.extend(out, plan, compiled.definition, stored, stack)
        return out

    def plan_update(
        self,
        project: str,
        name_or_id: str,
        inputs: StackInputs | StackPatch | None,
        *,
        existing: bool = False,
    ) -> Plan:
        """The plan itself (for ``--dry-run`` renderings)."""
        stack = self._live(project, name_or_id)
        merged = self._update_inputs(stack, inputs, existing, ())
        compiled = self._compile(merged, StackIdentity(stack.name, stack.id, stack.project))
        stored = self.store.list_resources(stack.id)
        return build_plan(compiled.definition, stored, self.registry, operation=Action.UPDATE)

    # -- delete, cancel, rollback, check, suspend, resume ---------------------------

    def delete(self, project: str, name_or_id: str) -> None:
        """Start deleting a stack; a running operation is superseded."""
        stack = self._live(project, name_or_id)
        stored = self.store.list_resources(stack.id)
        hooks = self._delete_hooks(stack)
        op = delete_operation(stack, stored, self.config.engine, hooks)
        start_operation(self.store, op, self._warm)

    def cancel_update(self, project: str, name_or_id: str, *, rollback: bool = True) -> None:
        """Heat's ``stack cancel``: with rollback, roll the update back now;
        without, start nothing new and let what runs finish (the stack ends
        ``<ACTION>_FAILED``, "Stack UPDATE cancelled")."""
        stack = self._live(project, name_or_id)
        allowed = (Action.UPDATE,) if rollback else (Action.UPDATE, Action.CREATE)
        if stack.status != Status.IN_PROGRESS or stack.action not in allowed:
            state = f"{stack.action}_{stack.status}"
            raise NotSupported(f"Cancelling update when stack is {state} is not supported.")
        if rollback:
            self._start_rollback(stack)
            return
        self._stop_traversal(stack, f"Stack {stack.action} cancelled")

    def rollback(self, project: str, name_or_id: str) -> None:
        """Converge back to the last template the stack reached."""
        self._start_rollback(self._live(project, name_or_id))

    def _start_rollback(self, stack: StackRecord) -> None:
        config = self.config.engine
        op = rollback_operation(self.store, self.registry, self._definitions, stack, config)
        start_operation(self.store, op, self._warm)

    def check(self, project: str, name_or_id: str) -> None:
        self._whole_stack(project, name_or_id, NodeKind.CHECK, Action.CHECK)

    def suspend(self, project: str, name_or_id: str) -> None:
        self._whole_stack(project, name_or_id, NodeKind.SUSPEND, Action.SUSPEND)

    def resume(self, project: str, name_or_id: str) -> None:
        self._whole_stack(project, name_or_id, NodeKind.RESUME, Action.RESUME)

    def mark_unhealthy(
        self,
        project: str,
        name_or_id: str,
        resource: str,
        reason: str = "",
        *,
        unhealthy: bool = True,
    ) -> None:
        """Heat's ``resource mark unhealthy``: the resource goes CHECK_FAILED
        (and is replaced by the next update); unmarking makes it
        CHECK_COMPLETE again."""
        stack = self._live(project, name_or_id)
        row = self._resource_row(stack, resource)
        if not unhealthy and not row.unhealthy and row.status != Status.FAILED:
            return
        status = Status.FAILED if unhealthy else Status.COMPLETE
        why = reason or "state changed by resource_mark_unhealthy api"
        fields = {
            "unhealthy": unhealthy,
            "action": Action.CHECK,
            "status": status,
            "status_reason": why,
        }
        event = AppendEvent.about(row, Action.CHECK, status, why)
        self.store.apply([UpdateResource(row.id, fields), event])

    def signal(self, project: str, name_or_id: str, resource: str, data: Mapping[str, Any]) -> int:
        """Deliver a signal to a resource's plugin (Heat's ``resource
        signal``); it is stored first, so it is on record even if delivery
        fails. Returns the signal's id. ``{unset_hook: <type>}`` clears a
        hook instead (:meth:`hook_clear`), whatever the resource's type."""
        if "unset_hook" in data:
            return self.hook_clear(project, name_or_id, resource, str(data["unset_hook"]))
        stack = self._live(project, name_or_id)
        row = self._resource_row(stack, resource)
        plugin_cls = self.registry.get(row.type)
        if plugin_cls is None:
            raise NotFound("Resource Type", row.type)
        stack_signals.check_signalable(plugin_cls, row)
        signal_id = self.store.add_signal(stack.id, resource, dict(data))
        workflows = self.engine.workflows
        forward = stack_signals.deliver(
            self.store, plugin_cls, stack, row, signal_id, data, self._signal_nested(stack),
            None if workflows is None else workflows(stack.project, in_engine=False),
            self._secrets(stack) if plugin_cls.signal_updates_attributes else (),
        )  # fmt: skip
        if forward is not None:
            self.signal(project, stack.id, forward.resource, forward.details)
        return signal_id

    def _secrets(self, stack: StackRecord) -> tuple[str, ...]:
        """The stack's hidden parameter texts, for a plugin that shows what
        it was given (attributes read again after a signal)."""
        if stack.template_id is None:
            return ()
        definition = self._definitions.get(self.store, self.registry, stack, stack.template_id)
        params = None if definition is None else definition.parameters
        return () if params is None else params.hidden_texts()

    def _signal_nested(self, stack: StackRecord) -> stack_signals.NestedFor:
        """``ctx.nested`` for a signalled resource (an AutoScalingGroup
        resizing on a scaling policy's signal); its child's operation is
        left in the store for the next engine."""

        def make(row: ResourceRecord) -> NestedStacks:
            definition = None
            if stack.template_id is not None:
                definition = self._definitions.get(
                    self.store, self.registry, stack, stack.template_id
                )
            hub = NestedHub(self._definitions, self._warm)
            services = (self.store, self.registry, self.config.engine)
            return outside_traversal(services, hub, stack, definition, row)

        return make

    def hook_clear(self, project: str, name_or_id: str, resource: str, hook_type: str) -> int:
        """Let a resource waiting at a hook (``pre-create``, ...) go on:
        Heat's signal ``{unset_hook: hook_type}``. The clear is recorded at
        once ("Hook pre-create is cleared"), with or without an engine
        running; the next engine wakes the resource. Fails, as Heat's
        ``InvalidBreakPointHook``, for an unknown type or a resource not
        waiting at that hook. ``resource`` may be a path into nested stacks
        (``web/3``), as heatclient's. Returns the stored signal's id."""
        stack, row = stack_hooks.resolve(self.store, self._live(project, name_or_id), resource)
        return stack_hooks.clear(self.store, stack, row, hook_type)

    # -- running the engine here ---------------------------------------------------

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = Engine(
                self.store,
                self.registry,
                dataclasses.replace(self.config.engine, limits=self.config.limits),
                definitions=self._definitions,
                warm=self._warm,
            )
            if self._on_engine is not None:
                self._on_engine(self)
        return self._engine

    def run_engine(
        self, *, until: Callable[[], bool] | None = None, timeout: float | None = None
    ) -> None:
        """Run the embedded engine until ``until()`` holds or nothing is
        active; running jobs finish before it returns."""
        work = self.engine.run(until=until)
        asyncio.run(work if timeout is None else asyncio.wait_for(work, timeout))

    def wait(
        self, stack_id: str, *, until_idle: bool = False, timeout: float | None = None
    ) -> dict[str, Any]:
        """Run the engine until the stack's operation (and any rollback it
        starts) has ended, or with ``until_idle`` until nothing is active;
        returns the stack as ``show`` does."""
        stack = self.store.get_stack_by_id(stack_id)
        if stack is None:
            raise NotFound("stack", stack_id)

        def settled() -> bool:
            if any(run.stack.id == stack_id for run in self.engine.runs.values()):
                return False  # still running here: no need to ask the store
            now = self.store.get_stack_by_id(stack_id)
            return now is None or now.status != Status.IN_PROGRESS

        self.run_engine(until=None if until_idle else settled, timeout=timeout)
        return self.show(stack.project, stack_id)

    # -- helpers ---------------------------------------------------------------------

    def _compile(self, inputs: StackInputs, identity: StackIdentity) -> Compiled:
        return compile_stack(
            inputs, identity=identity, catalog=self.registry.catalog(), limits=self.config.limits
        )

    def _put_template(self, inputs: StackInputs, compiled: Compiled, stack_id: str) -> int:
        environment = compiled.environment.env_as_dict()
        template_id = self.store.put_template(
            dict(inputs.template.data), environment, dict(inputs.files)
        )
        self._definitions.put(template_id, stack_id, compiled.definition)
        self._remember_head(template_id, inputs.template.data, environment)
        return template_id

    def _delete_hooks(self, stack: StackRecord) -> StackDefinition | None:
        """The stack's definition when its environment sets hooks: a delete
        reads pre- and post-delete hooks from it. Otherwise None, as a
        delete needs no definition and compiling one costs."""
        if stack.template_id is None:
            return None
        if not stack_hooks.sets_hooks(self.store.get_template(stack.template_id).environment):
            return None
        try:
            return self._definitions.get(self.store, self.registry, stack, stack.template_id)
        except ConvectionError:
            return None  # a template that no longer compiles: delete without hooks

    def _check_updatable(self, stack: StackRecord) -> None:
        if stack.action == Action.SUSPEND:
            raise NotSupported("Updating a stack when it is suspended is not supported.")
        if stack.action == Action.DELETE:
            raise NotSupported("Updating a stack when it is deleting is not supported.")

    def _check_immutable(self, stack: StackRecord, compiled: Compiled) -> None:
        new = compiled.definition.parameters
        if stack.template_id is None or not any(new.is_immutable(n) for n in new.names()):
            return
        old = self._definitions.get(self.store, self.registry, stack, stack.template_id)
        if old is None:
            return
        changed = changed_immutable(old.parameters, new)
        if changed:
            raise InvalidInput.single(immutable_error(changed))

    def _update_inputs(
        self,
        stack: StackRecord,
        inputs: StackInputs | StackPatch | None,
        existing: bool,
        clear: Sequence[str],
    ) -> StackInputs:
        if not existing:
            if isinstance(inputs, StackPatch) and inputs.template is not None:
                inputs = StackInputs(
                    inputs.template, inputs.environments, inputs.files, inputs.parameters
                )
            if not isinstance(inputs, StackInputs):
                raise InvalidInput.single("A template is required unless the update is a PATCH")
            return inputs
        if stack.template_id is None:
            raise InvalidInput.single("The stack has no stored template to reuse")
        stored = self.store.get_template(stack.template_id)
        return patch_inputs(stored, stack.parameters, inputs, clear)

    def _whole_stack(self, project: str, name_or_id: str, kind: NodeKind, action: str) -> None:
        stack = self._live(project, name_or_id)
        if stack.status == Status.IN_PROGRESS:
            raise ActionInProgress(
                f"Stack {stack.name} already has an action ({stack.action}) in progress."
            )
        stored = self.store.list_resources(stack.id)
        op = whole_stack_operation(stack, stored, kind, action, self.config.engine)
        start_operation(self.store, op, self._warm)

    def _stop_traversal(self, stack: StackRecord, reason: str) -> None:
        """Heat's ``stop_traversal``: nothing new starts; what runs finishes.
        A resource waiting at a hook stops waiting, with Heat's event."""
        tid = stack.traversal_id
        if tid is None:
            return
        changes: Changes = [
            UpdateTraversal(tid, {"status": "CANCELLED"}),
            UpdateStack(stack.id, {"status": Status.FAILED, "status_reason": reason}),
        ]
        for node in self.store.list_nodes(tid):
            if node.state in ("waiting", "ready"):
                changes.append(UpdateNode(tid, node.key, {"state": "skipped"}))
            elif parked(node):
                changes.extend(stack_hooks.stop_waiting(self.store, stack, node))
        self.store.apply(changes)


def _template_resources(definition: StackDefinition) -> frozenset[str]:
    """Template resources: every update visits them, since their template
    file may have changed while their properties did not (the plugin then
    decides between updating the nested stack and nothing)."""
    return frozenset(
        name for name, r in definition.resources.items() if is_template_name(r.resolved_type)
    )
