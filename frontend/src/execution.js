// The execution page (#execution-page): task graph + tasks table + panel, live.
import { debounce, getJSON, openStream } from "./api.js";
import { Graph } from "./graph.js";
import { Panel } from "./panel.js";
import { setStatusElement } from "./status.js";
import { WindowedTable } from "./table.js";
import { wrapGraph } from "./stack.js";

function rowOf(n) {
  return {
    name: n.name ?? n.id,
    action: n.action || "",
    state: n.state || "",
    progress: n.progress || "",
    retries: n.retries ?? 0,
    runs: n.runs ?? 0,
    state_info: n.state_info || "",
  };
}

export function startExecution(section, api) {
  const ds = section.dataset;
  const graphEl = section.querySelector("#graph");
  const tableEl = section.querySelector("#tasks");
  const panelEl = section.querySelector("#panel");
  const stateEl = document.getElementById("execution-state");
  const infoEl = document.getElementById("execution-info");
  let canWrite = true;

  const graph = new Graph(graphEl, { kind: "execution", onTap: (id) => select(id) });
  const table = new WindowedTable(tableEl, {
    key: "task",
    filterId: "task-filter",
    label: "Tasks",
    columns: [
      { key: "name", label: "Task", width: "22%" },
      { key: "action", label: "Action", width: "18%" },
      { key: "state", label: "State", status: true, width: "15%" },
      { key: "progress", label: "Progress", width: "10%" },
      { key: "retries", label: "Retries", width: "8%" },
      { key: "state_info", label: "Info" },
    ],
    onSelect: (name) => select(name, { center: true }),
  });
  const panel = new Panel(panelEl, {
    onClose: () => {
      graph.select(null);
      table.select(null);
    },
  });

  function select(id, { center = false } = {}) {
    const raw = graph.nodeRaw(id);
    if (!raw) return false;
    graph.select(id, { center });
    table.select(id);
    panel.showTask(raw, { actionUrl: ds.actionUrl, canWrite });
    history.replaceState(null, "", `#task=${encodeURIComponent(id)}`);
    return true;
  }

  function setHeader(ex) {
    if (!ex) return;
    if (ex.state) setStatusElement(stateEl, ex.state);
    if (infoEl && ex.state_info !== undefined) infoEl.textContent = ex.state_info || "";
  }

  async function load() {
    const data = await getJSON(ds.graphUrl);
    canWrite = data.can_write !== false;
    setHeader(data.execution);
    const nodes = data.nodes || [];
    table.setRows(nodes.map(rowOf));
    await graph.load(nodes, data.edges || []);
    return data;
  }
  const refetchSoon = debounce(() => load().catch((e) => console.error("convection: refetch", e)), 800);

  function onChanges(d) {
    let selectedChanged = false;
    for (const t of d.tasks || []) {
      const id = String(t.id ?? t.name);
      if (!graph.has(id)) {
        refetchSoon();
        continue;
      }
      const known = graph.nodeRaw(id) || {};
      graph.update(id, t);
      table.updateRow(String(t.name ?? t.id), rowOf({ ...known, ...t }));
      if (panel.current && panel.current.id === id) selectedChanged = true;
    }
    setHeader(d.execution);
    if (selectedChanged) {
      // the graph applies the change on the next frame; show the merged node then
      requestAnimationFrame(() => {
        const raw = graph.nodeRaw(panel.current && panel.current.id);
        if (raw) panel.showTask(raw, { actionUrl: ds.actionUrl, canWrite });
      });
    }
  }

  const started = (async () => {
    graph.addControls(wrapGraph(graphEl));
    const data = await load();
    openStream(ds.streamUrl, { after: data.cursor, onChanges, primary: true });
    const m = /^#task=(.+)$/.exec(location.hash);
    if (m) select(decodeURIComponent(m[1]), { center: true });
  })();

  api.graph = () => graph.cy;
  api.status = (name) => graph.status(name);
  api.selectNode = (name) => select(name, { center: true });
  return started;
}
