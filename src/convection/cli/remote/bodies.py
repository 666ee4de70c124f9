"""Stack inputs as the request body heatclient sends, and located errors.

The inputs are read from disk here, on the client, as heatclient reads
them (:mod:`convection.service.sources`): the template as data with its file
references rewritten to ``files`` keys, each environment file in ``files``
under its ``file://`` URL and named, in order, by ``environment_files``
(Heat merges them over ``environment``), and ``--parameter`` values as
``parameters``, which those files override, as in the embedded service.

The server only sees data, so its validation errors carry document paths
but no ``file:line:column``. When it refuses inputs the client still has
in full (a create, a preview, an update that is not ``--existing``),
:func:`located` compiles them here, with the same compiler the server
ran, to print the errors at their lines, exactly as embedded mode does;
if that compile passes (the server knows a type this process does not),
the server's own errors are shown.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from convection.common import InvalidInput, LimitExceeded, Limits

if TYPE_CHECKING:
    # The HOT language and the compiler are imported where they are used:
    # a read against a server needs neither.
    from convection.hot import Document
    from convection.model import StackInputs, TypeCatalog
    from convection.service import StackPatch


def inputs_body(inputs: StackInputs | StackPatch) -> dict[str, Any]:
    """``template``, ``files``, ``environment_files`` and ``parameters``."""
    files = dict(inputs.files)
    names = []
    for doc in inputs.environments:
        key = environment_key(doc)
        files[key] = json.dumps(doc.data)
        names.append(key)
    body: dict[str, Any] = {
        "files": files,
        "environment_files": names,
        "parameters": dict(inputs.parameters),
    }
    if inputs.template is not None:
        body["template"] = dict(inputs.template.data)
    return body


def environment_key(doc: Document) -> str:
    """An environment's ``files`` key: its file's URL, as heatclient names
    it; one made by the CLI itself (``--pre-create``) keeps its own name."""
    from convection.hot import file_url

    return doc.name if doc.name.startswith("<") else file_url(doc.name)


@dataclass(frozen=True, slots=True)
class Identity:
    """The stack a request is about, as the local compile names it
    (:class:`convection.model.StackIdentity`, made only if it is needed)."""

    name: str
    id: str
    project: str


@contextmanager
def located(
    inputs: StackInputs | StackPatch | None, identity: Identity, limits: Limits
) -> Iterator[None]:
    """Turn the server's refusal of ``inputs`` into the local compile's
    errors, which name files and lines (see the module's docstring)."""
    try:
        yield
    except LimitExceeded:
        raise
    except InvalidInput as refused:
        from convection.model import StackIdentity, StackInputs, compile_stack

        if not isinstance(inputs, StackInputs):
            raise
        stack = StackIdentity(identity.name, identity.id, identity.project)
        try:
            compile_stack(inputs, identity=stack, catalog=_catalog(), limits=limits)
        except InvalidInput as here:
            raise here from None
        raise refused from None


def _catalog() -> TypeCatalog:
    """The local type catalog (imported late: plugins load only on an error)."""
    from convection.resources import default_registry

    return default_registry().catalog()
