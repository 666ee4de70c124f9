"""Dashboard benchmark: a big stack's page in a real browser (issue 17).

For each size, one ``convection server`` (its own process, a SQLite
store) and a stack of that many ``OS::Heat::None`` resources in chains
of 100 (so the graph has both depth and width), created from the CLI.
Debian's chromium, driven by Playwright, then measures:

* **ready**: from navigation to the graph drawn and the page answering
  (``body[data-ready="1"]``), on the completed stack, best and median
  of ``--loads``;
* **select**: from a click on a resource (``window.convection.selectNode``)
  to its panel filled from the server;
* **during create**: the page open while the stack is created, for the
  whole create: the longest main-thread task (PerformanceObserver
  ``longtask``), the frames per second, and whether the page's shown
  statuses caught up with the stack's end.

Beside them, in the same run, the peer: what Heat's own API answers for
the same stack (``GET /v1/.../resources``, which Horizon's topology
reads), against the dashboard's graph JSON (the same rows, plus layout,
edges and hooks).

Usage: .venv/bin/python bench/dashboard_bench.py [--sizes 300,10000] [--loads 3]
A benchmark, not a test: figures vary with the machine's load; only ratios
within one run hold.
"""

from __future__ import annotations

import argparse
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]  # fmt: skip
VIEWPORT = {"width": 1280, "height": 800}
CLI = [str(Path(sys.executable).parent / "convection")]
PROJECT = "default"
OBSERVE = """
window.__longest = 0; window.__frames = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
}).observe({type: "longtask", buffered: true});
const tick = () => { window.__frames++; requestAnimationFrame(tick); };
requestAnimationFrame(tick);
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def template(size: int, width: int = 100) -> str:
    lines = ["heat_template_version: 2018-08-31", "resources:"]
    for i in range(size):
        needs = f", depends_on: r{i - width}" if i >= width else ""
        lines.append(f"  r{i}: {{type: OS::Heat::None{needs}}}")
    return "\n".join(lines) + "\n"


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("CONVECTION_")}
    out.update(CONVECTION_MAX_RESOURCES_PER_STACK="-1",
               CONVECTION_MAX_TEMPLATE_SIZE=str(64 << 20),
               CONVECTION_CONFIG="/nonexistent.toml")  # fmt: skip
    return out


class Server:
    def __init__(self, work: Path) -> None:
        self.db = f"sqlite:///{work / 'stacks.db'}"
        self.url = f"http://127.0.0.1:{free_port()}"
        argv = [*CLI, "--db", self.db, "server", "--no-auth",
                "--bind", self.url.removeprefix("http://")]  # fmt: skip
        self.log = (work / "server.log").open("wb")
        self.process = subprocess.Popen(argv, stdout=self.log, stderr=self.log, env=env())
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError("the server did not start")

    def create(self, name: str, path: Path) -> None:
        """Recorded from the CLI on the same store; the server's engine runs it."""
        argv = [*CLI, "--db", self.db, "stack", "create", "-t", str(path), name]
        subprocess.run(argv, check=True, env=env(), capture_output=True)

    def status(self, name: str) -> str:
        found = httpx.get(f"{self.url}/v1/{PROJECT}/stacks/{name}", follow_redirects=True,
                          timeout=60)  # fmt: skip
        return str(found.json()["stack"]["stack_status"])

    def stack_id(self, name: str) -> str:
        found = httpx.get(f"{self.url}/v1/{PROJECT}/stacks/{name}", follow_redirects=True,
                          timeout=60)  # fmt: skip
        return str(found.json()["stack"]["id"])

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(60)
        self.log.close()


def sign_in(page: Any, url: str) -> None:
    page.goto(url + "/login")
    page.fill("#token", "bench")
    page.click("#login button[type=submit]")
    page.wait_for_url("**/stacks")


def ready_ms(page: Any, url: str) -> float:
    page.goto(url)
    page.wait_for_function("() => document.body.dataset.ready === '1'", timeout=120_000,
                           polling=10)  # fmt: skip
    return float(page.evaluate("() => performance.now()"))


def select_ms(page: Any, name: str) -> float:
    return float(page.evaluate(
        """async (n) => { const t0 = performance.now(); window.convection.selectNode(n);
             const panel = document.querySelector('#panel');
             while (panel.hidden || !panel.textContent.includes('OS::Heat::None'))
               await new Promise(r => setTimeout(r, 5));
             return performance.now() - t0; }""", name))  # fmt: skip


def timed(fn: Any, repeat: int = 5) -> float:
    found = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        found.append((time.perf_counter() - started) * 1000)
    return statistics.median(found)


def run_size(browser: Any, size: int, loads: int) -> dict[str, float | str]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        path = work / "big.yaml"
        path.write_text(template(size))
        server = Server(work)
        try:
            context = browser.new_context(viewport=VIEWPORT)
            context.add_init_script(OBSERVE)
            page = context.new_page()
            sign_in(page, server.url)
            started = time.monotonic()
            server.create("big", path)
            sid = server.stack_id("big")
            page_url = f"{server.url}/stacks/{sid}"
            first = ready_ms(page, page_url)
            frames0 = page.evaluate("() => window.__frames")
            t0 = time.monotonic()
            while server.status("big") == "CREATE_IN_PROGRESS":
                time.sleep(0.5)
            create_s = time.monotonic() - started
            done = (
                "() => document.getElementById('stack-status').dataset.status == 'CREATE_COMPLETE'"
            )
            page.wait_for_function(done, timeout=60_000)
            caught_up = time.monotonic() - t0
            fps = (page.evaluate("() => window.__frames") - frames0) / max(caught_up, 1e-9)
            longest = page.evaluate("() => window.__longest")
            last = f"r{size - 1}"
            shown = page.evaluate("(n) => window.convection.status(n)", last)
            readies = [ready_ms(page, page_url) for _ in range(loads)]
            select = statistics.median(select_ms(page, f"r{i * 37 % size}") for i in range(5))
            context.close()
            resources = f"{server.url}/v1/{PROJECT}/stacks/big/{sid}/resources"
            with httpx.Client(timeout=120) as client:
                heat = timed(lambda: client.get(resources))
            graph = _graph_ms(server.url, sid)
            return {
                "size": size, "create_s": create_s, "first_ready_ms": first,
                "ready_best_ms": min(readies), "ready_median_ms": statistics.median(readies),
                "select_ms": select, "longest_task_ms": longest, "fps": fps,
                "last_shown": shown, "heat_resources_ms": heat, "graph_json_ms": graph,
            }  # fmt: skip
        finally:
            server.stop()


def _graph_ms(url: str, sid: str) -> float:
    with httpx.Client(base_url=url, timeout=120) as client:
        form = client.get("/login").text
        csrf = form.split('name="login_csrf" value="', 1)[1].split('"', 1)[0]
        client.post("/login", data={"token": "bench", "login_csrf": csrf})
        return timed(lambda: client.get(f"/ui/api/stacks/{sid}/graph"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="300,10000")
    parser.add_argument("--loads", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as p:
        extra = ["--no-sandbox"] if os.geteuid() == 0 else []
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[*ARGS, *extra])
        for size in (int(s) for s in args.sizes.split(",")):
            rows.append(run_size(browser, size, args.loads))
        browser.close()
    print(f"# dashboard_bench on {platform.node()} ({os.cpu_count()} CPUs), "
          f"{time.strftime('%Y-%m-%d %H:%M')}")  # fmt: skip
    print(
        "\n| resources | create (s) | ready during create (ms) | ready, best / median (ms) "
        "| select → panel (ms) | longest task during create (ms) | fps during create "
        "| last node shown | Heat `resource list` (ms) | dashboard graph JSON (ms) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for r in rows:
        print(f"| {r['size']} | {r['create_s']:.1f} | {r['first_ready_ms']:.0f} "
              f"| {r['ready_best_ms']:.0f} / {r['ready_median_ms']:.0f} | {r['select_ms']:.0f} "
              f"| {r['longest_task_ms']:.0f} | {r['fps']:.1f} | {r['last_shown']} "
              f"| {r['heat_resources_ms']:.0f} | {r['graph_json_ms']:.0f} |")  # fmt: skip


if __name__ == "__main__":
    main()
