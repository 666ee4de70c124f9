"""The egress policy (:class:`convection.common.EgressPolicy`) enforced
where connections are made: in httpcore's network backend.

Checking a URL's host before the request is not enough: the name may
resolve differently when the client connects (DNS rebinding), and a
redirect or a proxy opens another connection. So every TCP connection the
client opens, to the first host, to each redirect's and to a proxy, goes
through :class:`PolicedBackend`, which resolves the host itself, refuses
the connection if *any* address it resolves to is refused, and then
connects to one of the addresses it checked, never to the name again.
TLS still verifies the certificate against the host name (httpcore takes
the name from the request, not from the socket).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

from convection.common import EgressPolicy


class EgressRefused(Exception):
    """A connection the policy refuses (not an ``OSError``: it must not be
    retried or reported as a network failure)."""


async def checked_addresses(host: str, port: int, policy: EgressPolicy) -> list[str]:
    """Every address ``host`` resolves to, if the policy allows them all."""
    refused = policy.name_refusal(host)
    if refused is not None:
        raise EgressRefused(f"Refused to connect to {host}: {refused}")
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    for address in addresses:
        refused = policy.refusal(address, host)
        if refused is not None:
            raise EgressRefused(f"Refused to connect to {host}: {refused}")
    return addresses


class PolicedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's own backend, connecting only to checked addresses."""

    def __init__(self, policy: EgressPolicy) -> None:
        self.policy = policy
        self.inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await checked_addresses(host, port, self.policy)
        last: Exception | None = None
        for address in addresses:
            try:
                return await self.inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        raise last or httpcore.ConnectError(f"no address for {host}")

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise EgressRefused(f"Refused to connect to the unix socket {path}")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def policed(transport: httpx.AsyncHTTPTransport, policy: EgressPolicy) -> httpx.AsyncHTTPTransport:
    """``transport`` with its connections made by :class:`PolicedBackend`.

    httpx builds its httpcore pool without a backend parameter, so the
    pool's backend (which every new connection, direct or through a
    proxy, takes) is replaced here; ``test_egress`` fails if a new httpx
    moves it."""
    pool = transport._pool
    if not hasattr(pool, "_network_backend"):
        raise RuntimeError("httpx's transport has no network backend to police")
    pool._network_backend = PolicedBackend(policy)
    return transport
