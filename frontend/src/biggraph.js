// Big graphs (thousands of nodes): sigma.js draws them with WebGL, where
// cytoscape's per-element work on a 2D canvas takes seconds. Nodes are
// points coloured by status family; the label ("name · STATUS") is drawn
// for the nodes big enough on screen to read, so the status is never
// shown by colour alone once a node can be told apart at all.
import Graphology from "graphology";
import Sigma from "sigma";
import { displayStatus, statusFamily } from "./status.js";

const COLOURS = {
  complete: "#2e7d46",
  progress: "#1f5fbf",
  failed: "#c62828",
  init: "#8a94a3",
  deleted: "#c4c9d1",
  paused: "#b26a00",
};

function look(raw) {
  const family = statusFamily(raw.status, raw.hook);
  const word = displayStatus(raw.status, raw.hook);
  const marker = raw.nested && raw.nested.stack_id ? "+ " : "";
  return {
    color: COLOURS[family] || COLOURS.init,
    label: `${marker}${raw.name ?? raw.id} · ${word}`,
    word,
    family,
    // in progress: bigger, so a create's front line stands out
    size: family === "progress" || family === "failed" || family === "paused" ? 4 : 2.5,
  };
}

export class BigView {
  constructor(container, { onTap }) {
    this.container = container;
    this.onTap = onTap;
    this.graph = new Graphology({ type: "directed", allowSelfLoops: false });
    this.sigma = null;
    this.selected = null;
  }

  /** Throws where WebGL is not available (the caller falls back to cytoscape). */
  load(nodes, edges, raw) {
    const g = this.graph;
    for (const n of nodes) {
      const id = String(n.id);
      g.addNode(id, { x: Number(n.x) || 0, y: -(Number(n.y) || 0), ...look(n) });
    }
    for (const e of edges) {
      const s = String(e.source), t = String(e.target);
      if (s !== t && g.hasNode(s) && g.hasNode(t)) g.mergeEdge(s, t, { size: 0.5, color: "#c9ced6" });
    }
    this.sigma = new Sigma(g, this.container, {
      labelRenderedSizeThreshold: 5,
      labelDensity: 0.6,
      labelGridCellSize: 140,
      labelFont: "system-ui, sans-serif",
      labelSize: 12,
      enableEdgeEvents: false,
      minCameraRatio: 0.005,
      maxCameraRatio: 4,
    });
    this.sigma.on("clickNode", ({ node }) => {
      const data = raw.get(node) || {};
      this.onTap(node, { data: (k) => (k === "nested" ? !!(data.nested && data.nested.stack_id) : undefined) });
    });
    return new Promise((resolve) => requestAnimationFrame(() => resolve(this)));
  }

  has(id) {
    return this.graph.hasNode(id);
  }

  apply(id, raw) {
    if (!this.graph.hasNode(id)) return;
    const shown = look(raw);
    if (id === this.selected) shown.size = 6;
    this.graph.mergeNodeAttributes(id, shown);
  }

  status(id) {
    return this.graph.hasNode(id) ? this.graph.getNodeAttribute(id, "word") : "";
  }

  select(id, { center = false } = {}) {
    const prev = this.selected;
    this.selected = id && this.graph.hasNode(id) ? id : null;
    if (prev && this.graph.hasNode(prev)) {
      this.graph.mergeNodeAttributes(prev, { forceLabel: false, highlighted: false, size: look({ status: this.graph.getNodeAttribute(prev, "word") }).size });
    }
    if (!this.selected) return;
    this.graph.mergeNodeAttributes(this.selected, { forceLabel: true, highlighted: true, size: 6 });
    if (center) {
      const at = this.sigma.getNodeDisplayData(this.selected);
      if (at) this.sigma.getCamera().animate({ x: at.x, y: at.y, ratio: 0.12 }, { duration: 300 });
    }
  }

  fit() {
    this.sigma.getCamera().animatedReset({ duration: 300 });
  }

  zoomBy(factor) {
    const camera = this.sigma.getCamera();
    camera.animate({ ratio: camera.ratio / factor }, { duration: 200 });
  }
}
