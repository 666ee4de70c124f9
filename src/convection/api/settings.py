"""What the HTTP layer itself needs to know. The template size limit is the
service's (``Settings.max_template_size`` -> ``Limits``), not repeated here."""

from __future__ import annotations

from dataclasses import dataclass

#: Heat's ``max_json_body_size`` default (bytes).
MAX_JSON_BODY_SIZE = 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiSettings:
    """Options of one API instance.

    ``run_engine`` runs the service's engine in this process for as long as
    the app lives (``convection server``); tests of the HTTP layer alone
    may switch it off. ``access_log`` writes one JSON line per request.
    """

    max_json_body_size: int = MAX_JSON_BODY_SIZE
    run_engine: bool = True
    access_log: bool = True
    #: Seconds a graceful shutdown waits for running jobs to record their outcome.
    shutdown_grace: float = 30.0
    #: Mistral's ``[api] allow_action_execution_deletion`` (off, as there):
    #: whether ``DELETE /v2/action_executions/<id>`` may delete an ended
    #: ad-hoc action execution.
    allow_action_execution_deletion: bool = False
    #: The store's URL: on PostgreSQL, the server beats its row in
    #: ``processes`` and its engine hears other processes' notices.
    store_url: str | None = None
    #: Requests a second per token (``api_rate_limit``); 0: no limit.
    #: Over it, 429 with ``Retry-After`` (:mod:`convection.api.ratelimit`).
    rate_limit: float = 0.0
    #: Requests a token may send at once before the rate applies.
    rate_limit_burst: int = 20
