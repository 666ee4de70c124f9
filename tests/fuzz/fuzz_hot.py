"""HOT: the loader and the function parser, through what ``template
validate`` runs (load, the service's validate with every phase of the
compiler, the graph and its renderings), then a strict compile.

The input is one template's text; the files it may name (nested templates,
``get_file``) are the fixtures' and examples' own YAML files, by name.
"""

from __future__ import annotations

import functools
import sys

import yaml
from _fuzzlib import (
    check_diagnostics,
    check_error,
    check_result,
    main,
    templates,
    yaml_files,
)

from convection.common import ConvectionError
from convection.hot import load
from convection.model import GraphFormat, StackInputs, compile_stack, render_graph
from convection.resources import default_registry
from convection.service import validate_template


@functools.cache
def _files() -> dict[str, str]:
    """Every fixture and example file by its name and by its name under its
    parent directory (``tiers/web.yaml``), as a stack's ``files`` map."""
    out: dict[str, str] = {}
    for path in yaml_files():
        text = path.read_text()
        out.setdefault(path.name, text)
        out.setdefault(f"{path.parent.name}/{path.name}", text)
    out["data.txt"] = "some data\n"
    return out


def seeds() -> list[bytes]:
    return [p.read_bytes() for p in templates()]


def one_input(data: bytes) -> None:
    # Bytes as a file gives them; then as a string a JSON body can carry
    # (its escapes decode to lone surrogates where the bytes are not UTF-8).
    for given in (data, data.decode("utf-8", "surrogateescape")):
        _one(given)


def _one(data: str | bytes) -> None:
    try:
        template = load(data, "t.yaml")
    except ConvectionError as exc:
        check_error(exc)
        return
    check_diagnostics(template.warnings)
    inputs = StackInputs(template, (), _files())
    try:
        body, compiled = validate_template(inputs)
    except ConvectionError as exc:
        check_error(exc)
    else:
        check_diagnostics(compiled.warnings)
        check_result(body)
        yaml.safe_dump(body)
        graph = compiled.graph
        if len(graph.topological_order()) != len(graph):
            raise AssertionError("the graph's order lost nodes")
        labels = {n: r.type for n, r in compiled.definition.resources.items()}
        for fmt in GraphFormat:
            render_graph(graph, fmt, labels=labels)
        template.source.mark(("resources", "r", "properties"))
    try:
        compile_stack(inputs, catalog=default_registry().catalog(strict=True))
    except ConvectionError as exc:
        check_error(exc)


if __name__ == "__main__":
    main(sys.modules[__name__])
