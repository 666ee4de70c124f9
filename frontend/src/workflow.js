// The workflow definition page (#workflow-page): the task graph with labelled edges.
import { getJSON } from "./api.js";
import { Graph } from "./graph.js";
import { Panel } from "./panel.js";
import { wrapGraph } from "./stack.js";

export function startWorkflow(section, api) {
  const graphEl = section.querySelector("#graph");
  const panelEl = section.querySelector("#panel");
  const panel = panelEl ? new Panel(panelEl, { onClose: () => graph.select(null) }) : null;
  let edges = [];
  const graph = new Graph(graphEl, {
    kind: "workflow",
    onTap: (id) => select(id),
  });

  function select(id) {
    const raw = graph.nodeRaw(id);
    if (!raw) return false;
    graph.select(id, { center: true });
    if (panel) panel.showDefinition(raw, edges);
    return true;
  }

  const started = (async () => {
    graph.addControls(wrapGraph(graphEl));
    const data = await getJSON(section.dataset.graphUrl);
    edges = data.edges || [];
    await graph.load(data.nodes || [], edges);
  })();

  api.graph = () => graph.cy;
  api.status = (name) => graph.status(name);
  api.selectNode = (name) => select(name);
  return started;
}
