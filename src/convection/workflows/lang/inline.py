"""Mistral's inline syntax: ``std.echo output="hi" n=3`` in ``action``,
``workflow``, an ad-hoc action's ``base``, a transition (``fail msg="x"``)
and one-line ``retry`` (``count=3 delay=5``).

The rules are ``BaseSpec._parse_cmd_and_input`` (mistral/lang/base.py):

* a text without a space is a bare command and has no parameters;
* the command is the text's first word (letters, digits, ``_`` and ``.``,
  then anything up to ``=``, ``(``, a space or ``"``) or a leading YAQL or
  Jinja expression; if neither starts the text, it is an error;
* each ``key=value`` anywhere in the text is a parameter, where a value is
  a ``"..."`` or ``'...'`` string (the quotes removed, no escapes), an
  expression, a ``[...]`` list (to the *last* ``]``), ``true``, ``false``,
  ``null`` or digits (``3.5`` reads as 3); unquoted values go through
  JSON when they can (``[1, 2]`` is a list, ``true`` a boolean).

Anything else after ``key=`` (``output=hello``, ``n=-1``) is silently
dropped by Mistral; :attr:`Command.unread` names those keys so that a
caller can warn about them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Final

from convection.common import JSON, Path
from convection.workflows.lang._check import Checker

_WORD: Final = r"[\w.]+[^=(\s\"]*"
_YAQL: Final = r"<%.*?%>"
_JINJA_ANY: Final = r"{{.*}}|{%.*%}"
_COMMAND: Final = re.compile(rf"^(?:{_WORD}|{_YAQL}|{_JINJA_ANY})")

# Mistral tries Jinja's pattern before YAQL's (evaluators in name order).
_EXPRESSION: Final = r"{{.*?}}|<%.*?%>"
_VALUE: Final = "|".join(
    (r'"[^"]*"\s*', r"'[^']*'\s*", _EXPRESSION, r"\[.*\]\s*", "true", "false", "null", r"\d+")
)
_PARAM: Final = re.compile(rf"([-_\w]+)=({_VALUE})")
_KEY: Final = re.compile(r"[-_\w]+=")


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    params: dict[str, JSON] = field(default_factory=dict)
    #: Keys written ``key=`` whose value Mistral's reader does not take.
    unread: tuple[str, ...] = ()


def read_value(raw: str) -> JSON:
    """A parameter's value as Mistral reads it."""
    text = raw.strip()
    if text[0] in "\"'":
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        return text


def split_command(text: str) -> Command | None:
    """The command and its inline parameters; None when no command starts
    the text (Mistral: ``Invalid action/workflow task property``)."""
    if " " not in text:
        return Command(text)
    head = _COMMAND.match(text)
    if head is None:
        return None
    params: dict[str, JSON] = {}
    taken: list[tuple[int, int]] = []
    for found in _PARAM.finditer(text):
        params[found.group(1)] = read_value(found.group(2))
        taken.append(found.span())
    unread = _unread(text, head.end(), taken)
    return Command(head.group(), params, unread)


def _unread(text: str, start: int, taken: list[tuple[int, int]]) -> tuple[str, ...]:
    """Keys after the command that no parameter match covers."""
    out: list[str] = []
    spans = iter(taken)
    span = next(spans, None)
    for key in _KEY.finditer(text, start):
        while span is not None and span[1] <= key.start():
            span = next(spans, None)
        if span is None or key.start() < span[0]:
            out.append(key.group()[:-1])
    return tuple(out)


def unread_message(key: str) -> str:
    return (
        f"the value of {key!r} is not read (Mistral reads quoted strings, expressions, "
        "[lists], true, false, null and digits, and drops anything else): quote it"
    )


def check_params(ck: Checker, command: Command, path: Path) -> None:
    """Syntax of the parameters' expressions, and a warning for each
    parameter Mistral would drop."""
    for key, value in command.params.items():
        ck.expressions(value, path, label=f"parameter {key!r}")
    for key in command.unread:
        ck.warning(unread_message(key), path)
