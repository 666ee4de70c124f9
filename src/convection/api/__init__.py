"""The Heat-compatible REST API: a thin HTTP layer over :mod:`convection.service.stacks`.

Heat's URL shapes (``/v1/{tenant_id}/stacks/...``), bodies, status codes
and error bodies, so python-heatclient and ``openstack stack`` work
unchanged. Every decision about what is legal stays in the service; this
package only translates requests into service calls and results into
Heat's JSON.
"""

from convection.api.app import create_app
from convection.api.auth import Authenticator, OpenAccess, Principal, TokenAuthenticator
from convection.api.logs import configure_logging
from convection.api.settings import ApiSettings
from convection.tokens import Role

__all__ = [
    "ApiSettings",
    "Authenticator",
    "OpenAccess",
    "Principal",
    "Role",
    "TokenAuthenticator",
    "configure_logging",
    "create_app",
]
