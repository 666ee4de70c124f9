"""Settings for every test.

Hypothesis times its own input generation and each example, and fails a
test that is slow. These machines have two shared, noisy cores, and the
project measures speed in ``bench/``, never in tests: a property test
must fail only on a counterexample. So the timing checks are off.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "convection",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("convection")
