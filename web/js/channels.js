// Channels: list with status and limits, add a webhook (its signing secret shown once), a
// Mastodon account (instance URL + access token) or a Bluesky account (handle + app password +
// PDS URL), reconnect a channel whose credentials the network refused, rotate a webhook's
// secret, delete.

import { $, clearErrors, confirmAction, h, problemText, say, state } from "./shared.js";
import { openSlots } from "./slots.js";

// ------------------------------------------------------------------ channels

export async function loadChannels() {
  try {
    state.channels = await state.api.listChannels();
  } catch (err) {
    if (err.status === 401) return; // main.js asks to sign in again
    say(`Could not load your channels: ${problemText(err)}`);
  }
}

/** The fields each network's channel takes (openapi.json, ChannelCreate), by input id. */
const PLATFORM_FIELDS = {
  webhook: { url: "channel-url" },
  mastodon: { instance_url: "channel-instance", access_token: "channel-token" },
  bluesky: { handle: "channel-handle", app_password: "channel-app-password", service_url: "channel-service" },
};
const FIELD_LABELS = {
  name: "Name", url: "Webhook URL", instance_url: "Mastodon instance URL", access_token: "Access token",
  handle: "Bluesky handle", app_password: "App password", service_url: "PDS URL",
};

function chosenPlatform() {
  return document.querySelector('#platform-choice input[name="platform"]:checked').value;
}

function showPlatformFields() {
  const platform = chosenPlatform();
  for (const group of document.querySelectorAll("#channel-form [data-platform]")) {
    const mine = group.dataset.platform === platform;
    group.hidden = !mine;
    for (const input of group.querySelectorAll("input")) input.required = mine && input.id !== "channel-service";
  }
}

function limitsText(limits) {
  if (!limits) return "\u2014";
  const parts = [];
  if (limits.max_characters) parts.push(`${limits.max_characters} characters`);
  if (limits.max_graphemes) parts.push(`${limits.max_graphemes} graphemes`);
  if (limits.max_media_attachments) parts.push(`${limits.max_media_attachments} media`);
  return parts.join(", ") || "\u2014";
}

function statusCell(c) {
  const needs = c.status === "needs_reauthorization";
  return h("td", { "data-label": "Status", class: `channel-status-${c.status}` },
    needs ? "Needs reconnecting" : "Active",
    needs && c.status_reason ? h("span", { class: "hint" }, ` (${c.status_reason})`) : null);
}

function destination(c) {
  if (c.account && (c.account.acct || c.account.handle)) return `${c.account.acct || c.account.handle} at ${c.url}`;
  return c.url || "\u2014";
}

export function renderChannels() {
  const rows = state.channels.map((c) => h("tr", {},
    h("th", { scope: "row" }, c.name),
    h("td", { "data-label": "Platform" }, c.platform),
    h("td", { "data-label": "Destination" }, destination(c)),
    statusCell(c),
    h("td", { "data-label": "Limits" }, limitsText(c.limits)),
    h("td", { "data-label": "Actions" },
      c.platform === "webhook" ? h("button", { type: "button", onclick: () => rotate(c) }, `Rotate secret of ${c.name}`) : null,
      c.platform !== "webhook" ? h("button", { type: "button", onclick: () => openReconnect(c) }, `Reconnect ${c.name}`) : null, " ",
      h("button", { type: "button", onclick: () => openSlots(c) }, `Posting slots of ${c.name}`), " ",
      h("button", { type: "button", class: "danger", onclick: () => removeChannel(c) }, `Delete ${c.name}`))));
  $("channel-rows").replaceChildren(...(rows.length ? rows : [h("tr", {}, h("td", { colspan: "6" }, "No channels yet."))]));
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

for (const radio of document.querySelectorAll('#platform-choice input[name="platform"]')) {
  radio.addEventListener("change", showPlatformFields);
}
$("channel-instance").addEventListener("input", () => {
  // The instance's own token page, so the creator lands where the token is made.
  try {
    $("token-page").href = new URL("/settings/applications", $("channel-instance").value).href;
  } catch { /* not a URL yet */ }
});
showPlatformFields();

const FIELD_ERRORS = ["name", ...new Set(Object.values(PLATFORM_FIELDS).flatMap((f) => Object.keys(f)))];

function channelBody() {
  const platform = chosenPlatform();
  const body = { platform, name: $("channel-name").value.trim() };
  for (const [field, id] of Object.entries(PLATFORM_FIELDS[platform])) {
    const value = $(id).value.trim();
    if (value) body[field] = value;
  }
  return body;
}

$("channel-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  clearErrors("channel-error", ...FIELD_ERRORS.map((f) => `channel-${f}-error`));
  try {
    const created = await state.api.createChannel(channelBody());
    $("channel-form").reset();
    showPlatformFields();
    await loadChannels();
    renderChannels();
    say(`Channel ${created.name} added.`);
    if (created.signing_secret) showSecret(created.signing_secret);
  } catch (err) {
    const fields = err.fields || {};
    for (const f of FIELD_ERRORS) {
      if (fields[f]) $(`channel-${f}-error`).textContent = `${FIELD_LABELS[f]}: ${fields[f]}`;
    }
    $("channel-error").textContent = problemText(err);
  }
});

// ------------------------------------------------------------------ reconnect

let reconnecting = null;

/** A network channel's new credential: Mastodon an access token, Bluesky an app password. */
export function openReconnect(channel) {
  reconnecting = channel;
  const mastodon = channel.platform === "mastodon";
  $("reconnect-title").textContent = `Reconnect ${channel.name}`;
  $("reconnect-text").textContent = mastodon
    ? `Paste a new access token for ${destination(channel)}; the channel and its pending posts stay as they are.`
    : `Paste a new app password for ${destination(channel)}; the channel and its pending posts stay as they are.`;
  $("reconnect-label").textContent = mastodon ? "New access token" : "New app password";
  $("reconnect-secret").value = "";
  $("reconnect-error").textContent = "";
  $("reconnect").showModal();
  $("reconnect-secret").focus();
}

$("reconnect-close").addEventListener("click", () => $("reconnect").close());
$("reconnect-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const channel = reconnecting;
  const field = channel.platform === "mastodon" ? "access_token" : "app_password";
  try {
    await state.api.updateChannel(channel.channel_id, { [field]: $("reconnect-secret").value.trim() });
    $("reconnect-secret").value = "";
    $("reconnect").close();
    say(`Channel ${channel.name} reconnected.`);
    await loadChannels();
    renderChannels();
  } catch (err) {
    $("reconnect-error").textContent = problemText(err);
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
