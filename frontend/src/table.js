// A windowed table: fixed row height, only the rows in view are in the DOM
// (all rows when there are few), a filter box, sortable columns.
import { frameCoalescer, h } from "./api.js";
import { statusBadge } from "./status.js";

const ROW_H = 30;
const OVERSCAN = 10;
const RENDER_ALL_BELOW = 300;

export class WindowedTable {
  /**
   * @param {HTMLElement} host  #resources or #tasks
   * @param {{key: "resource"|"task", filterId: string, label: string,
   *          columns: {key: string, label: string, status?: boolean, width?: string, value?: (row) => string}[],
   *          onSelect?: (name: string) => void}} opts
   */
  constructor(host, { key, filterId, label, columns, onSelect = null }) {
    this.host = host;
    this.key = key;
    this.columns = columns;
    this.onSelect = onSelect;
    this.rows = [];
    this.byName = new Map();
    this.view = [];
    this.filter = "";
    this.sortKey = null;
    this.sortDir = 1;
    this.selected = null;
    this.renderSoon = frameCoalescer(() => this.render());
    this.refilterSoon = frameCoalescer(() => this.refilter());

    host.classList.add("windowed-table");
    this.count = h("span", { class: "count", "aria-live": "polite" });
    this.input = h("input", {
      id: filterId,
      type: "search",
      placeholder: `Filter ${label.toLowerCase()} by name, type or status`,
      autocomplete: "off",
      spellcheck: "false",
    });
    this.input.addEventListener("input", () => {
      this.filter = this.input.value.trim().toLowerCase();
      this.refilter();
      this.scroller.scrollTop = 0;
    });
    host.append(
      h(
        "div",
        { class: "table-tools" },
        h("h2", {}, label),
        h("label", { for: filterId, class: "visually-hidden" }, `Filter ${label.toLowerCase()}`),
        this.input,
        this.count,
      ),
    );
    const colgroup = h("colgroup", {}, columns.map((c) => h("col", { style: c.width ? `width:${c.width}` : null })));
    const headRow = h(
      "tr",
      {},
      columns.map((c) =>
        h(
          "th",
          { scope: "col", "data-col": c.key },
          h("button", { type: "button", class: "sort", onclick: () => this.sortBy(c.key) }, c.label),
        ),
      ),
    );
    this.tbody = h("tbody");
    this.table = h("table", { class: "grid", "data-kind": key }, colgroup, h("thead", {}, headRow), this.tbody);
    this.scroller = h("div", { class: "table-scroll", tabindex: "0", "aria-label": `${label} table` }, this.table);
    this.scroller.addEventListener("scroll", () => this.renderSoon(), { passive: true });
    host.append(this.scroller);
    this.tbody.addEventListener("click", (ev) => {
      const tr = ev.target.closest("tr[data-name]");
      if (tr && this.onSelect) this.onSelect(tr.dataset.name);
    });
    if (typeof ResizeObserver !== "undefined") {
      new ResizeObserver(() => this.renderSoon()).observe(this.scroller);
    }
  }

  value(row, col) {
    if (col.value) return col.value(row);
    const v = row[col.key];
    return v === null || v === undefined ? "" : String(v);
  }

  setRows(rows) {
    this.rows = rows.map((r) => ({ ...r }));
    this.byName = new Map(this.rows.map((r) => [String(r.name), r]));
    this.refilter();
  }

  has(name) {
    return this.byName.has(name);
  }

  /** Merge changed fields into a row; the DOM follows on the next frame. */
  updateRow(name, fields) {
    const r = this.byName.get(name);
    if (!r) return false;
    Object.assign(r, fields);
    if (this.filter || this.sortKey) this.refilterSoon();
    else this.renderSoon();
    return true;
  }

  sortBy(key) {
    if (this.sortKey === key) this.sortDir = -this.sortDir;
    else {
      this.sortKey = key;
      this.sortDir = 1;
    }
    for (const th of this.table.tHead.rows[0].cells) {
      th.setAttribute(
        "aria-sort",
        th.dataset.col === key ? (this.sortDir > 0 ? "ascending" : "descending") : "none",
      );
    }
    this.refilter();
  }

  refilter() {
    let view = this.rows;
    if (this.filter) {
      const f = this.filter;
      view = view.filter((r) => this.columns.some((c) => this.value(r, c).toLowerCase().includes(f)));
    }
    if (this.sortKey) {
      const col = this.columns.find((c) => c.key === this.sortKey);
      const d = this.sortDir;
      view = [...view].sort((a, b) => d * this.value(a, col).localeCompare(this.value(b, col), undefined, { numeric: true }));
    }
    this.view = view;
    this.count.textContent =
      view.length === this.rows.length ? `${this.rows.length}` : `${view.length} of ${this.rows.length}`;
    this.render();
  }

  render() {
    const total = this.view.length;
    let start = 0;
    let end = total;
    if (total > RENDER_ALL_BELOW) {
      const top = this.scroller.scrollTop;
      const height = this.scroller.clientHeight || 400;
      start = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
      end = Math.min(total, Math.ceil((top + height) / ROW_H) + OVERSCAN);
    }
    const frag = document.createDocumentFragment();
    const span = this.columns.length;
    if (start > 0) {
      frag.append(h("tr", { class: "spacer", "aria-hidden": "true", style: `height:${start * ROW_H}px` }, h("td", { colspan: span })));
    }
    for (let i = start; i < end; i++) frag.append(this.rowElement(this.view[i]));
    if (end < total) {
      frag.append(
        h("tr", { class: "spacer", "aria-hidden": "true", style: `height:${(total - end) * ROW_H}px` }, h("td", { colspan: span })),
      );
    }
    if (total === 0) {
      frag.append(h("tr", { class: "empty" }, h("td", { colspan: span }, this.rows.length ? "No match." : "Nothing here yet.")));
    }
    this.tbody.replaceChildren(frag);
  }

  rowElement(r) {
    const name = String(r.name);
    const tr = h("tr", { "data-name": name });
    tr.dataset[this.key] = name;
    if (this.selected === name) {
      tr.classList.add("selected");
      tr.setAttribute("aria-selected", "true");
    }
    for (const c of this.columns) {
      if (c.status) {
        const td = statusBadge(r[c.key], c.hookKey ? r[c.hookKey] : null, "td");
        td.title = td.textContent;
        tr.append(td);
      } else if (c.key === "name") {
        tr.append(h("td", { class: "name", title: name }, h("button", { type: "button", class: "row-link" }, name)));
      } else {
        const v = this.value(r, c);
        tr.append(h("td", { class: c.key, title: v }, v));
      }
    }
    return tr;
  }

  select(name) {
    this.selected = name;
    const idx = this.view.findIndex((r) => String(r.name) === name);
    if (idx >= 0) {
      const top = idx * ROW_H;
      const st = this.scroller.scrollTop;
      const hgt = this.scroller.clientHeight;
      const head = this.table.tHead ? this.table.tHead.offsetHeight : 0;
      if (top < st || top + ROW_H > st + hgt - head) this.scroller.scrollTop = Math.max(0, top - hgt / 3);
    }
    this.render();
  }
}
