"""The ``convection`` command line, mirroring ``openstack stack ...``."""
