"""A stack request's body, as the service's inputs.

Heat's ``InstantiationData``: ``template`` (an object, or YAML/JSON text),
``environment`` (likewise), ``files``, ``environment_files`` (names in
``files``) and ``parameters``. Which values win is Heat's rule
(``InstantiationData.environment`` in heat/api/openstack/v1/stacks.py, then
``merge_environments`` in heat/common/environment_util.py):

* without ``environment_files``, ``parameters`` are applied over the
  ``environment``'s own parameters: the request's values win;
* with ``environment_files``, the ``environment`` body is ignored (heatclient
  sends its client-side merge of those same files there); ``parameters``
  start the stack's parameters and the files are merged over them in order,
  each with its merge strategies, so a file's value wins.

Text is loaded under the names ``template`` and ``environment`` so errors
carry ``template:LINE:COLUMN``.
"""

from __future__ import annotations

import dataclasses
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
    environments, params = _environments(body, limits)
    return StackInputs(
        template=template, environments=environments, files=_files(body), parameters=params
    )


def stack_patch(body: Mapping[str, Any], limits: Limits) -> StackPatch:
    """A PATCH update's inputs: anything left out is the stored one."""
    environments, params = _environments(body, limits)
    return StackPatch(
        template=_template(body, limits),
        environments=environments,
        files=_files(body),
        parameters=params,
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
    body: Mapping[str, Any], limits: Limits
) -> tuple[tuple[Document, ...], dict[str, Any]]:
    """The environments a request gives, and the parameter values to merge
    them over (see the module's docstring)."""
    params = _object(body, "parameters")
    names = body.get("environment_files") or []
    if not isinstance(names, list):
        raise ApiError(400, "environment_files must be a list of names", "HTTPBadRequest")
    if names:
        files = _files(body)
        docs = []
        for name in names:
            text = files.get(str(name))
            if text is None:
                raise ApiError(
                    400,
                    f"environment file {name} is not in the files of the request",
                    "HTTPBadRequest",
                )
            found = _document(text, str(name), limits)
            if found is not None:
                docs.append(found)
        return tuple(docs), params
    base = _document(body.get(ENVIRONMENT), ENVIRONMENT, limits)
    if not params:
        return ((base,) if base is not None and base.data else ()), {}
    data: dict[str, Any] = dict(base.data) if base is not None else {}
    own = data.get("parameters")
    if own is None or isinstance(own, dict):  # otherwise its shape error is reported
        data["parameters"] = {**(own or {}), **params}
    if base is None:
        return (document(data, ENVIRONMENT),), {}
    return (dataclasses.replace(base, data=data),), {}


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
