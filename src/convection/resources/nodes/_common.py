"""What both server types share: Nova's properties, the node root, attributes.

Why accept Nova's properties at all: a template written for
``OS::Nova::Server`` with ``user_data_format: SOFTWARE_CONFIG`` should run
unchanged once ``resource_registry`` maps the type to a Convection server.
The mapped type validates the template's properties, so it must know every
name Nova knows. None of them can mean anything here (there is no image to
boot, no flavor to size), so they are accepted, allowed to change in place,
and ignored; only ``name`` is used, as the node's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from convection.common import JSON
from convection.resources import openstack_catalog
from convection.resources._schema import (
    AttributeSchema,
    AttributeType,
    PropertySchema,
    PropertyType,
)

#: Key in a server's ``data`` saying which kind of node it is.
KIND_KEY: Final = "node_kind"
LOCAL_KIND: Final = "local"
SSH_KIND: Final = "ssh"


def _nova_schema() -> dict[str, PropertySchema]:
    known = openstack_catalog.lookup("OS::Nova::Server")
    names = sorted(known.properties or {}) if known is not None else []
    return {
        name: PropertySchema(
            type=PropertyType.ANY,
            description=f"OS::Nova::Server's {name}: accepted so Nova templates validate; ignored.",
            update_allowed=True,
        )
        for name in names
        if name != "name"
    }


#: Where the node is, for the engine: jobs on it (its software deployments)
#: go to the task queue of that name, which only workers that can reach it
#: serve (``convection worker --queue site-a``).
QUEUE_PROPERTY: Final = PropertySchema(
    type=PropertyType.STRING,
    description="The task queue whose workers run this node's deployments (a site); "
    "default: the queue `default`. Used when jobs run on `convection worker`s.",
    update_allowed=True,
)

#: Nova's properties other than ``name`` (accepted and ignored), and the
#: node's ``queue``: every kind of node takes both.
NOVA_PROPERTIES: Final[Mapping[str, PropertySchema]] = {**_nova_schema(), "queue": QUEUE_PROPERTY}

NAME_PROPERTY: Final = PropertySchema(
    type=PropertyType.STRING,
    description="The node's name (Nova's server name); default: the physical resource name.",
)


def node_name(props: Mapping[str, object], physical_name: str) -> str:
    name = props.get("name")
    return name if isinstance(name, str) and name else physical_name


def server_attributes(extra: Mapping[str, AttributeSchema]) -> dict[str, AttributeSchema]:
    """Nova's useful attributes plus a type's own."""
    base = {
        "name": AttributeSchema("Name of the node.", AttributeType.STRING),
        "address": AttributeSchema(
            "The address deployments reach the node at.", AttributeType.STRING
        ),
        "first_address": AttributeSchema(
            "Nova's first_address: the node's address.", AttributeType.STRING
        ),
        "accessIPv4": AttributeSchema(
            "The node's IPv4 address, if it has one.", AttributeType.STRING
        ),
        "accessIPv6": AttributeSchema(
            "The node's IPv6 address, if it has one.", AttributeType.STRING
        ),
        "networks": AttributeSchema(
            "Nova's shape: a map of network name to the list of the node's addresses on it.",
            AttributeType.MAP,
        ),
        "addresses": AttributeSchema(
            "Nova's shape: a map of network name to a list of {addr, version}.",
            AttributeType.MAP,
        ),
        "instance_name": AttributeSchema(
            "Nova's instance_name: the node's name.", AttributeType.STRING
        ),
        "show": AttributeSchema("Detailed information about the node.", AttributeType.MAP),
    }
    base.update(extra)
    return base


def network_attributes(address: str, network: str) -> dict[str, JSON]:
    """Nova's address attributes for a node with one address on one network."""
    version = 6 if ":" in address else 4
    return {
        "address": address,
        "first_address": address,
        "accessIPv4": address if version == 4 else "",
        "accessIPv6": address if version == 6 else "",
        "networks": {network: [address]},
        "addresses": {network: [{"addr": address, "version": version}]},
    }
