"""``make demo``: the main job on the embedded default.

Deploys the example stack ``examples/hello`` the way a user would from the
CLI (create, then a previewed update, each waited on with progress, then
its outputs), and validates and graphs every example template.

The store is a demo-only SQLite file in the temp directory, recreated on
each run so re-runs start clean and never touch the user's own stacks; its
``--db`` is printed so the stack can be inspected afterwards.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from convection.cli.main import run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HELLO = EXAMPLES / "hello"


def demo_db() -> str:
    """A fresh SQLite file (its WAL and shared-memory files removed too)."""
    directory = Path(tempfile.gettempdir()) / "convection-demo"
    directory.mkdir(parents=True, exist_ok=True)
    db = directory / "demo.db"
    for suffix in ("", "-wal", "-shm", "-journal"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    return f"sqlite:///{db}"


def step(title: str, args: list[str]) -> int:
    print(f"\n=== {title}\n$ convection {' '.join(args)}", flush=True)
    return run(args)


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
    print(f"\nThe stack lives in --db {db}; try:", flush=True)
    print(f"  convection --db {db} stack event list hello", flush=True)
    print(f"  convection --db {db} stack show hello", flush=True)
    return status


def check_examples() -> int:
    """Validate and graph every example, as today's template commands do."""
    status = 0
    for template in sorted(EXAMPLES.glob("*/template.yaml")):
        envs = sorted(template.parent.glob("env*.yaml"))
        args = ["template", "validate", "-t", str(template)]
        for env in envs:
            args += ["-e", str(env)]
        status |= step(f"{template.parent.name}: validate", args)
        graph = ["template", "graph", "-t", str(template), *args[4:], "--format", "mermaid"]
        status |= step(f"{template.parent.name}: dependency graph (mermaid)", graph)
    return status


def main() -> int:
    status = deploy_hello(demo_db())
    status |= check_examples()
    return status


if __name__ == "__main__":
    sys.exit(main())
