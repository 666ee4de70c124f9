"""The dashboard: pages served by the API's app, live over server-sent
events. Empty until issue 17 fills it.

It calls the service layer as the APIs do and decides nothing of its own
about what is legal; its front-end dependencies come from a lockfile and
are built by ``make``. It must not touch the store, the kernel or the
engines directly.
"""

__all__: list[str] = []
