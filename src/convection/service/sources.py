"""Reading stack inputs from disk, as heatclient does before it calls Heat.

This is the effectful edge of the template pipeline: it reads the template,
the environment files and every file they reference (get_file, template
resources), confined to allowed directories, and hands the pure core a
:class:`StackInputs` whose ``files`` map holds everything.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from convection.common import DEFAULT_LIMITS, Diagnostics, InvalidInput, Limits
from convection.hot import (
    Document,
    FileSource,
    SourceMap,
    collect_files,
    file_url,
    load,
    load_stack_files,
)
from convection.model import StackInputs
from convection.service.inputs import StackPatch


def parse_parameter_args(args: Sequence[str]) -> dict[str, Any]:
    """``--parameter`` as heatclient reads it: key=value, repeated keys make
    a list, and a single argument may hold several pairs separated by ';'."""
    items = list(args)
    if len(items) == 1:
        items = items[0].split(";")
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise InvalidInput.single(f"Malformed parameter({item}). Use the key=value format.")
        key, value = item.split("=", 1)
        if key not in out:
            out[key] = value
        elif isinstance(out[key], list):
            out[key].append(value)
        else:
            out[key] = [out[key], value]
    return out


def _parameter_files(args: Sequence[str], limits: Limits) -> dict[str, str]:
    out = {}
    for item in args:
        if "=" not in item:
            raise InvalidInput.single(f"Malformed parameter-file({item}). Use the key=path format.")
        key, name = item.split("=", 1)
        try:
            path = Path(name)
            if path.stat().st_size > limits.max_template_size:
                raise InvalidInput.single(
                    f"parameter file {name} is larger than {limits.max_template_size} bytes"
                )
            out[key] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise InvalidInput.single(f"cannot read parameter file {name}: {reason}") from None
    return out


def read_inputs(
    template: Path,
    environments: Sequence[Path] = (),
    parameters: Sequence[str] = (),
    parameter_files: Sequence[str] = (),
    *,
    allowed_roots: Sequence[Path] = (),
    limits: Limits = DEFAULT_LIMITS,
) -> StackInputs:
    """Read everything from disk, reporting every problem at once."""
    diags = Diagnostics()
    params = parse_parameter_args(parameters)
    params.update(_parameter_files(parameter_files, limits))
    stack_files = load_stack_files(
        template, environments, diags=diags, extra_roots=allowed_roots, limits=limits
    )
    if diags.has_errors:
        raise InvalidInput(diags)
    return StackInputs(
        template=stack_files.template,
        environments=stack_files.environments,
        files=stack_files.files,
        parameters=params,
    )


def read_patch(
    environments: Sequence[Path] = (),
    parameters: Sequence[str] = (),
    parameter_files: Sequence[str] = (),
    *,
    allowed_roots: Sequence[Path] = (),
    limits: Limits = DEFAULT_LIMITS,
) -> StackPatch:
    """What ``stack update --existing`` reads without a template: new
    environment files, every file they name (template resources in their
    registries), and new parameter values. The stored template and files
    are the service's to reuse. Reads are confined to the directories of
    the environment files (and ``allowed_roots``)."""
    params = parse_parameter_args(parameters)
    params.update(_parameter_files(parameter_files, limits))
    if not environments:
        return StackPatch(parameters=params)
    diags = Diagnostics()
    docs = [_environment(path, limits) for path in environments]
    for doc in docs:
        diags.extend(doc.warnings)
    roots = [path.resolve().parent for path in environments]
    source = FileSource(roots[0], extra_roots=[*roots[1:], *allowed_roots], limits=limits)
    empty = Document("<existing template>", {}, SourceMap("<existing template>"))
    collected = collect_files(
        empty,
        docs,
        source,
        diags=diags,
        template_url="file:///<existing template>",
        environment_urls=[file_url(p) for p in environments],
    )
    if diags.has_errors:
        raise InvalidInput(diags)
    return StackPatch(None, collected.environments, dict(collected.files), params)


def _environment(path: Path, limits: Limits) -> Document:
    try:
        if path.stat().st_size > limits.max_template_size:
            raise InvalidInput.single(
                f"environment file {path} is larger than {limits.max_template_size} bytes"
            )
        return load(path.read_bytes(), str(path), limits=limits)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise InvalidInput.single(f"cannot read environment file {path}: {reason}") from None
