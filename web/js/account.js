// The Account view: notification endpoints (events signed by Standard Webhooks, the secret shown
// once), the posts CSV and the account export as downloads, the calendar feed, and erasure.

import { $, clearErrors, confirmAction, h, problemText, say, state } from "./shared.js";

let eventTypes = null;

export async function loadAccount() {
  try {
    if (!eventTypes) eventTypes = await state.api.eventTypes();
    state.endpoints = await state.api.listEndpoints();
  } catch (err) {
    if (err.status === 401) return;
    say(`Could not load your notification endpoints: ${problemText(err)}`);
  }
}

export function renderAccount() {
  const rows = (state.endpoints || []).map((e) => h("tr", {},
    h("th", { scope: "row" }, e.url),
    h("td", { "data-label": "Events" }, e.event_types.join(", ")),
    h("td", { "data-label": "Actions" },
      h("button", { type: "button", onclick: () => rotate(e) }, `Rotate secret of ${e.url}`), " ",
      h("button", { type: "button", class: "danger", onclick: () => remove(e) }, `Delete ${e.url}`))));
  $("endpoint-rows").replaceChildren(...(rows.length ? rows : [h("tr", {}, h("td", { colspan: "3" }, "No notification endpoints yet."))]));
  const box = $("endpoint-types");
  if (eventTypes && box.querySelectorAll("input").length !== eventTypes.length) {
    box.replaceChildren(h("legend", {}, "Events"), ...eventTypes.map((type) => h("label", { class: "inline" },
      h("input", { type: "checkbox", value: type, checked: type.startsWith("post.") && type !== "post.claimed" && type !== "post.updated" }), ` ${type}`)));
  }
}

function showSecret(secret) {
  $("endpoint-secret-value").textContent = secret;
  $("endpoint-secret-box").hidden = false;
  $("endpoint-secret-hide").focus();
}
$("endpoint-secret-hide").addEventListener("click", () => {
  $("endpoint-secret-value").textContent = "";
  $("endpoint-secret-box").hidden = true;
});

$("endpoint-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  clearErrors("endpoint-error");
  const event_types = [...$("endpoint-types").querySelectorAll("input:checked")].map((b) => b.value);
  try {
    const created = await state.api.createEndpoint({ url: $("endpoint-url").value.trim(), event_types });
    $("endpoint-url").value = "";
    say(`Notifications go to ${created.url}.`);
    showSecret(created.signing_secret);
    await loadAccount();
    renderAccount();
  } catch (err) {
    const fields = Object.entries(err.fields || {});
    $("endpoint-error").textContent = fields.length ? fields.map(([f, m]) => `${f}: ${m}`).join("; ") : problemText(err);
  }
});

async function rotate(endpoint) {
  if (!(await confirmAction("Rotate the signing secret?", `${endpoint.url} gets a new secret; the old one keeps working for a short overlap.`, "Rotate"))) return;
  try {
    showSecret((await state.api.rotateEndpoint(endpoint.endpoint_id)).signing_secret);
  } catch (err) {
    $("endpoint-error").textContent = problemText(err);
  }
}

async function remove(endpoint) {
  if (!(await confirmAction("Delete this endpoint?", `${endpoint.url} gets no more notifications.`, "Delete endpoint"))) return;
  try {
    await state.api.deleteEndpoint(endpoint.endpoint_id);
    say("The endpoint was deleted.");
  } catch (err) {
    $("endpoint-error").textContent = problemText(err);
  }
  await loadAccount();
  renderAccount();
}

// ------------------------------------------------------------------ exports and the feed

function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = h("a", { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

$("export-csv").addEventListener("click", async () => {
  clearErrors("export-error");
  try {
    download("scheduled-posts.csv", "text/csv", await state.api.exportCsv());
  } catch (err) {
    $("export-error").textContent = problemText(err);
  }
});
$("export-json").addEventListener("click", async () => {
  clearErrors("export-error");
  try {
    download("scheduled-posts-account.json", "application/json", JSON.stringify(await state.api.exportAccount(), null, 2));
  } catch (err) {
    $("export-error").textContent = problemText(err);
  }
});
$("feed-create").addEventListener("click", async () => {
  clearErrors("export-error");
  try {
    const feed = await state.api.createFeed();
    $("feed-url").textContent = feed.url;
    $("feed-url-line").hidden = false;
    say("Calendar feed ready: an earlier feed address, if any, stopped working.");
  } catch (err) {
    $("export-error").textContent = problemText(err);
  }
});
$("feed-revoke").addEventListener("click", async () => {
  clearErrors("export-error");
  try {
    await state.api.revokeFeed();
    $("feed-url").textContent = "";
    $("feed-url-line").hidden = true;
    say("Calendar feed revoked: its address answers 404 from now on.");
  } catch (err) {
    $("export-error").textContent = problemText(err);
  }
});

// ------------------------------------------------------------------ erasure

$("erase-account").addEventListener("click", async () => {
  if (!(await confirmAction("Erase your account?", "Everything the service holds about you is deleted: posts, schedules, channels, media, events. This cannot be undone.", "Erase my account"))) return;
  try {
    const answer = await state.api.eraseAccount();
    $("erase-status").textContent = answer.status === "done"
      ? "Your account is erased." : "Erasure started: it completes within minutes (GET /v1/me/erasure).";
  } catch (err) {
    $("erase-status").textContent = problemText(err);
  }
});
