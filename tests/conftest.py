"""Settings for every test.

Hypothesis times its own input generation and each example, and fails a
test that is slow. These machines have two shared, noisy cores, and the
project measures speed in ``bench/``, never in tests: a property test
must fail only on a counterexample. So the timing checks are off.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "convection",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("convection")


@pytest.fixture(autouse=True, scope="session")
def _private_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The CLI's default store lives in the user's data dir; a test that
    uses the default must not read or migrate the real one (nor see what
    another checkout's newer schema left there)."""
    saved = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("xdg-data"))
    yield
    if saved is None:
        os.environ.pop("XDG_DATA_HOME", None)
    else:
        os.environ["XDG_DATA_HOME"] = saved
