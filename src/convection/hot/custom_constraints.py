"""Named checks for ``custom_constraint``.

Heat's common constraints are implemented for real. Heat's *service*
constraints (``nova.flavor``, ``glance.image``, ...) ask an OpenStack service
whether a name exists; Convection has no such service to ask, so those names
are known (a template using them validates, as in Heat) and accept any value.
A name that is neither is an error, so a typo such as ``nova.flavour`` is
caught when the template is validated rather than ignored.
"""

from __future__ import annotations

import datetime
import ipaddress
import re
import zoneinfo
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

# --- make sense without OpenStack.


def _ip_addr(value: Any) -> bool | str:
    """neutron-lib's rule: any IPv6 form, but IPv4 only as a canonical quad."""
    try:
        ip = ipaddress.ip_address(value) if isinstance(value, str) and "%" not in value else None
    except ValueError:
        ip = None
    if ip is None or (ip.version == 4 and (str(ip) != value or value.count(".") != 3)):
        return "Invalid IP address"
    return True


#: netaddr's EUI-48 spellings: 6 x 1-2 digits, 3 x 1-4 (Cisco), 2 x 5-6, bare.
_MAC = re.compile(
    r"[0-9a-f]{1,2}([:-])(?:[0-9a-f]{1,2}\1){4}[0-9a-f]{1,2}"
    r"|[0-9a-f]{1,4}([:.-])[0-9a-f]{1,4}\2[0-9a-f]{1,4}"
    r"|[0-9a-f]{5,6}[:-][0-9a-f]{5,6}|[0-9a-f]{11,12}",
    re.IGNORECASE,
)


def _mac_addr(value: Any) -> bool | str:
    if isinstance(value, str) and _MAC.fullmatch(value):
        return True
    return "Invalid MAC address."


def _net_cidr(value: Any) -> bool | str:
    if not isinstance(value, str):
        return f"'{value!r}' is not a valid IP subnet"
    try:
        iface = ipaddress.ip_interface(value)
    except ValueError:
        return f"Invalid net cidr invalid IPNetwork {value} "
    if "/" not in value or (iface.version == 4 and str(iface) != value):
        return f"'{value}' isn't a recognized IP subnet cidr, '{iface.network}' is recommended"
    return True


_ISO_8601 = re.compile(
    r"(?P<year>\d{4})(?:(?:-(?P<month_d>\d{1,2})|(?P<month>\d{2})(?!$))"
    r"(?:(?:-(?P<day_d>\d{1,2})|(?P<day>\d{2}))"
    r"(?:[ T](?P<hour>\d{2})(?::?(?P<minute>\d{2}))?"
    r"(?::?(?P<second>\d{1,2})(?:[.,]\d+)?)?"
    r"(?P<tz>Z|[-+](?P<tzh>\d{2}):?(?P<tzm>\d{2})?)?)?)?)?"
)


def _iso_8601(value: Any) -> bool | str:
    """The grammar of the iso8601 library Heat relies on, plus calendar checks."""
    m = _ISO_8601.fullmatch(value) if isinstance(value, str) else None
    if m is None:
        return ""
    g = {k: int(v) for k, v in m.groupdict().items() if v is not None and k != "tz"}
    offset = datetime.timedelta(hours=g.get("tzh", 0), minutes=g.get("tzm", 0))
    month, day = g.get("month", g.get("month_d", 1)), g.get("day", g.get("day_d", 1))
    clock = (g.get("hour", 0), g.get("minute", 0), g.get("second", 0))
    try:
        datetime.datetime(g["year"], month, day, *clock, tzinfo=datetime.timezone(offset))
    except ValueError:
        return ""
    return True


@lru_cache(maxsize=1)
def _zones() -> Mapping[str, str]:
    return {z.lower(): z for z in zoneinfo.available_timezones()}


def _timezone(value: Any) -> bool | str:
    if not value:
        return True
    if not isinstance(value, str):
        return f"Invalid timezone: {value!r}"
    if not _zones():
        return "Invalid timezone: no time zone database is available"
    return True if value.lower() in _zones() else f"Invalid timezone: {value!r}"


_BUILT_INS: dict[str, Any] = {"ip_addr": _ip_addr, "mac_addr": _mac_addr, "net_cidr": _net_cidr}
_BUILT_INS.update({"iso_8601": _iso_8601, "timezone": _timezone})

_DNS_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")


def _dns_name(value: Any, *, relative: bool = False, domain: bool = False) -> bool | str:
    if not isinstance(value, str) or not value or len(value) > 255:
        return f"'{value}' not in valid format. Reason: invalid length"
    if relative and value.endswith("."):
        return f"'{value}' is a FQDN. It should be a relative domain name."
    labels = value.rstrip(".").split(".")
    if domain and not value.endswith(".") and len(labels) < 2:
        return f"'{value}' not in valid format. Reason: needs at least two labels"
    if not all(_DNS_LABEL.fullmatch(label) for label in labels):
        return f"'{value}' not in valid format. Reason: invalid label"
    if labels[-1].isdigit():
        return f"'{value}' not in valid format. Reason: TLD cannot be all numeric"
    return True


_CRON_FIELD = re.compile(
    r"(\*|\?|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(/[0-9]+)?(,(\*|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(/[0-9]+)?)*"
)


def _cron(value: Any) -> bool | str:
    """croniter's accepted shape: five or six whitespace-separated fields."""
    fields = value.split() if isinstance(value, str) else []
    if len(fields) not in (5, 6) or not all(_CRON_FIELD.fullmatch(f) for f in fields):
        return f"Invalid CRON expression: {value}"
    return True


def _expiration(value: Any) -> bool | str:
    if _iso_8601(value) is not True:
        return f"Invalid expiration: {value}"
    text = value.replace("Z", "+00:00") if isinstance(value, str) else ""
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError:
        return True  # valid ISO 8601 that Python cannot compare; Heat would accept it
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    if when < datetime.datetime.now(datetime.UTC):
        return "Expiration time is out of date."
    return True


def _anything(value: Any) -> bool:
    return True


#: Heat's service constraints (its setup.cfg ``heat.constraints``): known, not checked.
SERVICE_CONSTRAINTS = [
    "barbican.container",
    "barbican.secret",
    "cinder.backup",
    "cinder.qos_specs",
    "cinder.snapshot",
    "cinder.volume",
    "cinder.vtype",
    "designate.domain",
    "designate.zone",
    "glance.image",
    "heat.resource_type",
    "keystone.domain",
    "keystone.group",
    "keystone.project",
    "keystone.region",
    "keystone.role",
    "keystone.service",
    "keystone.user",
    "magnum.baymodel",
    "magnum.cluster_template",
    "manila.share_network",
    "manila.share_snapshot",
    "manila.share_type",
    "mistral.workflow",
    "monasca.notification",
    "neutron.address_scope",
    "neutron.flavor",
    "neutron.flow_classifier",
    "neutron.lb.provider",
    "neutron.lbaas.listener",
    "neutron.lbaas.loadbalancer",
    "neutron.lbaas.pool",
    "neutron.lbaas.provider",
    "neutron.network",
    "neutron.port",
    "neutron.port_pair",
    "neutron.port_pair_group",
    "neutron.qos_policy",
    "neutron.router",
    "neutron.security_group",
    "neutron.segment",
    "neutron.subnet",
    "neutron.subnetpool",
    "nova.flavor",
    "nova.host",
    "nova.keypair",
    "nova.network",
    "nova.server",
    "octavia.flavor",
    "octavia.flavorprofile",
    "octavia.l7policy",
    "octavia.listener",
    "octavia.loadbalancer",
    "octavia.pool",
    "sahara.image",
    "sahara.plugin",
    "senlin.cluster",
    "senlin.policy_type",
    "senlin.profile",
    "senlin.profile_type",
    "trove.flavor",
]

_BUILT_INS.update(
    {
        "dns_name": _dns_name,
        "dns_domain": lambda v: _dns_name(v, domain=True),
        "rel_dns_name": lambda v: _dns_name(v, relative=True),
        "cron_expression": _cron,
        "expiration": _expiration,
    }
)
_BUILT_INS.update(dict.fromkeys(SERVICE_CONSTRAINTS, _anything))

#: Every built-in check by name; ``constraints`` starts its registry with them.
BUILT_INS: Mapping[str, Callable[[Any], bool | str]] = _BUILT_INS
