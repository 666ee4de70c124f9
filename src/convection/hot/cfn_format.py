"""CloudFormation-format templates, read by the same parser as HOT.

Heat reads ``AWSTemplateFormatVersion: 2010-09-09`` and
``HeatTemplateFormatVersion: 2012-12-12`` templates with classes of their own
(``heat/engine/cfn/template.py``) that share everything else with HOT
(``template_common.CommonTemplate``): the same definitions, dependencies,
conditions and outputs come out of either. Here the same holds with less
code: :func:`spell_as_hot` renames a CloudFormation document's sections and
resource and output keys to HOT's, and :mod:`convection.hot.template` parses
the result with the version's own function table. Parameters keep their
CloudFormation schema keys (``Type: String``, ``NoEcho``, ``MinLength``...),
which :mod:`convection.hot.parameters` reads.

Places stay exact: the renamed document's :class:`SpelledSourceMap` finds
each HOT path's line and column under the CloudFormation names, and the
marks it hands out carry the path as the file spells it
(``Resources.web.Properties.ImageId``), which is what a diagnostic shows.

What Heat checks in this format, and how it says so, comes from
``heat/engine/template.py`` (``validate``: every section known, every
resource a map with a ``Type``) and ``cfn/template.py`` (unknown resource
and output keys are ignored; they are warned about here).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from convection.common import Diagnostics, Mark, Path
from convection.hot.loader import Document, SourceMap
from convection.hot.stored import CFN_SECTIONS, CFN_VERSION_KEYS
from convection.hot.versions import TemplateVersion

SECTIONS = CFN_SECTIONS
#: CloudFormation resource key -> HOT resource key.
RESOURCE_KEYS = {
    "Type": "type",
    "Properties": "properties",
    "Metadata": "metadata",
    "DependsOn": "depends_on",
    "DeletionPolicy": "deletion_policy",
    "UpdatePolicy": "update_policy",
    "Description": "description",
    "Condition": "condition",
}
#: CloudFormation output key -> HOT output key.
OUTPUT_KEYS = {"Value": "value", "Description": "description", "Condition": "condition"}

_BACK_SECTIONS = {v: k for k, v in SECTIONS.items()}
_BACK_KEYS = {
    "resources": {v: k for k, v in RESOURCE_KEYS.items()},
    "outputs": {v: k for k, v in OUTPUT_KEYS.items()},
}


def cfn_path(path: Path) -> Path:
    """A HOT path as the CloudFormation document spells it."""
    if not path or not isinstance(path[0], str) or path[0] not in _BACK_SECTIONS:
        return path
    head = _BACK_SECTIONS[path[0]]
    keys = _BACK_KEYS.get(path[0])
    if keys is None or len(path) < 3 or not isinstance(path[2], str):
        return (head, *path[1:])
    return (head, path[1], keys.get(path[2], path[2]), *path[3:])


class SpelledSourceMap(SourceMap):
    """The source map of a CloudFormation document, asked with HOT paths."""

    __slots__ = ("_base",)

    def __init__(self, base: SourceMap) -> None:
        super().__init__(base.file, {})
        self._base = base

    @property
    def marks(self) -> dict[Path, tuple[int, int]]:
        return self._base.marks

    def mark(self, path: Path) -> Mark | None:
        spelled = cfn_path(path)
        found = self._base.mark(spelled)
        return None if found is None else replace(found, spelled=spelled)


def spell_as_hot(doc: Document, version: TemplateVersion, diags: Diagnostics) -> Document:
    """The document in HOT's names, for ``version`` (a CloudFormation one).

    A section the version lacks, a resource that is not a map or has no
    ``Type``, are Heat's errors; keys Heat ignores are warned about and left
    out. Whatever else is wrong is left for the HOT parser to report.
    """
    source = doc.source
    out: dict[str, Any] = {}
    for key, value in doc.data.items():
        hot = SECTIONS.get(key)
        if key in CFN_VERSION_KEYS:
            continue
        if hot is None or hot not in version.sections:
            diags.add(source.diagnostic(f"The template section is invalid: {key}", (key,)))
            continue
        if hot == "resources" and isinstance(value, dict):
            value = _resources(value, source, diags)
        elif hot == "outputs" and isinstance(value, dict):
            value = _entries(value, OUTPUT_KEYS, version.output_keys, ("Outputs",), source, diags)
        out[hot] = value
    return Document(doc.name, out, SpelledSourceMap(source), doc.warnings)


def _resources(data: dict[str, Any], source: SourceMap, diags: Diagnostics) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for name, body in data.items():
        path: Path = ("Resources", name)
        if not isinstance(body, dict):
            found = type(body).__name__
            message = f"Resources must contain Resource. Found a [<class '{found}'>] instead"
            diags.add(source.diagnostic(message, path))
        elif not body.get("Type"):
            message = "Every Resource object must contain a Type member."
            diags.add(source.diagnostic(message, path))
        else:
            kept[name] = body
    keys = frozenset(RESOURCE_KEYS.values())
    return _entries(kept, RESOURCE_KEYS, keys, ("Resources",), source, diags)


def _entries(
    data: dict[str, Any],
    names: Mapping[str, str],
    allowed: frozenset[str],
    section: Path,
    source: SourceMap,
    diags: Diagnostics,
) -> dict[str, Any]:
    """Each entry's keys renamed; a key the version lacks is left out."""
    out: dict[str, Any] = {}
    for name, body in data.items():
        if not isinstance(body, dict):
            out[name] = body  # the parser says what an entry must be
            continue
        entry: dict[str, Any] = {}
        for key, value in body.items():
            hot = names.get(key)
            if hot is None or hot not in allowed:
                path = (*section, name, key)
                diags.warning(
                    f'"{key}" is not a key Heat reads here; it is ignored', path, source.mark(path)
                )
                continue
            entry[hot] = value
        out[name] = entry
    return out
