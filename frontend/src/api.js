// Talking to the server: JSON GETs, the SSE stream, and POST forms with csrf.

export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export async function getJSON(url) {
  const res = await fetch(url, {
    credentials: "same-origin",
    headers: { Accept: "application/json" },
  });
  if (res.status === 401) {
    const next = location.pathname + location.search;
    location.assign("/login?next=" + encodeURIComponent(next));
    throw new HttpError(401, "not logged in");
  }
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (!res.ok) {
    const msg = (body && body.error) || `${res.status} ${res.statusText}`;
    throw new HttpError(res.status, msg);
  }
  return body;
}

export function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.getAttribute("content") || "" : "";
}

export function isReader() {
  return document.body.dataset.role === "reader";
}

export function withQuery(url, params) {
  const u = new URL(url, location.href);
  for (const [k, v] of Object.entries(params)) {
    if (v !== null && v !== undefined && v !== "") u.searchParams.set(k, v);
  }
  return u.pathname + u.search;
}

/**
 * Open an EventSource on `url` (with `after=cursor` for the first connect; the
 * browser sends Last-Event-ID on its own reconnects and the server prefers it).
 * `onChanges(data)` gets each parsed `changes` message. When `primary` is set,
 * `document.body.dataset.live` mirrors the connection ("open" | "closed").
 * If the browser gives up (readyState CLOSED, e.g. the server answered an error),
 * reopen after a growing delay from the last event id seen.
 */
export function openStream(url, { after = null, onChanges, primary = false } = {}) {
  let lastId = after;
  let es = null;
  let stopped = false;
  let delay = 1000;
  let timer = null;

  const setLive = (v) => {
    if (primary) document.body.dataset.live = v;
  };

  const connect = () => {
    if (stopped) return;
    es = new EventSource(withQuery(url, { after: lastId }), { withCredentials: true });
    es.addEventListener("open", () => {
      delay = 1000;
      setLive("open");
    });
    es.addEventListener("changes", (ev) => {
      if (ev.lastEventId) lastId = ev.lastEventId;
      let data;
      try {
        data = JSON.parse(ev.data);
      } catch (err) {
        console.warn("convection: bad changes message", err);
        return;
      }
      try {
        onChanges(data);
      } catch (err) {
        console.error("convection: applying changes failed", err);
      }
    });
    es.addEventListener("error", () => {
      setLive("closed");
      if (es.readyState === EventSource.CLOSED && !stopped) {
        es.close();
        timer = setTimeout(connect, delay);
        delay = Math.min(delay * 2, 30000);
      }
    });
  };

  setLive("closed");
  connect();
  return {
    close() {
      stopped = true;
      clearTimeout(timer);
      if (es) es.close();
      setLive("closed");
    },
    get lastEventId() {
      return lastId;
    },
  };
}

/** Build a POST form (with the csrf hidden field) as a DOM element. */
export function postForm(action, label, fields = {}, { className = "", confirm = null } = {}) {
  const form = document.createElement("form");
  form.method = "post";
  form.action = action;
  if (className) form.className = className;
  const add = (name, value) => {
    const i = document.createElement("input");
    i.type = "hidden";
    i.name = name;
    i.value = value;
    form.append(i);
  };
  add("csrf", csrfToken());
  for (const [k, v] of Object.entries(fields)) add(k, v);
  const b = document.createElement("button");
  b.type = "submit";
  b.textContent = label;
  form.append(b);
  if (confirm) {
    form.addEventListener("submit", (ev) => {
      if (!window.confirm(confirm)) ev.preventDefault();
    });
  }
  return form;
}

/** Small helper to build elements: h("div", {class: "x"}, child, "text"). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Schedule `fn` once per animation frame however often `schedule()` is called. */
export function frameCoalescer(fn) {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      fn();
    });
  };
}

export function debounce(fn, ms) {
  let t = null;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}
