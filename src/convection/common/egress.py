"""Which addresses an action may connect to: the egress policy.

A workflow's ``std.http`` runs with the engine's network position, so a
URL a user writes could reach the cloud's metadata service (credentials),
a link-local device or the engine's own loopback services. The policy is
a value here, beside :class:`~convection.common.limits.Limits` that
carries it from the settings to every action; the actions' HTTP client
(``workflows/actions/egress.py``) resolves each host and asks it about
every address before connecting, and connects to the address it asked
about.

The rules, first match wins:

1. an address in ``deny`` (``egress_deny``) is refused;
2. a loopback or unspecified address is allowed with ``allow_loopback``
   (``egress_allow_loopback``), else refused;
3. an address in ``allow`` (``egress_allow``) is allowed;
4. with ``allow`` given, every other address is refused (it is then an
   allow-list);
5. cloud-metadata and link-local addresses are refused;
6. anything else is allowed.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Final, TypeAlias

Address: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
Network: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network

#: The cloud-metadata services' addresses: AWS, GCP, Azure, OpenStack
#: (169.254.169.254), AWS over IPv6 (fd00:ec2::254), Alibaba (100.100.100.200).
METADATA: Final[frozenset[Address]] = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200")
)
#: Host names of metadata services, refused whatever they resolve to.
METADATA_NAMES: Final = frozenset({"metadata.google.internal", "metadata.goog", "metadata"})
LINK_LOCAL: Final[tuple[Network, ...]] = (
    ipaddress.ip_network("169.254.0.0/16"),
    ipaddress.ip_network("fe80::/10"),
)


def networks(text: str | None) -> tuple[str, ...]:
    """A comma- or space-separated list of CIDRs, normalised; ValueError
    for one that is not (so a typo fails at start, not at the first call)."""
    items = (text or "").replace(",", " ").split()
    return tuple(str(ipaddress.ip_network(item, strict=False)) for item in items)


def _address(text: str) -> Address:
    """The address, an IPv4-mapped IPv6 address as its IPv4 one (the
    kernel connects to the IPv4 address, so the IPv4 rules apply)."""
    address = ipaddress.ip_address(text.split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _within(address: Address, cidrs: tuple[str, ...]) -> bool:
    return any(address in ipaddress.ip_network(c) for c in cidrs)


@dataclass(frozen=True, slots=True)
class EgressPolicy:
    """Where outgoing connections may go (see the module's rules)."""

    allow_loopback: bool = False
    deny: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()

    def refusal(self, address: str, host: str = "") -> str | None:
        """Why connecting to ``address`` (resolved from ``host``) is
        refused, naming the setting that would allow it; None if allowed."""
        ip = _address(address)
        where = f"{ip} ({host})" if host and host != address else str(ip)
        if _within(ip, self.deny):
            return f"the address {where} is in egress_deny"
        if ip.is_loopback or ip.is_unspecified:
            if self.allow_loopback:
                return None
            return f"the address {where} is loopback; set egress_allow_loopback to allow it"
        if _within(ip, self.allow):
            return None
        if self.allow:
            return f"the address {where} is not in egress_allow; add it there to allow it"
        return self._builtin(ip, where)

    @staticmethod
    def _builtin(ip: Address, where: str) -> str | None:
        if ip in METADATA:
            kind = "a cloud metadata address"
        elif any(ip in n for n in LINK_LOCAL):
            kind = "link-local"
        else:
            return None
        return f"the address {where} is {kind}; add it to egress_allow to allow it"

    def name_refusal(self, host: str) -> str | None:
        """A metadata service's name is refused before it is resolved,
        unless ``egress_allow`` lets its addresses through."""
        if host.lower().rstrip(".") in METADATA_NAMES and not self.allow:
            return f"the host {host} is a cloud metadata service; add its address to egress_allow"
        return None


#: The default: metadata and link-local refused, loopback too.
DEFAULT_EGRESS: Final = EgressPolicy()
