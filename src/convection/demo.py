"""``make demo``: the main job on the embedded default.

Validates and graphs every example template, the way a user would from the
CLI, and prints what Convection understood of each.
"""

from __future__ import annotations

import sys
from pathlib import Path

from convection.cli.main import run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def main() -> int:
    status = 0
    for template in sorted(EXAMPLES.glob("*/template.yaml")):
        envs = sorted(template.parent.glob("env*.yaml"))
        args = ["template", "validate", "-t", str(template)]
        for env in envs:
            args += ["-e", str(env)]
        print(f"\n=== {template.parent.name}: convection {' '.join(args[:2])} ...", flush=True)
        status |= run(args)
        print(f"--- dependency graph ({template.parent.name}, mermaid)", flush=True)
        status |= run(["template", "graph", "-t", str(template), *args[4:], "--format", "mermaid"])
    return status


if __name__ == "__main__":
    sys.exit(main())
