"""Heat's ``OS::Mistral::*`` types: workflows, workflow-driven resources
and cron triggers inside a stack, over the stack's project's workflow
service (``resources.WorkflowService``), as Heat's talk to Mistral."""

from __future__ import annotations

from convection.resources.mistral.cron_trigger import MistralCronTrigger
from convection.resources.mistral.external_resource import MistralExternalResource
from convection.resources.mistral.workflow import MistralWorkflow

__all__ = ["MistralCronTrigger", "MistralExternalResource", "MistralWorkflow"]
