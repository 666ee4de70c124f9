"""StructuredDeployment's ``get_input`` substitution (pure).

Some tools have no notion of inputs, so Heat's StructuredDeployment replaces
``{get_input: NAME}`` in a StructuredConfig's map with the input's value
before the config reaches the node. Heat's rules (``StructuredDeployment.parse``):

* a map with exactly one key, that key being the input key (``get_input``
  unless the deployment's ``input_key`` says otherwise), and a *string*
  argument is replaced by the input's value;
* an unknown input gives ``None`` under ``input_values_validate: LAX`` (the
  default) and fails under ``STRICT``;
* any other map is walked value by value (keys are never substituted), a
  list item by item; everything else, strings included, is left alone;
* a replaced value is not walked again, so an input whose value itself
  contains ``{get_input: ...}`` passes through literally.
"""

from __future__ import annotations

from collections.abc import Mapping

from convection.common import JSON
from convection.software.errors import InputMissing


def substitute_inputs(
    snippet: JSON,
    inputs: Mapping[str, JSON],
    *,
    input_key: str = "get_input",
    strict: bool = False,
) -> JSON:
    """Return ``snippet`` with every ``{input_key: name}`` replaced."""
    if isinstance(snippet, Mapping):
        if len(snippet) == 1:
            ((key, arg),) = snippet.items()
            if key == input_key and isinstance(arg, str):
                if strict and arg not in inputs:
                    raise InputMissing(arg)
                return inputs.get(arg)
        return {
            k: substitute_inputs(v, inputs, input_key=input_key, strict=strict)
            for k, v in snippet.items()
        }
    if isinstance(snippet, list | tuple):
        return [substitute_inputs(v, inputs, input_key=input_key, strict=strict) for v in snippet]
    return snippet
