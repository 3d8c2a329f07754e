// Channels: list, add a webhook (its signing secret shown once), rotate the secret, delete.

import { $, clearErrors, confirmAction, h, problemText, say, state } from "./shared.js";

// ------------------------------------------------------------------ channels

export async function loadChannels() {
  try {
    state.channels = await state.api.listChannels();
  } catch (err) {
    if (err.status === 401) return; // main.js asks to sign in again
    say(`Could not load your channels: ${problemText(err)}`);
  }
}

export function renderChannels() {
  const rows = state.channels.map((c) => h("tr", {},
    h("th", { scope: "row" }, c.name),
    h("td", { "data-label": "Platform" }, c.platform),
    h("td", { "data-label": "Destination" }, c.url || c.account || "\u2014"),
    h("td", { "data-label": "Actions" },
      c.platform === "webhook" ? h("button", { type: "button", onclick: () => rotate(c) }, `Rotate secret of ${c.name}`) : null, " ",
      h("button", { type: "button", class: "danger", onclick: () => removeChannel(c) }, `Delete ${c.name}`))));
  $("channel-rows").replaceChildren(...(rows.length ? rows : [h("tr", {}, h("td", { colspan: "4" }, "No channels yet."))]));
}

export function showSecret(secret) {
  $("secret-value").textContent = secret;
  $("copy-status").textContent = "";
  $("secret-box").hidden = false;
  $("copy-secret").focus();
}

$("copy-secret").addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText($("secret-value").textContent);
    $("copy-status").textContent = "Copied.";
  } catch {
    const range = document.createRange();
    range.selectNodeContents($("secret-value"));
    window.getSelection().removeAllRanges();
    window.getSelection().addRange(range);
    $("copy-status").textContent = "Copying is blocked here: the secret is selected, press Ctrl+C.";
  }
});
$("hide-secret").addEventListener("click", () => {
  $("secret-value").textContent = "";
  $("secret-box").hidden = true;
  $("channel-name").focus();
});

$("channel-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  clearErrors("channel-error", "channel-name-error", "channel-url-error");
  const body = { platform: "webhook", name: $("channel-name").value.trim(), url: $("channel-url").value.trim() };
  try {
    const created = await state.api.createChannel(body);
    $("channel-form").reset();
    await loadChannels();
    renderChannels();
    say(`Channel ${created.name} added.`);
    showSecret(created.signing_secret);
  } catch (err) {
    const fields = err.fields || {};
    if (fields.name) $("channel-name-error").textContent = `Name: ${fields.name}`;
    if (fields.url) $("channel-url-error").textContent = `Webhook URL: ${fields.url}`;
    $("channel-error").textContent = problemText(err);
  }
});

export async function rotate(channel) {
  if (!(await confirmAction("Rotate the signing secret?", `${channel.name} gets a new secret; the old one keeps working for a short overlap.`, "Rotate"))) return;
  try {
    const rotated = await state.api.rotateSecret(channel.channel_id);
    say(`New secret for ${channel.name}.`);
    showSecret(rotated.signing_secret);
  } catch (err) {
    $("channel-error").textContent = problemText(err);
  }
}

export async function removeChannel(channel) {
  if (!(await confirmAction("Delete this channel?", `${channel.name} is removed; its pending deliveries are skipped.`, "Delete channel"))) return;
  try {
    await state.api.deleteChannel(channel.channel_id);
    say(`Channel ${channel.name} deleted.`);
  } catch (err) {
    $("channel-error").textContent = problemText(err);
  }
  await loadChannels();
  renderChannels();
  $("channel-name").focus();
}
