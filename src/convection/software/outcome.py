"""What a run produced, and whether the deployment succeeded (pure).

A hook returns a :class:`DeployResult`: the declared outputs it found, the
captured stdout and stderr (tails, bounded), and the status code. Its
:meth:`~DeployResult.signal_details` is exactly what heat-agents would have
signalled back to Heat. :func:`evaluate` then applies Heat's
``signal_software_deployment`` rules to those details:

* a ``deploy_status_code`` that is set and whose ``str()`` is not ``"0"``
  fails the deployment (reason ``deploy_status_code : Deployment exited with
  non-zero status code: N``);
* every declared output present in the details becomes an output value, and
  if it is declared ``error_output: true`` its presence fails the
  deployment, with the value as the reason (``NAME : VALUE``);
* ``deploy_stdout``, ``deploy_stderr`` and ``deploy_status_code`` are
  always output values (``None`` when missing);
* reasons are joined with ``", "``; success reads ``Outputs received``.

Convection adds two things on failure: a timeout says so, and the reason
ends with the tail of stderr (at most :data:`REASON_STDERR_CHARS`), because a
failure without the error text sends the user to dig for it. Every secret
value known to the deployment is redacted from reasons.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from convection.common import JSON
from convection.software.derived import OutputDecl

COMPLETE: Final = "COMPLETE"
FAILED: Final = "FAILED"

#: The three outputs every deployment has.
STANDARD_OUTPUTS: Final = ("deploy_stdout", "deploy_stderr", "deploy_status_code")
#: At most this much of stderr's tail goes into a failure reason.
REASON_STDERR_CHARS: Final = 2000
#: At most this much of one error_output value goes into a failure reason.
REASON_VALUE_CHARS: Final = 1000
REDACTED: Final = "******"


@dataclass(frozen=True, slots=True)
class DeployResult:
    """What a hook got from running a config on a node."""

    outputs: Mapping[str, str]
    stdout: str
    stderr: str
    status_code: int
    timed_out: bool = False
    #: True when stdout or stderr was longer than the bound and only its tail was kept.
    truncated: bool = False
    #: The timeout in seconds that applied (for the reason when ``timed_out``).
    timeout: float | None = None

    def signal_details(self) -> dict[str, JSON]:
        """The body heat-agents signals back: outputs plus the three standards."""
        details: dict[str, JSON] = dict(self.outputs)
        details["deploy_stdout"] = self.stdout
        details["deploy_stderr"] = self.stderr
        details["deploy_status_code"] = self.status_code
        return details


@dataclass(frozen=True, slots=True)
class DeployOutcome:
    """A deployment's verdict: Heat's status, reason and output values."""

    status: str
    status_reason: str
    output_values: Mapping[str, JSON]
    result: DeployResult | None = None
    #: The outcome was read back from an earlier run's record, not run now.
    replayed: bool = False
    #: The hook was not run at all (a component with no part for the action).
    skipped: bool = False

    @property
    def ok(self) -> bool:
        return self.status == COMPLETE


def evaluate(
    outputs: Sequence[OutputDecl],
    details: Mapping[str, JSON],
    *,
    timed_out: bool = False,
    timeout: float | None = None,
    secrets: Collection[str] = (),
) -> tuple[str, str, dict[str, JSON]]:
    """Heat's verdict on signal ``details``: ``(status, reason, output_values)``."""
    values: dict[str, JSON] = {}
    reasons: dict[str, str] = {}
    status_code = details.get("deploy_status_code")
    if timed_out:
        reasons["deploy_status_code"] = _timeout_text(timeout, status_code)
    elif status_code and str(status_code) != "0":
        reasons["deploy_status_code"] = (
            f"Deployment exited with non-zero status code: {status_code}"
        )
    for output in outputs:
        if output.name in details:
            values[output.name] = details[output.name]
            if output.error_output:
                reasons[output.name] = _bounded(str(details[output.name]), REASON_VALUE_CHARS)
    for key in STANDARD_OUTPUTS:
        values[key] = details.get(key)
    if not reasons:
        return COMPLETE, "Outputs received", values
    reason = ", ".join(f"{k} : {v}" for k, v in reasons.items())
    stderr = details.get("deploy_stderr")
    if isinstance(stderr, str) and stderr.strip():
        reason += f"; stderr (tail): {stderr_tail(stderr)}"
    return FAILED, redact(reason, secrets), values


def _timeout_text(timeout: float | None, status_code: JSON) -> str:
    after = f" after {timeout:g} s" if timeout is not None else ""
    return f"Deployment timed out{after} and was killed (status code {status_code})"


def stderr_tail(stderr: str, limit: int = REASON_STDERR_CHARS) -> str:
    """The last ``limit`` characters of stderr, marked when cut."""
    text = stderr.rstrip()
    if len(text) <= limit:
        return text
    return "..." + text[-limit:]


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def redact(text: str, secrets: Collection[str]) -> str:
    """Replace every occurrence of every secret (longest first) in ``text``."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def outcome_of(
    result: DeployResult,
    outputs: Sequence[OutputDecl],
    *,
    secrets: Collection[str] = (),
    replayed: bool = False,
) -> DeployOutcome:
    """The outcome of a run (or of a recorded run, when ``replayed``)."""
    status, reason, values = evaluate(
        outputs,
        result.signal_details(),
        timed_out=result.timed_out,
        timeout=result.timeout,
        secrets=secrets,
    )
    return DeployOutcome(
        status=status,
        status_reason=reason,
        output_values=values,
        result=result,
        replayed=replayed,
    )
