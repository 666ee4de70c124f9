"""``make demo``: a multi-node deployment on the embedded default.

Deploys ``examples/multi-node`` the way a user would from the CLI: two
``Convection::Local::Node`` sandboxes, a web service started on one and
checked from the other, in steps ordered by ``get_attr``. It needs only
this project's Python (no database server, no sshd) and prints the
stack's outputs: the service's URL, the nodes' sandboxes and the cleanup
command.

Everything lives under ``$TMPDIR/convection-demo``: the store (a demo-only
SQLite file, so the user's own stacks are never touched) and the nodes'
sandboxes. The service outlives the demo, so a re-run first deletes the
demo stack it finds there (stopping the service and removing the
sandboxes) and then starts from a fresh store. The port is a free one
chosen at each run, so a port taken by anything else never fails the demo.
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
from pathlib import Path

from convection.cli import demo_dashboard
from convection.cli.main import run
from convection.store import SQLStore

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
HELLO = EXAMPLES / "hello"
MULTI_NODE = EXAMPLES / "multi-node"
#: The demo stack's name.
STACK = "demo"
NODE_ROOT_ENV = "CONVECTION_NODE_ROOT"


def demo_dir() -> Path:
    """Where the demo keeps its store and its nodes."""
    directory = Path(tempfile.gettempdir()) / "convection-demo"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def demo_db() -> str:
    """A fresh SQLite file (its WAL and shared-memory files removed too).
    The demo stack an earlier run left is deleted first: wiping its store
    would orphan its running service and its sandboxes."""
    demo_dashboard.stop_previous(demo_dir())
    if remove_previous() != 0:
        raise SystemExit("the earlier demo could not be deleted (see above); delete it by hand")
    db = demo_dir() / "demo.db"
    for suffix in ("", "-wal", "-shm", "-journal"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    return f"sqlite:///{db}"


def step(title: str, args: list[str]) -> int:
    print(f"\n=== {title}\n$ convection {' '.join(args)}", flush=True)
    return run(args)


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def remove_previous() -> int:
    """Delete the demo stack an earlier run left (its service is still
    running, its sandboxes still there), before the store is wiped."""
    db = demo_dir() / "demo.db"
    if not db.exists():
        return 0
    store = SQLStore(f"sqlite:///{db}")
    try:
        found = [s for s in store.list_stacks(None) if s.name == STACK]
    finally:
        store.close()
    status = 0
    for stack in found:
        delete = ["stack", "delete", STACK, "--wait", "-y"]
        where = ["--db", f"sqlite:///{db}", "--project", stack.project]
        status |= step("an earlier demo is still deployed: delete it", [*where, *delete])
    return status


def deploy_multi_node(db: str) -> int:
    """Create the multi-node stack and print its outputs (``deploy`` does)."""
    args = ["--db", db, "deploy", "-t", str(MULTI_NODE / "template.yaml")]
    args += ["--parameter", f"port={free_port()}", "--parameter", f"python={sys.executable}"]
    status = step("multi-node: create (deploy)", [*args, STACK])
    if status == 0:
        status |= step("multi-node: resources", ["--db", db, "stack", "resource", "list", STACK])
    url = stack_output(db, "url")
    if url:
        print(f"\nThe web service keeps running on the web node; reach it with:\n  curl {url}")
    print(
        f"\nThe stack lives in --db {db}; try:\n"
        f"  convection --db {db} stack output show {STACK} --all\n"
        f"  convection --db {db} stack event list {STACK}\n"
        f"  convection --db {db} stack delete {STACK} --wait -y   # stop it, remove the nodes",
        flush=True,
    )
    if status == 0:
        show_dashboard(db)
    return status


def show_dashboard(db: str) -> None:
    """Leave a server running on the demo's store, and say how to open it."""
    directory = demo_dir()
    project = stack_project(db) or "default"
    started = demo_dashboard.start(directory, db, free_port(), project)
    if started is None:
        return
    url, token = started
    pid = demo_dashboard.pid_file(directory).read_text().strip()
    print(
        f"\nThe dashboard shows the stack live; open it and sign in with this token:\n"
        f"  {url}\n"
        f"  token: {token}\n"
        f"(the server keeps running: stop it with `kill {pid}`; the next `make demo` does)",
        flush=True,
    )


def stack_project(db: str) -> str | None:
    store = SQLStore(db)
    try:
        stack = next((s for s in store.list_stacks(None) if s.name == STACK), None)
    finally:
        store.close()
    return stack.project if stack is not None else None


def stack_output(db: str, name: str) -> str | None:
    """One output of the demo stack as the engine stored it (not secret)."""
    store = SQLStore(db)
    try:
        stack = next((s for s in store.list_stacks(None) if s.name == STACK), None)
        outputs = stack.outputs if stack is not None else None
    finally:
        store.close()
    for output in outputs or ():
        if output.get("output_key") == name and isinstance(output.get("output_value"), str):
            return str(output["output_value"])
    return None


def deploy_hello(db: str) -> int:
    """Create, preview a change, apply it: what a Heat user does first."""
    files = ["-t", str(HELLO / "template.yaml"), "-e", str(HELLO / "env.yaml")]
    change = ["--parameter", "app_name=store"]
    status = step("hello: create (deploy)", ["--db", db, "deploy", *files, "hello"])
    status |= step(
        "hello: what an update would change",
        ["--db", db, "stack", "preview", "hello", *files, *change],
    )
    status |= step("hello: update (deploy)", ["--db", db, "deploy", *files, *change, "hello"])
    status |= step("hello: resources", ["--db", db, "stack", "resource", "list", "hello"])
    return status


def main() -> int:
    # The nodes live with the demo's store, not in the user's node root.
    os.environ.setdefault(NODE_ROOT_ENV, str(demo_dir() / "nodes"))
    return deploy_multi_node(demo_db())


if __name__ == "__main__":
    sys.exit(main())
