// The stack page (#stack-page): graph + resources table + panel + timeline, live.
import { debounce, getJSON, openStream } from "./api.js";
import { Graph } from "./graph.js";
import { Panel } from "./panel.js";
import { setStatusElement } from "./status.js";
import { WindowedTable } from "./table.js";
import { Timeline } from "./timeline.js";

/** Swap the page's stack id for another one in a data-*-url. */
function urlFor(template, pageStackId, stackId) {
  if (!stackId || stackId === pageStackId) return template;
  const from = `/stacks/${pageStackId}/`;
  const i = template.indexOf(from);
  if (i < 0) return template;
  return template.slice(0, i) + `/stacks/${stackId}/` + template.slice(i + from.length);
}

function rowOf(n) {
  return {
    name: n.name ?? n.id,
    type: n.type || "",
    status: n.status || "",
    hook: n.hook || null,
    reason: n.reason || "",
    physical_id: n.physical_id || "",
  };
}

export function startStack(section, api) {
  const ds = section.dataset;
  const pageStackId = ds.stackId;
  const graphEl = section.querySelector("#graph");
  const tableEl = section.querySelector("#resources");
  const panelEl = section.querySelector("#panel");
  const timeline = new Timeline(section.querySelector("#events"));
  const statusEl = document.getElementById("stack-status");
  const reasonEl = document.getElementById("stack-reason");
  let canWrite = true;
  const subs = new Map(); // expanded node id -> {stackId, stream}
  const loading = new Set();

  const graph = new Graph(graphEl, {
    kind: "stack",
    onTap: (id, node) => {
      if (node.data("nested")) toggle(id);
      select(id);
    },
  });
  const table = new WindowedTable(tableEl, {
    key: "resource",
    filterId: "resource-filter",
    label: "Resources",
    columns: [
      { key: "name", label: "Name", width: "26%" },
      { key: "type", label: "Type", width: "26%" },
      { key: "status", label: "Status", status: true, hookKey: "hook", width: "20%",
        value: (r) => (r.hook ? `PAUSED (${r.hook}) ${r.status}` : r.status) },
      { key: "reason", label: "Reason" },
    ],
    onSelect: (name) => select(name, { center: true }),
  });
  const panel = new Panel(panelEl, {
    onClose: () => {
      graph.select(null);
      table.select(null);
    },
  });
  const refreshPanelSoon = debounce(() => panel.refresh(), 400);

  /** The stack that owns a node id ("" prefix = this page's stack). */
  function ownerOf(id) {
    let best = null;
    for (const p of subs.keys()) {
      if (id.startsWith(p + "/") && (!best || p.length > best.length)) best = p;
    }
    return best ? { prefix: best + "/", stackId: subs.get(best).stackId } : { prefix: "", stackId: pageStackId };
  }

  function select(id, { center = false } = {}) {
    if (!graph.has(id) && !table.has(id)) return false;
    graph.select(id, { center });
    const owner = ownerOf(id);
    table.select(owner.prefix ? null : id);
    const raw = graph.nodeRaw(id);
    const name = raw ? String(raw.name ?? raw.id) : id.slice(owner.prefix.length);
    panel.showResource({
      id,
      name,
      resourceUrl: urlFor(ds.resourceUrl, pageStackId, owner.stackId),
      actionUrl: urlFor(ds.actionUrl, pageStackId, owner.stackId),
      canWrite,
    });
    if (!owner.prefix) history.replaceState(null, "", `#resource=${encodeURIComponent(id)}`);
    return true;
  }

  function closeSubsUnder(id) {
    for (const [p, s] of [...subs]) {
      if (p === id || p.startsWith(id + "/")) {
        s.stream.close();
        subs.delete(p);
      }
    }
  }

  async function expand(id) {
    const raw = graph.nodeRaw(id);
    if (!raw || !raw.nested || loading.has(id)) return;
    const stackId = raw.nested.stack_id;
    loading.add(id);
    try {
      const data = await getJSON(urlFor(ds.graphUrl, pageStackId, stackId));
      if (!graph.has(id)) return;
      graph.expand(id, data.nodes || [], data.edges || []);
      const prefix = id + "/";
      const old = subs.get(id);
      if (old) old.stream.close();
      const stream = openStream(urlFor(ds.streamUrl, pageStackId, stackId), {
        after: data.cursor,
        onChanges: (d) => onChanges(d, prefix),
      });
      subs.set(id, { stackId, stream });
    } catch (err) {
      console.error("convection: expanding", id, err);
    } finally {
      loading.delete(id);
    }
  }

  function collapse(id) {
    closeSubsUnder(id);
    graph.collapse(id);
  }

  function toggle(id) {
    if (graph.isExpanded(id)) collapse(id);
    else expand(id);
  }

  // A sub-stack whose topology changed: redraw its children (keeps its stream).
  const reexpandTimers = new Map();
  function refetchSub(prefix) {
    const id = prefix.slice(0, -1);
    clearTimeout(reexpandTimers.get(id));
    reexpandTimers.set(
      id,
      setTimeout(async () => {
        reexpandTimers.delete(id);
        const s = subs.get(id);
        if (!s) return;
        for (const p of [...subs.keys()]) if (p.startsWith(id + "/")) { subs.get(p).stream.close(); subs.delete(p); }
        try {
          const data = await getJSON(urlFor(ds.graphUrl, pageStackId, s.stackId));
          if (subs.get(id) === s && graph.has(id)) graph.expand(id, data.nodes || [], data.edges || []);
        } catch (err) {
          console.error("convection: refetching", id, err);
        }
      }, 800),
    );
  }

  function setHeader(stack) {
    if (!stack) return;
    if (stack.status) setStatusElement(statusEl, stack.status);
    if (reasonEl && stack.status_reason !== undefined) reasonEl.textContent = stack.status_reason || "";
  }

  async function load() {
    performance.mark("convection:fetch");
    const data = await getJSON(ds.graphUrl);
    performance.mark("convection:fetched");
    canWrite = data.can_write !== false;
    setHeader(data.stack);
    const nodes = data.nodes || [];
    table.setRows(nodes.map(rowOf));
    performance.mark("convection:table");
    const wasExpanded = [...subs.keys()].filter((k) => !k.includes("/"));
    for (const k of [...subs.keys()]) closeSubsUnder(k);
    await graph.load(nodes, data.edges || []);
    for (const id of wasExpanded) if (graph.has(id)) expand(id);
    return data;
  }

  const refetchSoon = debounce(() => {
    load().catch((err) => console.error("convection: refetching graph", err));
  }, 800);

  function onChanges(d, prefix = "") {
    for (const r of d.resources || []) {
      const id = prefix + r.name;
      if (!graph.has(id)) {
        if (prefix) refetchSub(prefix);
        else refetchSoon();
        continue;
      }
      const fields = {};
      for (const k of ["status", "reason", "physical_id", "hook"]) if (k in r) fields[k] = r[k];
      graph.update(id, fields);
      if (!prefix) table.updateRow(r.name, fields);
      if (panel.current && panel.current.id === id) refreshPanelSoon();
    }
    if (!prefix) setHeader(d.stack);
    timeline.add(d.events, { prefix });
  }

  const started = (async () => {
    graph.addControls(graphEl.parentElement.querySelector(".graph-chrome") || wrapGraph(graphEl));
    const data = await load();
    timeline.add(data.events || []);
    openStream(ds.streamUrl, { after: data.cursor, onChanges: (d) => onChanges(d), primary: true });
    const m = /^#resource=(.+)$/.exec(location.hash);
    if (m) select(decodeURIComponent(m[1]), { center: true });
  })();

  api.graph = () => graph.cy;
  api.status = (name) => graph.status(name);
  api.selectNode = (name) => select(name, { center: true });
  api.expand = (name) => expand(name);
  api.collapse = (name) => collapse(name);
  return started;
}

/** Put a toolbar host right after the graph element (inside the workspace cell). */
export function wrapGraph(graphEl) {
  const chrome = document.createElement("div");
  chrome.className = "graph-chrome";
  graphEl.after(chrome);
  return chrome;
}
