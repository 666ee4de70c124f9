"""The errors an expression's evaluation raises, with Mistral's messages.

``message`` is exactly what Mistral would put in a task's ``state_info``
(``mistral/expressions/yaql_expression.py``, ``jinja_expression.py`` and
``mistral/expressions/__init__.py`` at HEAD, which no longer appends the
data context); ``path`` is where the string sits in the value evaluated.
No traceback travels with them: they are raised ``from None``.
"""

from __future__ import annotations

from typing import Final, Self

from convection.common import ExpressionError, Path

#: Mistral's ``expressions.validate`` message when one string holds both
#: languages ('jinja' is always the one found first: it is tried first).
MIXED: Final = (
    "The line already contains an expression of type 'jinja'. "
    "Mixing expression types in a single line is not allowed."
)


class EvaluationError(ExpressionError):
    """An expression could not be evaluated (Mistral's ``EvaluationException``)."""

    def located(self, path: Path) -> Self:
        """The same error, placed at ``path`` in the value being evaluated."""
        return type(self)(self.message, path)


class YaqlEvaluationError(EvaluationError):
    """Mistral's ``YaqlEvaluationException``."""


class JinjaEvaluationError(EvaluationError):
    """Mistral's ``JinjaEvaluationException``."""


class MixedExpressionError(EvaluationError):
    """One string holds YAQL and Jinja (Mistral's ``ExpressionGrammarException``)."""


def yaql_failure(expression: str, error: object) -> YaqlEvaluationError:
    return YaqlEvaluationError(
        f"Can not evaluate YAQL expression [expression={expression}, error={error}]"
    )


def jinja_failure(expression: str, error: object) -> JinjaEvaluationError:
    return JinjaEvaluationError(
        f"Can not evaluate Jinja expression [expression={expression}, error={error}]"
    )


def jinja_out_of_memory(expression: str) -> JinjaEvaluationError:
    """Mistral's message when a whole-string Jinja expression hits MemoryError."""
    return JinjaEvaluationError(
        f"Expression evaluation exceeded the available memory [expression={expression}]"
    )
