// The event timeline (#events): newest at the top, at most 500 entries in the DOM.
import { h } from "./api.js";
import { formatTime, statusBadge } from "./status.js";

const CAP = 500;

export class Timeline {
  constructor(ol) {
    this.ol = ol;
    this.seen = new Set();
    for (const li of ol.querySelectorAll("li[data-event-id]")) this.seen.add(li.dataset.eventId);
    if (ol) ol.setAttribute("aria-live", "off");
  }

  /** Add Heat event views (oldest first, as the stream sends them). */
  add(events, { prefix = "" } = {}) {
    if (!this.ol || !events || !events.length) return;
    const frag = document.createDocumentFragment();
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i];
      const key = e.id ? String(e.id) : null;
      if (key && this.seen.has(key)) continue;
      if (key) this.seen.add(key);
      const name = prefix + (e.resource_name || e.logical_resource_id || "");
      frag.append(
        h(
          "li",
          { class: "event", "data-event-id": key, "data-resource": name },
          h("time", { datetime: e.event_time || "" }, formatTime(e.event_time)),
          h("span", { class: "res" }, name),
          statusBadge(e.resource_status),
          h("span", { class: "reason" }, e.resource_status_reason || ""),
        ),
      );
    }
    this.ol.prepend(frag);
    while (this.ol.children.length > CAP) {
      const last = this.ol.lastElementChild;
      if (last.dataset.eventId) this.seen.delete(last.dataset.eventId);
      last.remove();
    }
  }
}
