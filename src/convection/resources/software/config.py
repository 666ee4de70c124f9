"""The config types: SoftwareConfig and the types Heat derives from it.

A config is data. Heat stores it through its software-config API and hands
out its id; here the config document lives in the resource's own ``data``
and the physical id is a config id, so a deployment reads the document with
``ctx.peer(config_id)`` and nothing else stores configs. Every property is
replace-only, as in Heat: a changed config is a new config with a new id,
which is what makes its deployments run again.

The document a config stores is what Heat's API returns for it
(``group, config, options, inputs, outputs, name``), checked with
:meth:`SourceConfig.from_json` at create time so a malformed input or output
declaration fails on the config, where it was written, with its path.
"""

from __future__ import annotations

import email
import json
import posixpath
import uuid
from collections.abc import Mapping
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from typing import Any, ClassVar

import yaml

from convection.common import JSON, Diagnostic, Path
from convection.hot import AllowedValues
from convection.resources._context import ResourceContext
from convection.resources._plugin import Properties, ResourceFailure, ResourcePlugin, Token
from convection.resources._schema import (
    AttributeSchema,
    AttributeType,
    PropertySchema,
    PropertyType,
)
from convection.resources.software import _schemas as s
from convection.resources.software._node import hook_registry
from convection.software import UNGROUPED, HookNotFound, InvalidConfig, SourceConfig

COMPONENT_GROUP = "component"


def config_id(ctx: ResourceContext) -> str:
    """The same id when a create is re-run after a crash, new for a replacement."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"convection:config:{ctx.physical_resource_name}"))


def stored_config(data: Mapping[str, JSON]) -> Mapping[str, JSON] | None:
    """The config document a config resource stored, if it is one."""
    doc = data.get("config")
    return doc if isinstance(doc, Mapping) else None


async def record_config(ctx: ResourceContext, doc: Mapping[str, JSON]) -> None:
    """Show the config in Heat's software config API (``ctx.software``)."""
    if ctx.software is not None and ctx.physical_id is not None:
        await ctx.software.save_config(ctx.physical_id, doc)


def property_error(ctx: ResourceContext, field: str, message: str) -> ResourceFailure:
    return ResourceFailure(
        f"Property error: resources.{ctx.resource_name}.properties.{field}: {message}"
    )


class SoftwareConfig(ResourcePlugin):
    """OS::Heat::SoftwareConfig: a script or manifest, its inputs and outputs."""

    type_name = "OS::Heat::SoftwareConfig"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "group": s.GROUP,
        "config": s.CONFIG_TEXT,
        "options": s.OPTIONS,
        "inputs": s.INPUTS,
        "outputs": s.OUTPUTS,
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "config": AttributeSchema("The config value of the software config."),
    }

    async def document(self, ctx: ResourceContext, props: Properties) -> dict[str, JSON]:
        """The config as Heat's API shows it."""
        return {
            "name": ctx.physical_resource_name,
            "group": props.get("group") or UNGROUPED,
            "config": props.get("config"),
            "options": dict(props.get("options") or {}),
            "inputs": [dict(i) for i in props.get("inputs") or []],
            "outputs": [dict(o) for o in props.get("outputs") or []],
        }

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        doc = stored_config(ctx.data)
        if ctx.physical_id is None or doc is None:
            doc = await self.document(ctx, props)
            self.check_document(ctx, doc)
            await ctx.set_data({"config": doc})
            await ctx.set_physical_id(config_id(ctx))
        # After a crash too: the row is rewritten whole, so twice is harmless.
        await record_config(ctx, doc)
        return None

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        """Heat deletes the config row with its resource."""
        if ctx.software is not None and ctx.physical_id is not None:
            await ctx.software.delete_config(ctx.physical_id)
        return None

    def check_document(self, ctx: ResourceContext, doc: Mapping[str, JSON]) -> None:
        """Refuse what no deployment could run: bad declarations, a group
        no hook handles here (a component checks each part's tool)."""
        try:
            source = SourceConfig.from_json(doc)
        except InvalidConfig as exc:
            raise property_error(ctx, exc.field or "config", exc.message) from None
        for group, field in _groups(source):
            try:
                hook_registry().get(group)
            except HookNotFound as exc:
                raise property_error(ctx, field, str(exc)) from None

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        doc = stored_config(ctx.data)
        if doc is None:
            return None
        if name == "config":
            return doc.get("config")
        return None


def _groups(source: SourceConfig) -> list[tuple[str, str]]:
    if source.group != COMPONENT_GROUP:
        return [(source.group, "group")]
    parts = source.config.get("configs") if isinstance(source.config, Mapping) else None
    return [
        (str(part.get("tool")), f"configs[{n}].tool")
        for n, part in enumerate(parts or [])
        if isinstance(part, Mapping)
    ]


class StructuredConfig(SoftwareConfig):
    """OS::Heat::StructuredConfig: the config is a map, for tools that read
    YAML or JSON; StructuredDeployment substitutes ``get_input`` in it."""

    type_name = "OS::Heat::StructuredConfig"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "group": s.GROUP,
        "config": PropertySchema(
            type=PropertyType.MAP,
            description="Map representing the configuration data structure which will be "
            "serialized to JSON format.",
        ),
        "options": s.OPTIONS,
        "inputs": s.INPUTS,
        "outputs": s.OUTPUTS,
    }


class SoftwareComponent(SoftwareConfig):
    """OS::Heat::SoftwareComponent: one config per lifecycle action, stored
    as group ``component`` with ``{configs: [...]}`` as Heat does."""

    type_name = "OS::Heat::SoftwareComponent"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "configs": s.COMPONENT_CONFIGS,
        "inputs": s.INPUTS,
        "outputs": s.OUTPUTS,
        "options": s.OPTIONS,
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "configs": AttributeSchema(
            "The list of configurations for the different lifecycle actions of the "
            "represented software component.",
            AttributeType.LIST,
        ),
    }

    @classmethod
    def validate_values(
        cls, values: Properties, path: Path, *, strict: bool, stack_timeout: float | None
    ) -> list[Diagnostic]:
        seen: set[str] = set()
        configs = values.get("configs")
        for n, part in enumerate(configs if isinstance(configs, list) else []):
            actions = part.get("actions") if isinstance(part, Mapping) else None
            if not isinstance(actions, list):
                continue
            if any(a in seen for a in actions if isinstance(a, str)):
                name = path[1] if len(path) > 1 else "?"
                return [
                    Diagnostic(
                        "Defining more than one configuration for the same action in "
                        f'SoftwareComponent "{name}" is not allowed.',
                        (*path, "configs", n, "actions"),
                    )
                ]
            seen.update(a for a in actions if isinstance(a, str))
        return []

    async def document(self, ctx: ResourceContext, props: Properties) -> dict[str, JSON]:
        return {
            "name": ctx.physical_resource_name,
            "group": COMPONENT_GROUP,
            "config": {"configs": [dict(c) for c in props.get("configs") or []]},
            "options": dict(props.get("options") or {}),
            "inputs": [dict(i) for i in props.get("inputs") or []],
            "outputs": [dict(o) for o in props.get("outputs") or []],
        }

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        doc = stored_config(ctx.data)
        if name != "configs" or doc is None:
            return None
        config = doc.get("config")
        return config.get("configs") if isinstance(config, Mapping) else None


class CloudConfig(SoftwareConfig):
    """OS::Heat::CloudConfig: a cloud-init ``#cloud-config`` document, as data."""

    type_name = "OS::Heat::CloudConfig"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "cloud_config": PropertySchema(
            type=PropertyType.MAP,
            description="Map representing the cloud-config data structure which will be "
            "formatted as YAML.",
        ),
    }

    async def document(self, ctx: ResourceContext, props: Properties) -> dict[str, JSON]:
        body = yaml.dump(props.get("cloud_config"), Dumper=yaml.SafeDumper)
        return {
            "name": ctx.physical_resource_name,
            "group": UNGROUPED,
            "config": "#cloud-config\n" + body,
            "options": {},
            "inputs": [],
            "outputs": [],
        }


_PART = PropertySchema(
    type=PropertyType.MAP,
    schema={
        "config": PropertySchema(
            type=PropertyType.STRING,
            description="Content of part to attach, either inline or by referencing the ID "
            "of another software config resource",
            required=True,
        ),
        "filename": PropertySchema(
            type=PropertyType.STRING, description="Optional filename to associate with part."
        ),
        "type": PropertySchema(
            type=PropertyType.STRING,
            description="Whether the part content is text or multipart.",
            default="text",
            constraints=(AllowedValues(("text", "multipart")),),
        ),
        "subtype": PropertySchema(
            type=PropertyType.STRING, description="Optional subtype to specify with the type."
        ),
    },
)


class MultipartMime(SoftwareConfig):
    """OS::Heat::MultipartMime: configs assembled into one multipart MIME
    message (cloud-init user data), as data. A part naming another config
    of the stack by its id takes that config's text; a ``multipart`` part's
    own parts are appended, as in Heat."""

    type_name = "OS::Heat::MultipartMime"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "parts": PropertySchema(
            type=PropertyType.LIST,
            description="Parts belonging to this message.",
            default=[],
            schema=_PART,
        ),
    }

    async def document(self, ctx: ResourceContext, props: Properties) -> dict[str, JSON]:
        subparts: list[MIMEText] = []
        for item in props.get("parts") or []:
            part = await _part_text(ctx, str(item.get("config") or ""))
            if item.get("type") == "multipart":
                _append_multiparts(subparts, part)
            else:
                _append_part(subparts, part, item.get("subtype"), item.get("filename"))
        message = MIMEMultipart(_subparts=subparts).as_string()
        return {
            "name": ctx.physical_resource_name,
            "group": UNGROUPED,
            "config": message,
            "options": {},
            "inputs": [],
            "outputs": [],
        }


async def _part_text(ctx: ResourceContext, ref: str) -> str:
    """The text of another config when ``ref`` is its id, else ``ref`` itself."""
    if not _uuid_like(ref):
        return ref
    peer = await ctx.peer(ref)
    doc = stored_config(peer.data) if peer is not None else None
    if doc is None:
        return ref
    value = doc.get("config")
    return value if isinstance(value, str) else json.dumps(value)


def _uuid_like(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def _append_multiparts(subparts: list[MIMEText], text: str) -> None:
    message = email.message_from_string(text)
    if not message.is_multipart():
        return
    for part in message.get_payload():
        if isinstance(part, email.message.Message):
            payload = part.get_payload()
            _append_part(
                subparts,
                payload if isinstance(payload, str) else "",
                part.get_content_subtype(),
                part.get_filename(),
            )


def _append_part(subparts: list[MIMEText], text: str, subtype: Any, filename: Any) -> None:
    if not subtype and filename:
        subtype = posixpath.splitext(str(filename))[0]
    msg = MIMEText(text, _subtype=subtype) if subtype else MIMEText(text)
    if filename:
        msg.add_header("Content-Disposition", "attachment", filename=filename)
    subparts.append(msg)
