// Entry point: find the page sections the server rendered and enhance them.
import "./dashboard.css";
import { startExecution } from "./execution.js";
import { startStack } from "./stack.js";
import { startStacks } from "./stacks.js";
import { startWorkflow } from "./workflow.js";

const hooks = {};
let resolveReady;
let rejectReady;
const ready = new Promise((res, rej) => {
  resolveReady = res;
  rejectReady = rej;
});
ready.catch(() => {});

window.convection = {
  get graph() {
    return hooks.graph ? hooks.graph() : null;
  },
  status: (name) => (hooks.status ? hooks.status(name) : ""),
  selectNode: (name) => (hooks.selectNode ? hooks.selectNode(name) : false),
  expand: (name) => (hooks.expand ? hooks.expand(name) : undefined),
  collapse: (name) => (hooks.collapse ? hooks.collapse(name) : undefined),
  ready,
};

function fail(section, err) {
  console.error("convection:", err);
  document.body.dataset.ready = "error";
  const g = section && section.querySelector("#graph");
  if (g) {
    const p = document.createElement("p");
    p.className = "error";
    p.setAttribute("role", "alert");
    p.textContent = `Could not load the graph: ${err && err.message ? err.message : err}`;
    g.replaceChildren(p);
  }
  rejectReady(err);
}

function start() {
  const pages = [
    ["stack-page", startStack],
    ["execution-page", startExecution],
    ["workflow-page", startWorkflow],
  ];
  for (const [id, fn] of pages) {
    const section = document.getElementById(id);
    if (!section) continue;
    let started;
    try {
      started = fn(section, hooks);
    } catch (err) {
      fail(section, err);
      return;
    }
    Promise.resolve(started).then(
      () => {
        document.body.dataset.ready = "1";
        resolveReady(window.convection);
      },
      (err) => fail(section, err),
    );
    return;
  }
  // list pages are server-rendered tables; the stack list follows the engine
  const list = document.getElementById("stacks-page");
  if (list && list.dataset.streamUrl) startStacks(list);
  document.body.dataset.ready = "1";
  resolveReady(window.convection);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
else start();
