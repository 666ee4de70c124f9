"""Limits on everything a user can send.

Defaults follow Heat's (``heat/common/config.py``) where Heat has one.
"""

from __future__ import annotations

from dataclasses import dataclass

from convection.common.egress import DEFAULT_EGRESS, EgressPolicy


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    #: Heat's max_template_size: 512 KiB.
    max_template_size: int = 512 * 1024
    #: Deepest nesting of mappings and lists in one document.
    max_document_depth: int = 100
    #: Heat's max_resources_per_stack; -1 means no limit.
    max_resources_per_stack: int = 1000
    #: Heat's max_nested_stack_depth.
    max_nested_stack_depth: int = 5
    #: Heat's max_json_body_size: 1 MiB.
    max_json_body_size: int = 1024 * 1024
    #: yaql: Heat's limit_iterators and memory_quota.
    yaql_limit_iterators: int = 10000
    yaql_memory_quota: int = 100000
    #: Wall-clock budget for one yaql evaluation, in seconds.
    yaql_timeout: float = 5.0
    #: Largest output a string function may build (str_replace, list_join, repeat).
    max_value_size: int = 4 * 1024 * 1024
    #: Where actions may connect (``std.http``): carried here because
    #: limits already travel from the settings to every action's context.
    egress: EgressPolicy = DEFAULT_EGRESS


DEFAULT_LIMITS = Limits()
