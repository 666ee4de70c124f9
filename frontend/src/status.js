// Status words -> families (colour + border + shape cues), shared by graph, table, panel.

export function statusFamily(status, hook = null) {
  if (hook) return "paused";
  const s = String(status || "").toUpperCase();
  if (s === "PAUSED") return "paused";
  if (s === "DELETE_COMPLETE" || s === "CANCELLED" || s === "DELETED") return "deleted";
  if (s.endsWith("_FAILED") || s === "ERROR" || s === "FAILED") return "failed";
  if (s.startsWith("INIT_") || s === "NOT_STARTED" || s === "IDLE" || s === "WAITING") return "init";
  if (s === "SKIPPED") return "deleted";
  if (s.endsWith("_IN_PROGRESS") || s === "RUNNING" || s === "RUNNING_DELAYED" || s === "DELAYED")
    return "progress";
  if (s.endsWith("_COMPLETE") || s === "SUCCESS") return "complete";
  return "init";
}

/** The word shown for a node: the status, or "PAUSED (hook)" for a paused breakpoint. */
export function displayStatus(status, hook = null) {
  if (hook) return `PAUSED (${hook})`;
  return String(status || "UNKNOWN");
}

/** A `<span class="status" data-status="X">X</span>` element. */
export function statusBadge(status, hook = null, tag = "span") {
  const el = document.createElement(tag);
  el.className = "status";
  const word = displayStatus(status, hook);
  el.dataset.status = String(status || "");
  if (hook) el.dataset.hook = hook;
  el.dataset.family = statusFamily(status, hook);
  el.textContent = word;
  return el;
}

/** Update an existing server-rendered status element in place. */
export function setStatusElement(el, status, hook = null) {
  if (!el) return;
  el.dataset.status = String(status || "");
  if (hook) el.dataset.hook = hook;
  else delete el.dataset.hook;
  el.dataset.family = statusFamily(status, hook);
  el.textContent = displayStatus(status, hook);
}

export function formatTime(t) {
  if (!t) return "";
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return String(t);
  return d.toLocaleString(undefined, { hour12: false });
}
