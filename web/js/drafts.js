// Drafts: posts without publish_at (GET /v1/scheduled-posts?status=draft), never published;
// opened in the compose dialog to edit them or choose when to publish; deleted for good.

import { openCompose } from "./compose.js";
import { $, channelName, confirmAction, firstLine, h, problemText, say, state } from "./shared.js";

export async function loadDrafts() {
  try {
    state.drafts = await state.api.listDrafts();
  } catch (err) {
    if (err.status === 401) return;
    say(`Could not load your drafts: ${problemText(err)}`);
  }
}

export function renderDrafts() {
  const items = (state.drafts || []).map((d) => h("li", { class: "draft" },
    h("span", { class: "post-text" }, firstLine(d.content) || "(no text yet)"),
    h("span", { class: "hint" }, ` to ${d.channel_ids.map(channelName).join(", ")} `),
    h("button", { type: "button", onclick: () => openCompose(d) }, `Open draft ${firstLine(d.content)}`), " ",
    h("button", { type: "button", class: "danger", onclick: () => remove(d) }, `Delete draft ${firstLine(d.content)}`)));
  $("draft-list").replaceChildren(...(items.length ? items : [h("li", {}, "No drafts.")]));
}

async function remove(draft) {
  if (!(await confirmAction("Delete this draft?", `"${firstLine(draft.content)}" is deleted for good.`, "Delete draft"))) return;
  try {
    await state.api.deleteDraft(draft.schedule_id, draft.version);
    say("The draft was deleted.");
  } catch (err) {
    say(problemText(err));
  }
  await loadDrafts();
  renderDrafts();
}
