"""A stack request's body, as the service's inputs.

Heat's ``InstantiationData``: ``template`` (an object, or YAML/JSON text),
``environment`` (likewise), ``files``, ``environment_files`` (names in
``files``, merged in order over ``environment``) and ``parameters``.
As in Heat, ``parameters`` are merged over the ``environment``'s own
parameters and the environment files then override both. Text is loaded
under the names ``template`` and ``environment`` so errors carry
``template:LINE:COLUMN``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from convection.api.errors import ApiError
from convection.common import LimitExceeded, Limits
from convection.hot import Document, load
from convection.model import StackInputs
from convection.service import StackPatch, document

TEMPLATE = "template"
ENVIRONMENT = "environment"


def stack_inputs(body: Mapping[str, Any], limits: Limits) -> StackInputs:
    """A create's or full update's inputs (a template is required)."""
    template = _template(body, limits)
    if template is None:
        raise ApiError(400, "No template specified", "HTTPBadRequest")
    params = _object(body, "parameters")
    return StackInputs(
        template=template,
        environments=_environments(body, params, limits),
        files=_files(body),
    )


def stack_patch(body: Mapping[str, Any], limits: Limits) -> StackPatch:
    """A PATCH update's inputs: anything left out is the stored one."""
    return StackPatch(
        template=_template(body, limits),
        environments=_environments(body, {}, limits),
        files=_files(body),
        parameters=_object(body, "parameters"),
    )


def clear_parameters(body: Mapping[str, Any]) -> list[str]:
    value = body.get("clear_parameters") or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ApiError(400, "clear_parameters must be a list of names", "HTTPBadRequest")
    return value


def _template(body: Mapping[str, Any], limits: Limits) -> Document | None:
    if body.get("template_url") and body.get(TEMPLATE) is None:
        raise ApiError(
            400,
            "template_url is not supported by this server; send the template itself "
            "(heatclient does when given a local file).",
            "HTTPBadRequest",
        )
    return _document(body.get(TEMPLATE), TEMPLATE, limits)


def _environments(
    body: Mapping[str, Any], params: Mapping[str, Any], limits: Limits
) -> tuple[Document, ...]:
    base = _document(body.get(ENVIRONMENT), ENVIRONMENT, limits)
    data: dict[str, Any] = dict(base.data) if base is not None else {}
    if params:
        merged = dict(data.get("parameters") or {})
        merged.update(params)
        data["parameters"] = merged
        base = document(data, ENVIRONMENT)
    docs = [base] if base is not None and (data or params) else []
    files = _files(body)
    names = body.get("environment_files") or []
    if not isinstance(names, list):
        raise ApiError(400, "environment_files must be a list of names", "HTTPBadRequest")
    for name in names:
        text = files.get(str(name))
        if text is None:
            raise ApiError(
                400, f"environment file {name} is not in the files of the request", "HTTPBadRequest"
            )
        found = _document(text, str(name), limits)
        if found is not None:
            docs.append(found)
    return tuple(docs)


def _document(value: Any, name: str, limits: Limits) -> Document | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        _check_size(len(value.encode("utf-8")), name, limits)
        return load(value, name, limits=limits)
    if isinstance(value, dict):
        _check_size(len(json.dumps(value)), name, limits)
        return document(value, name)
    raise ApiError(400, f"The {name} must be an object or a string.", "HTTPBadRequest")


def _check_size(size: int, name: str, limits: Limits) -> None:
    if size > limits.max_template_size:
        what = "Template" if name == TEMPLATE else f"The {name}"
        raise LimitExceeded.single(
            f"{what} size ({size} bytes) exceeds maximum allowed size "
            f"({limits.max_template_size} bytes)."
        )


def _files(body: Mapping[str, Any]) -> dict[str, str]:
    files = _object(body, "files")
    for key, value in files.items():
        if not isinstance(value, str):
            raise ApiError(400, f"files.{key} must be a string", "HTTPBadRequest")
    return files


def _object(body: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = body.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ApiError(400, f"{key} must be an object", "HTTPBadRequest")
    return dict(value)
