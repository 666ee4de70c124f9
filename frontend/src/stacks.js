// The stack list (#stacks-page): statuses follow the engine; a stack that
// appears or goes is announced, and the list reloads when the user asks.
import { openStream } from "./api.js";
import { setStatusElement } from "./status.js";

export function startStacks(section) {
  const notice = document.createElement("p");
  notice.className = "notice";
  notice.hidden = true;
  notice.setAttribute("role", "status");
  const reload = document.createElement("a");
  reload.href = location.pathname + location.search;
  reload.textContent = "Stacks were added or removed: reload the list";
  notice.append(reload);
  section.querySelector("h1").after(notice);

  function onChanges(d) {
    let moved = (d.gone || []).length > 0;
    for (const s of d.stacks || []) {
      const row = section.querySelector(`tr[data-stack-id="${CSS.escape(s.id)}"]`);
      if (!row) {
        moved = true;
        continue;
      }
      setStatusElement(row.querySelector("td.status"), s.status);
      const reason = row.querySelector("td.reason");
      if (reason) reason.textContent = s.status_reason || "";
    }
    for (const id of d.gone || []) {
      const row = section.querySelector(`tr[data-stack-id="${CSS.escape(id)}"]`);
      if (row) row.classList.add("gone");
    }
    if (moved && section.dataset.filtered !== "1") notice.hidden = false;
  }

  openStream(section.dataset.streamUrl, { onChanges, primary: true });
}
