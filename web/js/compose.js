// The compose / edit dialog: live counts per channel, DST-aware publish time, If-Match edits.

import { countLines } from "./counts.js";
import { refresh } from "./calendar.js";
import { $, BADGES, clearErrors, firstLine, h, problemText, say, state, zone } from "./shared.js";
import { loadDrafts, renderDrafts } from "./drafts.js";
import { checkUploadsAgainst, mediaForPreview, mediaIdsForPost, resetMedia } from "./media.js";
import { renderPreviews } from "./preview.js";
import { linkCardBox, optionFields } from "./options.js";
import { clearThreadErrors, firstComment, resetThread, showThreadErrors, threadBody, threadParts, updateThreadCounts } from "./thread.js";
import * as t from "./time.js";

export function renderChannelOptions(selected) {
  const options = state.channels.map((c) => h("div", { class: "check" },
    h("input", { type: "checkbox", id: `ch-${c.channel_id}`, value: c.channel_id, checked: selected.includes(c.channel_id) }),
    h("label", { for: `ch-${c.channel_id}` }, c.name)));
  $("channel-options").replaceChildren(...(options.length ? options : [h("p", {}, "You have no channels yet: add one under Channels first.")]));
  for (const box of $("channel-options").querySelectorAll("input")) {
    box.addEventListener("change", () => { renderVariantFields(); updateCounts(); });
  }
  renderVariantFields();
}

// ------------------------------------------------------------------ a text per channel

/** The variants being edited: {channel_id: variant} (the post's own, kept whole). */
let variants = {};
/** The post's frozen Bluesky link card (null: none) and whether the creator removed it. */
let linkCard = null;
let cardRemoved = false;

/** Per chosen channel: "Own text for <channel>" (open when it has a text) and, for a network,
 * "Options for <channel>" (its network options; Bluesky's also the link card). */
export function renderVariantFields() {
  const typed = currentVariantTexts();
  const fields = selectedChannels().flatMap((id) => {
    const channel = state.channels.find((c) => c.channel_id === id) || { name: id, channel_id: id };
    const text = typed[id] ?? (variants[id] && variants[id].content) ?? "";
    const area = h("textarea", { id: `variant-${id}`, rows: "3", "data-channel-id": id, "aria-label": `Own text for ${channel.name}` });
    area.value = text;
    area.addEventListener("input", updateCounts);
    variants[id] = variants[id] || {};
    const bare = Array.isArray(variants[id].media_ids) && !variants[id].media_ids.length;
    const noMedia = h("input", { type: "checkbox", id: `variant-bare-${id}`, checked: bare });
    noMedia.addEventListener("change", () => { variants[id].media_ids = noMedia.checked ? [] : null; updateCounts(); });
    const own = h("details", { class: "variant", open: Boolean(text) || bare || Boolean(variants[id].parts) },
      h("summary", {}, `Own text for ${channel.name}`),
      h("p", { class: "hint" }, "Leave empty to publish the main text on this channel."), area,
      h("div", { class: "check" }, noMedia,
        h("label", { for: noMedia.id }, `Publish on ${channel.name} without the post's media`)),
      ownReplies(id, channel));
    const options = optionFields(channel, variants[id], updateCounts);
    if (!options) return [own];
    const card = channel.platform === "bluesky"
      ? [h("h3", { class: "option-title" }, "Link card"), linkCardBox(linkCard, cardRemoved, () => { cardRemoved = !cardRemoved; renderVariantFields(); updateCounts(); }, !state.editing)]
      : [];
    const set = Object.entries(variants[id]).some(([k, v]) => v !== null && k !== "content" && k !== "media_ids" && k !== "language");
    return [own, h("details", { class: "variant options", open: Boolean(set || (card.length && linkCard)) },
      h("summary", {}, `Options for ${channel.name}`), ...options, ...card)];
  });
  $("variant-fields").replaceChildren(...fields);
}

/** A channel's own thread replies (its variant's `parts`, which replace the post's replies on
 * that channel only): each counted by the channel's rules, added and removed by buttons. None
 * (`parts` not sent) publishes the post's replies there; the API takes 1 to 24. */
function ownReplies(id, channel) {
  const variant = variants[id];
  const label = (i) => `${channel.name}'s own part ${i + 2}`;
  const rows = (variant.parts || []).map((part, i) => {
    const area = h("textarea", { rows: "2", "aria-label": label(i), "data-own-part": id });
    area.value = part.content;
    const counts = h("ul", { class: "counts", "aria-live": "polite" });
    const draw = () => counts.replaceChildren(...countLines(area.value, [{ channel, text: area.value }])
      .map((l) => h("li", { class: l.over ? "over" : "" }, l.text)));
    area.addEventListener("input", () => { part.content = area.value; draw(); updateCounts(); });
    draw();
    const remove = () => {
      variant.parts.splice(i, 1);
      if (!variant.parts.length) variant.parts = null; // the post's replies again
      renderVariantFields();
      updateCounts();
      $(`own-add-${id}`).focus();
    };
    return h("li", { class: "thread-part" }, area, counts,
      h("button", { type: "button", class: "danger", "aria-label": `Remove ${label(i)}`, onclick: remove }, "Remove"));
  });
  const add = () => {
    variant.parts = [...(variant.parts || []), { content: "", media_ids: [] }];
    renderVariantFields();
    updateCounts();
    const areas = $("variant-fields").querySelectorAll(`textarea[data-own-part="${id}"]`);
    areas[areas.length - 1].focus();
  };
  return h("div", { class: "own-replies" },
    h("p", { class: "hint" }, variant.parts
      ? `${channel.name} publishes these replies after part 1 instead of the post's.`
      : `${channel.name} publishes the post's replies, if any.`),
    rows.length ? h("ol", { class: "thread-parts" }, rows) : null,
    h("button", { type: "button", id: `own-add-${id}`, disabled: (variant.parts || []).length >= 24, onclick: add }, `Add a reply for ${channel.name} only`));
}

function currentVariantTexts() {
  const texts = {};
  for (const area of $("variant-fields").querySelectorAll("textarea[data-channel-id]")) texts[area.dataset.channelId] = area.value;
  return texts;
}

/** The body's `variants`: the post's variants for chosen channels, with the typed texts. */
function variantsBody(channelIds) {
  const texts = currentVariantTexts();
  const body = {};
  for (const id of channelIds) {
    // The API shows a variant's unset fields as null: send back only those it sets.
    const kept = Object.fromEntries(Object.entries(variants[id] || {}).filter(([, v]) => v !== null));
    if (texts[id] && texts[id].trim()) kept.content = texts[id];
    else delete kept.content;
    if (Object.keys(kept).length) body[id] = kept;
  }
  return body;
}

export function selectedChannels() {
  return [...$("channel-options").querySelectorAll("input:checked")].map((b) => b.value);
}

/** A chosen channel's effective replies: its variant's own `parts`, else the post's. */
function effectiveParts(id) {
  const own = variants[id] && variants[id].parts;
  return own && own.length ? own : threadParts();
}

export function updateCounts() {
  const text = $("content").value;
  const own = currentVariantTexts();
  const chosen = selectedChannels().map((id) => state.channels.find((c) => c.channel_id === id) || { name: id, channel_id: id });
  const effective = (c) => (own[c.channel_id] && own[c.channel_id].trim() ? own[c.channel_id] : text);
  $("content-counts").replaceChildren(...countLines(text, chosen.map((channel) => ({ channel, text: effective(channel) })))
    .map((l) => h("li", { class: l.over ? "over" : "" }, l.text)));
  updateThreadCounts(chosen.filter((c) => !((variants[c.channel_id] || {}).parts || []).length), chosen);
  const comment = firstComment();
  const bare = (c) => Array.isArray((variants[c.channel_id] || {}).media_ids) && !variants[c.channel_id].media_ids.length;
  renderPreviews($("previews"), chosen.map((channel) => ({
    channel, text: effective(channel), options: variants[channel.channel_id] || {},
    ...(bare(channel) ? { media: [] } : {}), // its variant publishes no media: a Bluesky link card may show
    parts: effectiveParts(channel.channel_id).map((p) => ({ text: p.content, media: p.media || [] })),
  })), { media: mediaForPreview(), linkCard, cardRemoved, isNew: !state.editing, comment });
}
$("media-list").addEventListener("media-changed", () => updateCounts());
checkUploadsAgainst(() => selectedChannels().map((id) => state.channels.find((c) => c.channel_id === id)).filter(Boolean));
$("content").addEventListener("input", updateCounts);
$("thread-box").addEventListener("thread-changed", () => updateCounts());

export function updatePublishHint() {
  state.dstChoice = null;
  $("dst-choice").hidden = true;
  $("publish-error").textContent = "";
  const value = $("publish-at").value;
  const r = t.resolveLocal(value, zone);
  if (r.kind === "ok") {
    $("publish-hint").textContent = `${t.describe(r.instant, zone)} in ${zone}; sent as ${t.toUtc(r.instant)}.`;
  } else if (r.kind === "gap") {
    $("publish-hint").textContent = "";
    $("publish-error").textContent = `${value.replace("T", " ")} does not exist in ${zone}: the clocks go forward over it that day. ` +
      `Choose another time, for example ${t.toLocalInput(r.after, zone).replace("T", " ")}.`;
  } else if (r.kind === "ambiguous") {
    $("publish-hint").textContent = "";
    $("dst-legend").textContent = `${value.replace("T", " ")} happens twice in ${zone} (the clocks go back that day). Which one?`;
    $("dst-options").replaceChildren(...r.choices.map((ms, i) => h("div", { class: "check" },
      h("input", { type: "radio", name: "dst", id: `dst-${i}`, value: String(ms), onchange: () => { state.dstChoice = ms; } }),
      h("label", { for: `dst-${i}` }, `${i === 0 ? "The first" : "The second"}: ${t.formatOffset(t.offsetMinutes(ms, zone))} (${t.toUtc(ms)})`))));
    $("dst-choice").hidden = false;
  } else {
    $("publish-hint").textContent = `Your time zone: ${t.zoneLabel(zone)}.`;
  }
}
$("publish-at").addEventListener("input", updatePublishHint);
$("publish-at").addEventListener("change", updatePublishHint);

function chosenWhen() {
  return document.querySelector('#when-choice input[name="when"]:checked').value;
}

// "Now" and "Next free queue slot" are the API's own words for publish_at ("now",
// "next_free_slot"): the service picks the instant, so the time field is not used.
function updateWhen() {
  const when = chosenWhen();
  const at = when === "at";
  $("publish-at").disabled = !at;
  $("schedule").textContent = when === "draft" ? "Save draft" : (state.editing && state.editing.status !== "draft" ? "Save changes" : "Schedule");
  if (at) updatePublishHint();
  else {
    $("publish-error").textContent = "";
    $("dst-choice").hidden = true;
    const hints = {
      now: "Published as soon as you press Schedule.",
      queue: "The earliest slot free in every chosen channel's posting slots (set under Channels).",
      draft: "Kept as a draft: never published until you choose when.",
    };
    $("publish-hint").textContent = hints[when];
  }
}
for (const radio of document.querySelectorAll('#when-choice input[name="when"]')) radio.addEventListener("change", updateWhen);

export function openCompose(post = null) {
  state.editing = post;
  const draft = Boolean(post && post.status === "draft");
  document.querySelector(`#when-choice input[value="${draft ? "draft" : "at"}"]`).checked = true;
  $("when-choice").hidden = Boolean(post) && !draft; // a scheduled post's edit keeps a time
  $("compose-title").textContent = draft ? "Edit draft" : post ? "Edit post" : "New post";
  clearErrors("compose-error", "content-error", "publish-error", "channels-error", "variants-error", "language-error");
  $("content").value = post ? post.content : "";
  $("language").value = post && post.language ? post.language : "";
  variants = post ? structuredClone(post.variants || {}) : {};
  linkCard = post ? post.link_card || null : null;
  cardRemoved = false;
  resetMedia(post ? post.media_ids : []);
  resetThread(post);
  $("variant-fields").replaceChildren();
  const at = post && post.publish_at ? Date.parse(post.publish_at) : Math.ceil((Date.now() + 60 * 60_000) / 300_000) * 300_000;
  $("publish-at").value = t.toLocalInput(at, zone);
  renderChannelOptions(post ? post.channel_ids : state.channels.slice(0, 1).map((c) => c.channel_id));
  updateCounts();
  updateWhen();
  if (!$("compose").open) $("compose").showModal();
  $("content").focus();
}

$("new-post").addEventListener("click", () => openCompose());
$("compose-close").addEventListener("click", () => $("compose").close());

export function publishInstant() {
  const value = $("publish-at").value;
  const r = t.resolveLocal(value, zone);
  if (r.kind === "ok") return r.instant;
  if (r.kind === "ambiguous") {
    if (state.dstChoice !== null) return state.dstChoice;
    $("publish-error").textContent = "Choose which of the two times you mean.";
    return null;
  }
  if (r.kind === "invalid") $("publish-error").textContent = "Enter a date and a time.";
  // A gap already shows its message.
  return null;
}

export function showFieldErrors(err) {
  const map = { link_card: "variants-error", media_ids: "media-error", content: "content-error", publish_at: "publish-error", channel_ids: "channels-error", variants: "variants-error", language: "language-error" };
  let placed = showThreadErrors(err.problem);
  for (const [field, msg] of Object.entries(err.fields)) {
    const target = map[field];
    if (target) {
      $(target).textContent = `${field.replace("_", " ")}: ${msg}`;
      placed = true;
    }
  }
  if (!placed || err.status !== 422) $("compose-error").textContent = problemText(err);
  else $("compose-error").textContent = "Please correct the fields marked below.";
}

$("compose-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  clearErrors("compose-error", "content-error", "channels-error", "variants-error", "language-error", "media-error");
  clearThreadErrors();
  const content = $("content").value;
  const channel_ids = selectedChannels();
  let ok = true;
  if (!content.trim()) { $("content-error").textContent = "Write something to post."; ok = false; }
  if (!channel_ids.length) { $("channels-error").textContent = "Choose at least one channel."; ok = false; }
  const media_ids = mediaIdsForPost();
  if (media_ids === null) ok = false;
  const editingDraft = Boolean(state.editing && state.editing.status === "draft");
  const when = state.editing && !editingDraft ? "at" : chosenWhen();
  const instant = when === "at" ? publishInstant() : 0;
  const thread = threadBody(Boolean(state.editing));
  if (instant === null || thread === null || !ok) return;
  const words = { now: "now", queue: "next_free_slot" };
  const body = { content, channel_ids, media_ids, variants: variantsBody(channel_ids), ...thread };
  if (when !== "draft") body.publish_at = words[when] || t.toUtc(instant); // no publish_at: a draft
  const language = $("language").value.trim();
  if (language) body.language = language;
  if (state.editing && cardRemoved) body.link_card = null;
  $("schedule").disabled = true;
  try {
    if (when === "draft" && !state.editing) {
      await state.api.createPost(body, crypto.randomUUID());
      say("Draft saved: find it under Drafts.");
    } else if (state.editing) {
      const saved = await state.api.updatePost(state.editing.schedule_id, state.editing.version, body);
      say(saved.publish_at
        ? `Saved: ${firstLine(saved.content)} at ${t.describe(Date.parse(saved.publish_at), zone)}.`
        : `Draft saved: ${firstLine(saved.content)}.`);
    } else {
      const key = crypto.randomUUID();
      const created = await state.api.createPost(body, key);
      const where = created.queue_slot ? " (the next free queue slot)" : "";
      say(`Scheduled for ${t.describe(Date.parse(created.publish_at), zone)}${where}.`);
      const day = t.wallOf(Date.parse(created.publish_at), zone);
      state.anchor = { year: day.year, month: day.month, day: day.day };
    }
    $("compose").close();
    await refresh({ quiet: true });
    if (state.view === "drafts") await refreshDrafts();
  } catch (err) {
    if (state.editing && (err.status === 412 || err.status === 409)) {
      await reloadAfterConflict(err);
    } else {
      showFieldErrors(err);
    }
  } finally {
    $("schedule").disabled = false;
  }
});

export async function reloadAfterConflict(err) {
  const id = state.editing.schedule_id;
  let latest = null;
  try { latest = await state.api.getPost(id); } catch { /* shown below */ }
  const why = err.status === 412
    ? "This post was changed elsewhere since you opened it. The latest version is loaded below: review it and save again if you still want your change."
    : `This post can no longer be edited${latest ? `: it is now ${BADGES[latest.status]?.[1].toLowerCase() || latest.status}` : ""}. The latest version is loaded below.`;
  if (latest) {
    openCompose(latest);
    if (latest.status !== "scheduled" && latest.status !== "draft") $("schedule").disabled = true;
  }
  $("compose-error").textContent = why;
  await refresh({ quiet: true });
}

async function refreshDrafts() {
  await loadDrafts();
  renderDrafts();
}
