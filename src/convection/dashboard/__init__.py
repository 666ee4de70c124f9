"""The dashboard: pages served by the API's app, live over server-sent
events.

It calls the service layer as the APIs do and decides nothing of its own
about what is legal; its front-end dependencies come from a lockfile
(``frontend/``) and are built by ``make`` into ``static/dist``. It must
not touch the store, the kernel or the engines directly: the workflow
service's functions take the store as the ``/v2`` routes do.

* ``app``: :func:`install` mounts it on an app;
* ``session``, ``signin``: the cookie session, CSRF, signing in and out;
* ``pages``, ``actions``, ``data``: pages, form posts, ``/ui/api`` JSON
  and streams;
* ``stack_data``, ``workflow_data``, ``layout``, ``plan``, ``live``: what
  is drawn, where, and how it follows the engine.
"""

from convection.dashboard.app import install
from convection.dashboard.session import Identify, Identity

__all__ = ["Identify", "Identity", "install"]
