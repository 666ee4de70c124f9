"""The ``convection`` command line, mirroring ``openstack stack ...`` and
Terraform's habits (``--format``, ``--wait``, exit codes).

Each command is a module loaded only when it runs (``main.COMMANDS``,
``lazy.RootGroup``), and command modules defer the service, the store and
the engine into the functions that use them, so ``--help`` loads none of
them. Commands call the service layer (``convection.service``) or, with
``--url``, a server's API (``remote``); they decide nothing of what is
legal themselves.

Its public surface is the ``convection`` command (``main.main``, the
console script); no other package imports it.
"""

__all__: list[str] = []
