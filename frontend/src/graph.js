// The dependency-graph renderer: cytoscape.js on a 2D canvas, preset positions
// from the server, batched (one redraw per animation frame) live updates.
import cytoscape from "cytoscape";
import { BigView } from "./biggraph.js";
import { displayStatus, statusFamily } from "./status.js";
import { frameCoalescer, h } from "./api.js";

const BIG = 2000; // above this many nodes: performance mode
const NODE_W = 184;
const NODE_H = 54;
const GAP_X = 56;
const GAP_Y = 46;
const ANIMATE_MAX = 300; // animate dashed borders only for a few in-progress nodes

const FAMILY_CLASSES = ["f-complete", "f-progress", "f-failed", "f-init", "f-deleted", "f-paused"];

const EDGE_COLOURS = {
  success: "#2e7d46",
  error: "#c62828",
  complete: "#1f5fbf",
  requires: "#6b7280",
};

function shortName(name, max = 26) {
  const s = String(name);
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

function stylesheet(big, withEdgeLabels) {
  const s = [
    {
      selector: "node",
      style: {
        shape: "round-rectangle",
        width: NODE_W,
        height: NODE_H,
        label: big ? "" : "data(label)",
        "text-wrap": "wrap",
        "text-max-width": NODE_W - 12,
        "text-valign": "center",
        "text-halign": "center",
        "font-family": "system-ui, -apple-system, Segoe UI, Roboto, Helvetica, Arial, sans-serif",
        "font-size": 12,
        "line-height": 1.35,
        color: "#111827",
        "min-zoomed-font-size": big ? 9 : 5,
        "background-color": "#f1f3f5",
        "border-width": 2,
        "border-color": "#8a94a3",
        "border-style": "solid",
      },
    },
    { selector: "node.lbl", style: { label: "data(label)" } },
    { selector: "node.f-complete", style: { "background-color": "#e4f3e8", "border-color": "#2e7d46" } },
    {
      selector: "node.f-progress",
      style: {
        "background-color": "#e2ecfc",
        "border-color": "#1f5fbf",
        "border-style": "dashed",
        "border-width": 3,
        "border-dash-pattern": [7, 4],
      },
    },
    {
      selector: "node.f-failed",
      style: {
        shape: "cut-rectangle",
        "background-color": "#fde6e6",
        "border-color": "#c62828",
        "border-width": 3,
      },
    },
    { selector: "node.f-init", style: { "background-color": "#f1f3f5", "border-color": "#8a94a3" } },
    {
      selector: "node.f-deleted",
      style: {
        "background-color": "#f7f7f8",
        "border-color": "#b6bcc6",
        "border-style": "dotted",
        color: "#4b5563",
        opacity: 0.6,
      },
    },
    {
      selector: "node.f-paused",
      style: {
        shape: "round-tag",
        "background-color": "#fff1d6",
        "border-color": "#b26a00",
        "border-width": 4,
      },
    },
    { selector: "node.nested", style: { "border-style": "double", "border-width": 6 } },
    {
      selector: "node:parent",
      style: {
        shape: "round-rectangle",
        "background-opacity": 0.35,
        "text-valign": "top",
        "text-halign": "center",
        "text-margin-y": -6,
        padding: 18,
        "border-style": "double",
        "border-width": 6,
      },
    },
    {
      selector: "node:selected",
      style: {
        "underlay-color": "#2563eb",
        "underlay-opacity": 0.35,
        "underlay-padding": 7,
        "underlay-shape": "round-rectangle",
      },
    },
    {
      selector: "edge",
      style: {
        width: big ? 1 : 1.6,
        "line-color": "#9aa4b2",
        "target-arrow-color": "#9aa4b2",
        "target-arrow-shape": "triangle",
        "arrow-scale": 0.9,
        "curve-style": big ? "haystack" : "bezier",
        "haystack-radius": 0,
      },
    },
  ];
  if (withEdgeLabels) {
    s.push({
      selector: "edge[label]",
      style: {
        label: "data(label)",
        "font-size": 10,
        "font-family": "system-ui, sans-serif",
        color: "#1f2937",
        "text-rotation": "autorotate",
        "text-background-color": "#ffffff",
        "text-background-opacity": 0.9,
        "text-background-padding": 2,
        "min-zoomed-font-size": 6,
      },
    });
    for (const [label, colour] of Object.entries(EDGE_COLOURS)) {
      s.push({
        selector: `edge[label = "${label}"]`,
        style: { "line-color": colour, "target-arrow-color": colour, color: colour },
      });
    }
    s.push({ selector: 'edge[label = "requires"]', style: { "line-style": "dashed" } });
    s.push({ selector: 'edge[label = "error"]', style: { "line-style": "dashed", "line-dash-pattern": [4, 3] } });
  }
  return s;
}

/**
 * Turn server x/y into canvas coordinates. The server lays nodes out by depth;
 * whatever its unit, spread them so node boxes do not overlap.
 */
function scalePositions(nodes) {
  const minStep = (vals) => {
    const u = [...new Set(vals.map((v) => Math.round(v * 1000) / 1000))].sort((a, b) => a - b);
    let m = Infinity;
    for (let i = 1; i < u.length; i++) m = Math.min(m, u[i] - u[i - 1]);
    return Number.isFinite(m) && m > 0 ? m : null;
  };
  const xs = nodes.map((n) => Number(n.x) || 0);
  const ys = nodes.map((n) => Number(n.y) || 0);
  const dx = minStep(xs);
  const dy = minStep(ys);
  const sx = dx ? Math.min(Math.max((NODE_W + GAP_X) / dx, 1), 2000) : 1;
  const sy = dy ? Math.min(Math.max((NODE_H + GAP_Y) / dy, 1), 2000) : 1;
  return nodes.map((n, i) => ({ x: xs[i] * sx, y: ys[i] * sy }));
}

/** Data for a node from a server node (stack resource or workflow/execution task). */
function nodeData(kind, n, id, parent) {
  const name = n.name ?? n.id;
  const d = { id, name };
  if (parent) d.parent = parent;
  if (kind === "workflow") {
    d.word = n.action || "";
    d.family = "init";
  } else if (kind === "execution") {
    d.word = displayStatus(n.state);
    d.family = statusFamily(n.state);
  } else {
    d.word = displayStatus(n.status, n.hook);
    d.family = statusFamily(n.status, n.hook);
  }
  d.nested = !!(n.nested && n.nested.stack_id);
  d.label = makeLabel(d, n, false);
  return d;
}

function makeLabel(d, raw, expanded) {
  const marker = d.nested ? (expanded ? "− " : "+ ") : "";
  let second = d.word;
  raw = raw || {};
  if (raw.progress) second += ` ${raw.progress}`;
  if (d.nested && !expanded && raw.nested && raw.nested.size != null) {
    return `${marker}${shortName(d.name, 24)}\n${second}\n${raw.nested.kind || "stack"} · ${raw.nested.size}`;
  }
  return `${marker}${shortName(d.name, expanded ? 40 : 26)}\n${second}`;
}

export class Graph {
  /**
   * @param {HTMLElement} container  the #graph element
   * @param {{kind: "stack"|"execution"|"workflow", onTap?: (id: string, node) => void}} opts
   */
  constructor(container, { kind = "stack", onTap = null } = {}) {
    this.container = container;
    this.kind = kind;
    this.onTap = onTap;
    this.cy = null;
    this.big = false;
    this.pending = new Map();
    this.scheduleFlush = frameCoalescer(() => this.flush());
    this.expanded = new Set();
    this.raw = new Map(); // node id -> the server's node object (kept out of cytoscape data: faster)
    this.savedPositions = new Map();
    this.shifts = new Map(); // expanded id -> [[node id, dx, dy]] moved to make room
    this.dashTimer = null;
    this.dashOffset = 0;
    this.reducedMotion =
      window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  }

  /** Build the cytoscape elements of a (sub)graph; ids prefixed `prefix/` for nested ones. */
  elementsFor(nodes, edges, { prefix = "", parent = null, origin = null } = {}) {
    const pos = scalePositions(nodes);
    if (origin && pos.length) {
      // centre the children's bounding box on the parent's position
      let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
      for (const p of pos) {
        x0 = Math.min(x0, p.x); x1 = Math.max(x1, p.x);
        y0 = Math.min(y0, p.y); y1 = Math.max(y1, p.y);
      }
      const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
      for (const p of pos) {
        p.x += origin.x - cx;
        p.y += origin.y - cy;
      }
    }
    const els = [];
    const ids = new Set();
    nodes.forEach((n, i) => {
      const id = prefix + String(n.id ?? n.name);
      ids.add(id);
      const d = nodeData(this.kind, n, id, parent);
      this.raw.set(id, n);
      els.push({
        group: "nodes",
        data: d,
        position: pos[i],
        classes: [`f-${d.family}`, d.nested ? "nested" : ""].filter(Boolean),
      });
    });
    edges.forEach((e, i) => {
      const s = prefix + String(e.source);
      const t = prefix + String(e.target);
      if (!ids.has(s) || !ids.has(t)) return;
      const data = { id: `${prefix}e${i}:${s}->${t}`, source: s, target: t };
      if (e.label) data.label = e.label;
      els.push({ group: "edges", data });
    });
    return els;
  }

  /** (Re)draw the whole graph. Resolves once cytoscape has painted a frame. */
  load(nodes, edges) {
    performance.mark("convection:load");
    if (!this.cy && !this.view && this.kind === "stack" && nodes.length > BIG) {
      const loaded = this.loadBig(nodes, edges);
      if (loaded) return loaded;
    }
    if (this.view) return this.reloadBig(nodes, edges);
    if (this.cy) this.raw.clear();
    const els = this.elementsFor(nodes, edges);
    performance.mark("convection:elements");
    const first = !this.cy;
    if (first) {
      this.big = nodes.length > BIG;
      this.cy = cytoscape({
        container: this.container,
        elements: els,
        // fit computed from the preset positions: cheaper than cytoscape's bounding boxes
        layout: { name: "preset", fit: false },
        ...this.fitViewport(els),
        style: stylesheet(this.big, this.kind !== "stack"),
        minZoom: 0.02,
        maxZoom: 3,
        boxSelectionEnabled: false,
        autoungrabify: true,
        selectionType: "single",
        textureOnViewport: this.big,
        hideEdgesOnViewport: this.big,
        hideLabelsOnViewport: this.big,
        motionBlur: false,
        pixelRatio: this.big ? 1 : "auto",
      });
      if (typeof ResizeObserver !== "undefined") {
        new ResizeObserver(() => this.cy && this.cy.resize()).observe(this.container);
      }
      this.cy.on("tap", (evt) => {
        const t = evt.target;
        if (t === this.cy || !t.isNode || !t.isNode()) return;
        if (this.onTap) this.onTap(t.id(), t);
      });
    } else {
      const pan = this.cy.pan();
      const zoom = this.cy.zoom();
      this.cy.batch(() => {
        this.cy.elements().remove();
        this.cy.add(els);
      });
      this.expanded.clear();
      this.savedPositions.clear();
      this.shifts.clear();
      this.cy.viewport({ zoom, pan });
    }
    performance.mark("convection:cytoscape");
    if (this.big) this.virtualLabels();
    if (first) this.capZoom();
    this.updateAnimation();
    return new Promise((resolve) => {
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        performance.mark("convection:rendered");
        resolve(this);
      };
      this.cy.one("render", finish);
      setTimeout(finish, 3000);
    });
  }

  /** Thousands of nodes: sigma (WebGL); null where WebGL is missing. */
  loadBig(nodes, edges) {
    try {
      this.view = new BigView(this.container, { onTap: (id, node) => this.onTap && this.onTap(id, node) });
      for (const n of nodes) this.raw.set(String(n.id), n);
      const drawn = this.view.load(nodes, edges, this.raw);
      this.big = true;
      return drawn.then(() => {
        performance.mark("convection:rendered");
        return this;
      });
    } catch (err) {
      console.warn("convection: WebGL unavailable, drawing with cytoscape", err);
      this.view = null;
      this.raw.clear();
      this.container.replaceChildren();
      return null;
    }
  }

  /** A big graph whose topology changed: apply every node's state again. */
  reloadBig(nodes, edges) {
    for (const n of nodes) {
      const id = String(n.id);
      this.raw.set(id, n);
      if (this.view.has(id)) this.view.apply(id, n);
    }
    return Promise.resolve(this);
  }

  fitViewport(els) {
    const w = this.container.clientWidth || 800;
    const hgt = this.container.clientHeight || 500;
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (const e of els) {
      if (e.group !== "nodes") continue;
      const p = e.position;
      x0 = Math.min(x0, p.x); x1 = Math.max(x1, p.x);
      y0 = Math.min(y0, p.y); y1 = Math.max(y1, p.y);
    }
    if (!Number.isFinite(x0)) return { zoom: 1, pan: { x: w / 2, y: hgt / 2 } };
    x0 -= NODE_W / 2 + 30; x1 += NODE_W / 2 + 30;
    y0 -= NODE_H / 2 + 30; y1 += NODE_H / 2 + 30;
    const zoom = Math.max(0.02, Math.min(1.1, w / (x1 - x0), hgt / (y1 - y0)));
    return {
      zoom,
      pan: { x: w / 2 - ((x0 + x1) / 2) * zoom, y: hgt / 2 - ((y0 + y1) / 2) * zoom },
    };
  }

  /**
   * Big graphs: labels only on the nodes in view, and only once they are readable
   * (the same rule as min-zoomed-font-size); measuring 10k labels up front is what
   * makes the first frame slow.
   */
  virtualLabels() {
    const cy = this.cy;
    const apply = () => {
      const readable = cy.zoom() * 12 >= 9;
      cy.batch(() => {
        if (!readable) {
          cy.nodes(".lbl").removeClass("lbl");
          return;
        }
        const ext = cy.extent();
        const mx = NODE_W, my = NODE_H;
        const inView = cy.nodes().filter((n) => {
          const p = n.position();
          return p.x > ext.x1 - mx && p.x < ext.x2 + mx && p.y > ext.y1 - my && p.y < ext.y2 + my;
        });
        cy.nodes(".lbl").difference(inView).removeClass("lbl");
        inView.addClass("lbl");
      });
    };
    let t = null;
    const soon = () => {
      clearTimeout(t);
      t = setTimeout(apply, 80);
    };
    cy.on("viewport", soon);
    cy.on("add", "node", soon);
    apply();
  }

  capZoom() {
    if (this.cy.zoom() > 1.1) {
      this.cy.zoom(1.1);
      this.cy.center();
    }
  }

  fit() {
    if (this.view) return this.view.fit();
    this.cy.fit(undefined, 30);
    this.capZoom();
  }

  has(id) {
    if (this.view) return this.view.has(id);
    return !!this.cy && this.cy.getElementById(id).nonempty();
  }

  /** Queue changed fields for a node; drawn on the next animation frame (batched). */
  update(id, fields) {
    const prev = this.pending.get(id);
    this.pending.set(id, prev ? Object.assign(prev, fields) : { ...fields });
    this.scheduleFlush();
  }

  flush() {
    if (this.view) return this.flushBig();
    if (!this.cy || this.pending.size === 0) return;
    const pending = this.pending;
    this.pending = new Map();
    this.cy.batch(() => {
      for (const [id, fields] of pending) {
        const n = this.cy.getElementById(id);
        if (n.empty()) continue;
        const raw = Object.assign({}, this.raw.get(id), fields);
        this.raw.set(id, raw);
        const d = nodeData(this.kind, raw, id, null);
        const family = d.family;
        d.nested = n.data("nested");
        n.data({ word: d.word, family, label: makeLabel(d, raw, this.expanded.has(id)) });
        for (const c of FAMILY_CLASSES) if (c !== `f-${family}`) n.removeClass(c);
        n.addClass(`f-${family}`);
        if (family !== "progress") n.removeStyle("border-dash-offset");
      }
    });
    this.updateAnimation();
  }

  flushBig() {
    const pending = this.pending;
    this.pending = new Map();
    for (const [id, fields] of pending) {
      const raw = Object.assign({}, this.raw.get(id), fields);
      this.raw.set(id, raw);
      this.view.apply(id, raw);
    }
  }

  /** The status word the graph currently shows for a node ("" when absent). */
  status(id) {
    if (this.view) return this.view.status(id);
    if (!this.cy) return "";
    const n = this.cy.getElementById(id);
    return n.nonempty() ? n.data("word") : "";
  }

  nodeRaw(id) {
    if (this.view) return this.raw.get(id) || null;
    const n = this.cy && this.cy.getElementById(id);
    return n && n.nonempty() ? this.raw.get(id) || null : null;
  }

  select(id, { center = false } = {}) {
    if (this.view) return this.view.select(id, { center });
    if (!this.cy) return;
    const n = this.cy.getElementById(id);
    this.cy.batch(() => {
      this.cy.$(":selected").unselect();
      if (n.nonempty()) n.select();
    });
    if (center && n.nonempty()) {
      const ext = this.cy.extent();
      const p = n.position();
      if (p.x < ext.x1 || p.x > ext.x2 || p.y < ext.y1 || p.y > ext.y2) this.cy.center(n);
    }
  }

  isExpanded(id) {
    return this.expanded.has(id);
  }

  /** Draw a nested graph as compound children of `parentId` (ids `parentId/child`). */
  expand(parentId, nodes, edges) {
    if (this.view) {
      // a big graph opens a nested stack on its own page instead
      const raw = this.raw.get(parentId);
      if (raw && raw.nested) location.assign(`/stacks/${encodeURIComponent(raw.nested.stack_id)}`);
      return;
    }
    const parent = this.cy.getElementById(parentId);
    if (parent.empty()) return;
    if (this.expanded.has(parentId)) this.collapse(parentId);
    this.savedPositions.set(parentId, { ...parent.position() });
    const els = this.elementsFor(nodes, edges, {
      prefix: parentId + "/",
      parent: parentId,
      origin: parent.position(),
    });
    this.cy.batch(() => {
      this.cy.add(els);
      this.makeRoom(parent, els);
      this.expanded.add(parentId);
      parent.addClass("expanded");
      parent.data("label", makeLabel(parent.data(), this.raw.get(parentId), true));
    });
    this.updateAnimation();
  }

  /** Push the other nodes away from an expanded compound so its children do not cover them. */
  makeRoom(parent, els) {
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (const e of els) {
      if (e.group !== "nodes") continue;
      x0 = Math.min(x0, e.position.x); x1 = Math.max(x1, e.position.x);
      y0 = Math.min(y0, e.position.y); y1 = Math.max(y1, e.position.y);
    }
    if (!Number.isFinite(x0)) return;
    const c = this.savedPositions.get(parent.id());
    const dx = Math.max(0, (x1 - x0) / 2 + 40);
    const dy = Math.max(0, (y1 - y0) / 2 + 40);
    const inside = parent.descendants().union(parent);
    const shifts = [];
    this.cy.nodes().difference(inside).forEach((n) => {
      if (n.isParent()) return;
      const p = n.position();
      const sx = p.x > c.x + 1 ? dx : p.x < c.x - 1 ? -dx : 0;
      const sy = p.y > c.y + 1 ? dy : p.y < c.y - 1 ? -dy : 0;
      if (sx || sy) {
        n.shift({ x: sx, y: sy });
        shifts.push([n.id(), sx, sy]);
      }
    });
    this.shifts.set(parent.id(), shifts);
  }

  collapse(parentId) {
    const parent = this.cy.getElementById(parentId);
    if (parent.empty()) return;
    for (const id of [...this.expanded]) if (id.startsWith(parentId + "/")) this.expanded.delete(id);
    this.cy.batch(() => {
      for (const d of parent.descendants()) this.raw.delete(d.id());
      this.cy.remove(parent.descendants());
      const p = this.savedPositions.get(parentId);
      if (p) parent.position(p);
      for (const [id, sx, sy] of this.shifts.get(parentId) || []) {
        const n = this.cy.getElementById(id);
        if (n.nonempty() && !n.isParent()) n.shift({ x: -sx, y: -sy });
      }
      this.shifts.delete(parentId);
      this.expanded.delete(parentId);
      parent.removeClass("expanded");
      parent.data("label", makeLabel(parent.data(), this.raw.get(parentId), false));
    });
  }

  /** Dashed borders of in-progress nodes march while there are only a few of them. */
  updateAnimation() {
    if (!this.cy || this.big || this.reducedMotion) return;
    const n = this.cy.nodes(".f-progress").length;
    if (n > 0 && n <= ANIMATE_MAX && !this.dashTimer) {
      this.dashTimer = setInterval(() => {
        const nodes = this.cy.nodes(".f-progress");
        if (nodes.empty() || nodes.length > ANIMATE_MAX) {
          clearInterval(this.dashTimer);
          this.dashTimer = null;
          return;
        }
        if (document.hidden) return;
        this.dashOffset = (this.dashOffset + 2) % 22;
        nodes.style("border-dash-offset", -this.dashOffset);
      }, 90);
    }
  }

  /** Fit / zoom buttons and a legend under the canvas. */
  addControls(host, { legend = true } = {}) {
    const zoomBy = (f) => {
      if (this.view) return this.view.zoomBy(f);
      const cy = this.cy;
      cy.zoom({ level: cy.zoom() * f, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
    };
    const bar = h(
      "div",
      { class: "graph-tools", role: "toolbar", "aria-label": "graph view" },
      h("button", { type: "button", onclick: () => this.fit(), title: "Fit the whole graph" }, "Fit"),
      h("button", { type: "button", onclick: () => zoomBy(1.25), "aria-label": "Zoom in" }, "+"),
      h("button", { type: "button", onclick: () => zoomBy(0.8), "aria-label": "Zoom out" }, "−"),
    );
    host.append(bar);
    if (legend && this.kind !== "workflow") {
      const item = (fam, text) => h("li", {}, h("span", { class: "swatch", "data-family": fam }), text);
      host.append(
        h(
          "ul",
          { class: "graph-legend", "aria-label": "legend" },
          item("complete", "complete"),
          item("progress", "in progress"),
          item("failed", "failed"),
          item("init", "not started"),
          item("paused", "paused hook"),
          item("deleted", "deleted"),
          this.kind === "stack" ? h("li", {}, h("span", { class: "swatch nested" }), "+ nested (click)") : null,
        ),
      );
    } else if (legend) {
      const item = (label) => h("li", {}, h("span", { class: "edge-swatch", "data-label": label }), label);
      host.append(
        h("ul", { class: "graph-legend", "aria-label": "legend" }, ...Object.keys(EDGE_COLOURS).map(item)),
      );
    }
  }
}
