"""``convection agent``: the pull agent on a server the engine cannot reach.

heat-agents' os-collect-config + 55-heat-config + heat-config-notify, in
one small loop. On each poll it reads its server's deployment metadata from
the REST API (``GET software_deployments/metadata/{server_id}``) with a
token narrowed to that server, runs every config it has not finished with
the same hooks as push mode (:func:`convection.software.deploy`, on this
machine as a :class:`~convection.software.LocalNode` rooted in its state
directory), and reports the verdict with ``PUT software_deployments/{id}``.

Runs once, across restarts: ``deploy`` writes its marker before a hook runs
and its result after, keyed by the derived config id (new for every action
of every deployment), and the agent marks a config reported only after the
API accepted the report. So a restart after the run but before the report
replays the recorded result and reports it; a restart after the report does
nothing; a restart during the run fails the deployment (the marker without
a result) unless the config says ``options: {rerun_safe: true}``.
"""

from convection.agent.client import AgentClient, AgentHttpError, endpoint
from convection.agent.runner import Agent, parse_derived
from convection.agent.state import AgentState

__all__ = ["Agent", "AgentClient", "AgentHttpError", "AgentState", "endpoint", "parse_derived"]
