"""The real :class:`StackOps` and :class:`SignalOps`: Convection's service
layer (``convection.service.Stacks``).

The service's calls are synchronous and short (they compile, plan and write
a traversal; the stack engine does the work), so they run on the event
loop, except ``signal``, which delivers on a loop of its own (a thread).
Service errors (``InvalidInput``, ``StackExists``, ``NotFound`` ...)
propagate; the actions turn them into failures with Heat's message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from convection.common import NotFound
from convection.hot import load
from convection.model import StackInputs
from convection.service import StackPatch, Stacks


class ServicePorts:
    """Stack operations and signals over one :class:`Stacks` service."""

    def __init__(self, stacks: Stacks) -> None:
        self._stacks = stacks

    async def create(
        self,
        project: str,
        name: str,
        template: str,
        parameters: Mapping[str, Any],
        environment: str | None,
        files: Mapping[str, str],
        timeout_mins: int | None,
    ) -> str:
        envs = (("environment", environment),) if environment else ()
        inputs = StackInputs.from_text(
            template, name="template", environments=envs, files=files, parameters=parameters
        )
        created = self._stacks.create(project, name, inputs, timeout_mins=timeout_mins)
        return str(created["id"])

    async def update(
        self,
        project: str,
        name_or_id: str,
        template: str | None,
        parameters: Mapping[str, Any],
        environment: str | None,
        files: Mapping[str, str],
    ) -> str:
        """Heat's PATCH update: what is not given is the stored one."""
        patch = StackPatch(
            template=load(template, "template") if template is not None else None,
            environments=(load(environment, "environment"),) if environment else (),
            files=files,
            parameters=parameters,
        )
        updated = self._stacks.update(project, name_or_id, patch, existing=True)
        return str(updated["id"])

    async def delete(self, project: str, name_or_id: str) -> None:
        self._stacks.delete(project, name_or_id)

    async def show(self, project: str, name_or_id: str) -> Mapping[str, Any] | None:
        try:
            return self._stacks.show(project, name_or_id)
        except NotFound:
            return None

    async def outputs(self, project: str, name_or_id: str) -> Mapping[str, Any]:
        found = self._stacks.outputs(project, name_or_id)
        return {o["output_key"]: o.get("output_value") for o in found}

    async def signal(self, project: str, stack: str, resource: str, data: Mapping[str, Any]) -> int:
        # Stacks.signal delivers on an event loop of its own (asyncio.run),
        # which cannot nest in the engine's: it runs in a thread.
        return await asyncio.to_thread(self._stacks.signal, project, stack, resource, data)
