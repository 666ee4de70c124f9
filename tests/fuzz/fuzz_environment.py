"""Environments: each file checked (``parse_environment``), then the files
merged as Heat's server merges them (``merge_environments``), with and
without the template's parameter types, and the merge used by a stack's
compile (the registry's lookups, nested templates' registries).

The input is up to four environment files, separated by a line
``--8<--``; seeds are the fixtures' and examples' environments, alone and
in pairs from one directory.
"""

from __future__ import annotations

import functools
import sys

from _fuzzlib import (
    check_diagnostics,
    check_error,
    check_result,
    environments,
    main,
    templates,
)

from convection.common import ConvectionError, Diagnostics
from convection.hot import Document, load, merge_environments, parse_environment
from convection.model import StackInputs, compile_stack

SEPARATOR = b"\n--8<--\n"
#: Every parameter type, under names the fixtures use and some they do not.
PARAM_TYPES = {
    "p": "string",
    "n": "number",
    "l": "comma_delimited_list",
    "j": "json",
    "b": "boolean",
    "x": "CommaDelimitedList",
    "key_name": "string",
    "flavor": "string",
    "image": "string",
    "count": "number",
    "size": "number",
}


@functools.cache
def _template() -> tuple[Document, dict[str, str]]:
    """The template whose compile each merge goes through: the multi-env
    fixture, with the files beside it."""
    path = next(p for p in templates() if p.parent.name == "multienv")
    files = {p.name: p.read_text() for p in path.parent.glob("*.yaml")}
    return load(path.read_text(), path.name), files


def seeds() -> list[bytes]:
    envs = environments()
    out = [p.read_bytes() for p in envs]
    for a in envs:
        for b in envs:
            if a != b and a.parent == b.parent:
                out.append(a.read_bytes() + SEPARATOR + b.read_bytes())
    return out


def one_input(data: bytes) -> None:
    docs: list[Document] = []
    for i, part in enumerate(data.split(SEPARATOR)[:4]):
        try:
            docs.append(load(part, f"env{i}.yaml"))
        except ConvectionError as exc:
            check_error(exc)
            return
    diags = Diagnostics()
    envs = [parse_environment(doc, diags) for doc in docs]
    check_diagnostics(diags)
    if diags.has_errors:
        return
    for types in (None, PARAM_TYPES):
        merged_diags = Diagnostics()
        merged = merge_environments(
            envs, param_types=types, user_parameters={"p": "given"}, diags=merged_diags
        )
        check_diagnostics(merged_diags)
        check_result(merged.env_as_dict())
        for name in ("OS::Heat::None", "My::Type", "AWS::EC2::Instance", "x"):
            try:
                merged.resource_registry.resolve(name)
            except ConvectionError as exc:
                check_error(exc, located=False)
    template, files = _template()
    try:
        compile_stack(StackInputs(template, tuple(docs), files))
    except ConvectionError as exc:
        check_error(exc)


if __name__ == "__main__":
    main(sys.modules[__name__])
