"""Workflows as the dashboard draws them: a definition's graph, and an
execution's tasks on that graph as they run.

An execution is drawn on its workflow's graph (the text it started
with), each task node carrying the state of its latest run. A task the
execution has not reached is ``NOT_STARTED``: Mistral has no task row
for it, and no state name either, so the word is the dashboard's own.
"""

from __future__ import annotations

from typing import Any

from convection.dashboard.layout import layered
from convection.store import Store
from convection.workflows import execution_progress, stored_graph

Body = dict[str, Any]

NOT_STARTED = "NOT_STARTED"


def workflow_view(store: Store, project: str, workflow_id: str) -> Body:
    graph = stored_graph(store, project, workflow_id)
    return {
        "workflow": {"id": graph["id"], "name": graph["name"], "type": graph["type"]},
        **_drawn(graph),
    }


def _drawn(graph: Body) -> Body:
    """Nodes (tasks, then engine commands) placed by the layered layout."""
    names = [t["name"] for t in graph["tasks"]] + list(graph["commands"])
    edges = [(e["source"], e["target"]) for e in graph["edges"]]
    at = layered(names, edges)
    actions = {t["name"]: t["action"] for t in graph["tasks"]}
    nodes = [
        {
            "id": n,
            "name": n,
            "action": actions.get(n, "engine command"),
            "command": n not in actions,
            "x": at[n][0],
            "y": at[n][1],
        }
        for n in names
    ]
    return {"nodes": nodes, "edges": graph["edges"]}


def execution_graph(store: Store, project: str, execution_id: str) -> Body:
    found = execution_progress(store, project, execution_id)
    graph = found["graph"] or {"tasks": [], "commands": [], "edges": []}
    drawn = _drawn(graph)
    known = {n["name"] for n in drawn["nodes"]}
    for t in found["tasks"]:  # a task the graph does not name (a changed text)
        if t["name"] not in known:
            known.add(t["name"])
            drawn["nodes"].append(
                {"id": t["name"], "name": t["name"], "action": "", "x": 0, "y": 0}
            )
    states = task_states(found["tasks"])
    for node in drawn["nodes"]:
        node.update(states.get(node["name"], _not_started()))
    return {"execution": execution_state(found["execution"]), **drawn}


def execution_changes(
    store: Store, project: str, execution_id: str, sent: dict[str, Body]
) -> Body | None:
    """The tasks whose shown state differs from ``sent`` (updated in
    place), and the execution's state if it moved; None when nothing did."""
    found = execution_progress(store, project, execution_id, graph=False)
    execution = execution_state(found["execution"])
    changed = []
    for name, shown in task_states(found["tasks"]).items():
        if sent.get(name) != shown:
            sent[name] = shown
            changed.append({"name": name, **shown})
    moved = sent.get("") != execution
    if moved:
        sent[""] = execution
    if not changed and not moved:
        return None
    return {"tasks": changed, "execution": execution}


def execution_state(body: Body) -> Body:
    return {
        "id": body["id"],
        "workflow_name": body["workflow_name"],
        "state": body["state"],
        "state_info": body["state_info"],
        "parent_task": body.get("task_execution_id"),
    }


def task_states(tasks: list[Body]) -> dict[str, Body]:
    """Each task name's latest run (a direct workflow may run a task more
    than once), with the count of runs."""
    out: dict[str, Body] = {}
    for t in tasks:  # oldest first
        runs = out[t["name"]]["runs"] + 1 if t["name"] in out else 1
        total, done = t["items_total"], t["items_done"]
        out[t["name"]] = {
            "state": t["state"],
            "state_info": t["state_info"],
            "task_id": t["id"],
            "retries": t["retries"],
            "runs": runs,
            "progress": None if total is None else f"{done}/{total}",
            "sub_execution_id": t["sub_execution_ids"][-1] if t["sub_execution_ids"] else None,
        }
    return out


def _not_started() -> Body:
    return {
        "state": NOT_STARTED,
        "state_info": None,
        "task_id": None,
        "retries": 0,
        "runs": 0,
        "progress": None,
        "sub_execution_id": None,
    }
