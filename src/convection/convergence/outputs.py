"""Stack outputs, computed once when an operation completes and stored.

Heat used to resolve outputs on every ``stack show``, which took minutes on
large stacks; here they are resolved from stored attributes at the end of
an operation. A value that fails to resolve keeps Heat's behaviour: the
output carries ``output_error`` and the stack is still COMPLETE.

Values are stored and shown as they resolved, as Heat's
``format_stack_output`` shows them: an output the template writes is what
its author asked to see, even when it reads a hidden parameter or a
generated password (``OS::Heat::RandomString``). Hidden parameters stay
masked everywhere else (``service/views.py``).
"""

from __future__ import annotations

from typing import Any

from convection.common import ConvectionError
from convection.hot import resolve, to_data
from convection.model import StackDefinition
from convection.plan import Lookup, RecordResolver

NO_DESCRIPTION = "No description given"


def compute_outputs(
    definition: StackDefinition, lookup: Lookup, resolver: RecordResolver | None = None
) -> list[dict[str, Any]]:
    """``resolver``: the run's own, so a nested stack's ``resource_facade``
    reads its owner (Heat resolves it in outputs too)."""
    resolver = resolver or RecordResolver(definition, lookup)
    out: list[dict[str, Any]] = []
    for name, o in definition.outputs.items():
        entry: dict[str, Any] = {"output_key": name, "description": _description(o.description)}
        try:
            entry["output_value"] = resolve(o.value, resolver)
        except (ConvectionError, KeyError, TypeError, ValueError) as exc:
            entry["output_value"] = None
            entry["output_error"] = str(exc)
        out.append(entry)
    return out


def _description(value: Any) -> Any:
    data = to_data(value)
    return NO_DESCRIPTION if data is None else data
