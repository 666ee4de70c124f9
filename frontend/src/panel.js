// The side panel (#panel): details of the selected resource or task, and its actions.
import { getJSON, h, isReader, postForm } from "./api.js";
import { formatTime, statusBadge } from "./status.js";

function fmt(v) {
  if (v === null || v === undefined) return h("span", { class: "muted" }, "—");
  if (typeof v === "object") return h("pre", {}, JSON.stringify(v, null, 2));
  return h("span", { class: "value" }, String(v));
}

function kvTable(obj, caption) {
  const entries = Object.entries(obj || {});
  if (!entries.length) return h("p", { class: "muted" }, `No ${caption.toLowerCase()}.`);
  return h(
    "table",
    { class: "kv" },
    h("caption", { class: "visually-hidden" }, caption),
    h("tbody", {}, entries.map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, fmt(v))))),
  );
}

function dl(pairs) {
  return h(
    "dl",
    { class: "facts" },
    pairs.filter(Boolean).flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v instanceof Node ? v : fmt(v))]),
  );
}

function section(title, open, ...content) {
  return h("details", { class: "panel-section", open: open ? true : null }, h("summary", {}, title), ...content);
}

export class Panel {
  constructor(el, { onClose = null } = {}) {
    this.el = el;
    this.onClose = onClose;
    this.token = 0;
    this.current = null;
    el.setAttribute("aria-label", "details");
    el.setAttribute("tabindex", "-1");
  }

  frame(title, subtitle, ...body) {
    const close = h("button", { type: "button", class: "close", "aria-label": "Close details" }, "×");
    close.addEventListener("click", () => this.close());
    this.el.replaceChildren(
      h("header", { class: "panel-head" }, h("div", {}, h("h2", {}, title), subtitle ? h("p", { class: "sub" }, subtitle) : null), close),
      ...body,
    );
    this.el.hidden = false;
    const ws = this.el.closest(".workspace");
    if (ws) ws.classList.add("has-panel");
  }

  close() {
    this.el.hidden = true;
    this.current = null;
    const ws = this.el.closest(".workspace");
    if (ws) ws.classList.remove("has-panel");
    if (this.onClose) this.onClose();
  }

  /**
   * Show a stack resource: fetch `${resourceUrl}${name}`.
   * `actionUrl` is the stack's "/stacks/{id}/" (the nested stack's for nested nodes).
   */
  async showResource({ id, name, resourceUrl, actionUrl, canWrite }) {
    const token = ++this.token;
    this.current = { kind: "resource", id, name, resourceUrl, actionUrl, canWrite };
    if (this.el.hidden || this.el.dataset.selected !== id) {
      this.frame(name, "loading…", h("p", { class: "muted", role: "status" }, "Loading…"));
    }
    this.el.dataset.selected = id;
    let data;
    try {
      data = await getJSON(resourceUrl + encodeURIComponent(name));
    } catch (err) {
      if (token !== this.token) return;
      this.frame(name, null, h("p", { class: "error", role: "alert" }, `Could not load ${name}: ${err.message}`));
      return;
    }
    if (token !== this.token) return;
    this.renderResource(data, { name, actionUrl, canWrite });
  }

  /** Refresh the shown resource (after a live change), keeping open sections. */
  refresh() {
    if (this.current && this.current.kind === "resource") this.showResource(this.current);
  }

  renderResource(data, { name, actionUrl, canWrite }) {
    const r = data.resource || {};
    const hook = data.hook || null;
    const writable = canWrite && !isReader();
    const body = [];
    body.push(
      dl([
        ["Type", r.resource_type],
        ["Status", statusBadge(r.resource_status, hook)],
        ["Reason", r.resource_status_reason],
        ["Physical ID", r.physical_resource_id ? h("code", {}, r.physical_resource_id) : null],
        r.required_by && r.required_by.length ? ["Required by", r.required_by.join(", ")] : null,
        r.updated_time || r.creation_time ? ["Updated", formatTime(r.updated_time || r.creation_time)] : null,
      ]),
    );
    if (hook && writable) {
      body.push(
        h(
          "div",
          { class: "callout paused", role: "note" },
          h("p", {}, `Paused at the ${hook} breakpoint.`),
          postForm(`${actionUrl}resources/${encodeURIComponent(name)}/hook`, `Continue (clear ${hook})`, { hook }, {
            className: "action primary",
          }),
        ),
      );
    } else if (hook) {
      body.push(h("div", { class: "callout paused", role: "note" }, h("p", {}, `Paused at the ${hook} breakpoint.`)));
    }
    const keepOpen = (title, dflt) => {
      const prev = [...this.el.querySelectorAll("details.panel-section")].find(
        (d) => d.querySelector("summary")?.textContent.startsWith(title),
      );
      return prev ? prev.open : dflt;
    };
    body.push(section("Properties", keepOpen("Properties", true), kvTable(data.properties, "Properties")));
    body.push(section("Attributes", keepOpen("Attributes", false), kvTable(r.attributes, "Attributes")));
    const events = data.events || [];
    body.push(
      section(
        `Events (${events.length})`,
        keepOpen("Events", true),
        events.length
          ? h(
              "ol",
              { class: "panel-events" },
              [...events].reverse().map((e) =>
                h(
                  "li",
                  {},
                  h("time", { datetime: e.event_time || "" }, formatTime(e.event_time)),
                  " ",
                  statusBadge(e.resource_status),
                  e.resource_status_reason ? h("span", { class: "reason" }, e.resource_status_reason) : null,
                ),
              ),
            )
          : h("p", { class: "muted" }, "No events."),
      ),
    );
    if (writable) body.push(this.signalForm(`${actionUrl}resources/${encodeURIComponent(name)}/signal`));
    this.frame(name, r.resource_type || "", ...body);
  }

  signalForm(action) {
    const form = postForm(action, "Send signal", {}, { className: "signal" });
    const area = h("textarea", { name: "data", rows: "3", spellcheck: "false", id: "signal-data" }, "{}");
    const err = h("p", { class: "error", role: "alert", hidden: true });
    form.prepend(h("label", { for: "signal-data" }, "Signal data (JSON)"), area, err);
    form.addEventListener("submit", (ev) => {
      try {
        JSON.parse(area.value || "null");
        err.hidden = true;
      } catch (e) {
        ev.preventDefault();
        err.textContent = `Not valid JSON: ${e.message}`;
        err.hidden = false;
      }
    });
    return section("Signal", false, form);
  }

  /** Show an execution task from its graph node. */
  showTask(node, { actionUrl, canWrite }) {
    this.token++;
    this.current = { kind: "task", id: node.id };
    this.el.dataset.selected = node.id;
    const writable = canWrite && !isReader();
    const body = [
      dl([
        ["Action", node.action ? h("code", {}, node.action) : null],
        ["State", statusBadge(node.state)],
        ["State info", node.state_info],
        ["Progress", node.progress],
        ["Retries", node.retries ?? 0],
        ["Runs", node.runs ?? 0],
        ["Task ID", node.task_id ? h("code", {}, node.task_id) : null],
        node.sub_execution_id
          ? ["Sub-execution", h("a", { href: `/executions/${encodeURIComponent(node.sub_execution_id)}` }, node.sub_execution_id)]
          : null,
      ]),
    ];
    if (writable && node.task_id && String(node.state).toUpperCase() === "ERROR") {
      const base = `${actionUrl}tasks/${encodeURIComponent(node.task_id)}/`;
      body.push(
        h(
          "div",
          { class: "actions-row" },
          postForm(base + "rerun", "Rerun", {}, { className: "action primary" }),
          postForm(base + "skip", "Skip", {}, { className: "action", confirm: `Skip task ${node.name}?` }),
        ),
      );
    }
    this.frame(node.name ?? node.id, node.action || "", ...body);
  }

  /** Show a workflow definition task (no server state). */
  showDefinition(node, edges) {
    this.token++;
    this.current = { kind: "definition", id: node.id };
    const out = edges.filter((e) => e.source === node.id);
    const inc = edges.filter((e) => e.target === node.id);
    const list = (es, key) =>
      es.length ? h("ul", {}, es.map((e) => h("li", {}, h("span", { class: "edge-label", "data-label": e.label || "" }, e.label || "→"), " ", e[key]))) : fmt(null);
    this.frame(
      node.name ?? node.id,
      node.action || "",
      dl([
        ["Action", node.action ? h("code", {}, node.action) : null],
        ["Next", list(out, "target")],
        ["From", list(inc, "source")],
      ]),
    );
  }
}
