"""Operations, in Python. The CLI calls these in embedded mode and the REST
API will call the same ones; nothing else decides what is legal."""

from __future__ import annotations

from typing import Any

from convection.common import DEFAULT_LIMITS, Limits
from convection.hot import validate_output
from convection.model import Compiled, StackInputs, compile_stack
from convection.resources import TypeRegistry, default_registry


def validate_template(
    inputs: StackInputs,
    *,
    registry: TypeRegistry | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[dict[str, Any], Compiled]:
    """Heat's template-validate: the body Heat's API returns, and the compiled
    stack (for warnings and graphs). Raises InvalidInput listing every error.

    As in Heat, parameter values need not be given and property values are
    not checked (``strict_validate`` off); names and references are.
    """
    catalog = (registry or default_registry()).catalog(strict=False)
    compiled = compile_stack(inputs, catalog=catalog, strict=False, limits=limits)
    template = compiled.template
    body: dict[str, Any] = {"Description": template.description or ""}
    env = compiled.environment
    body.update(
        validate_output(
            template.parameters,
            template.parameter_groups,
            supplied=env.parameters,
            parameter_defaults=env.parameter_defaults,
        )
    )
    body["Environment"] = compiled.environment.to_api()
    return body, compiled
