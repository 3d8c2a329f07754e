// Media in the compose dialog: each chosen file is uploaded at once (POST /v1/media, the file
// to S3 with the pre-signed form, POST .../complete: the service probes the bytes), shown with
// its state, and given alt text (PATCH /v1/media/{id}). A post names its ready uploads, in order.

import { $, h, problemText, state } from "./shared.js";

/** The dialog's media: [{key, name, media_id, status: "uploading"|"ready"|"rejected"|"failed", alt_text, note}]. */
let items = [];
let nextKey = 0;

async function sha256Hex(file) {
  const digest = await crypto.subtle.digest("SHA-256", await file.arrayBuffer());
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function render() {
  $("media-list").dispatchEvent(new Event("media-changed"));
  $("media-list").replaceChildren(...items.map((item) => {
    const alt = h("input", { type: "text", maxlength: "2000", "aria-label": `Alt text for ${item.name}`, placeholder: "Describe the image for people who cannot see it" });
    alt.value = item.alt_text || "";
    alt.disabled = item.status !== "ready";
    alt.addEventListener("change", () => saveAlt(item, alt.value));
    const words = { uploading: "Uploading\u2026", ready: "Ready", rejected: "Refused", failed: "Upload failed" };
    return h("li", { class: `media-item media-${item.status}` },
      h("span", { class: "media-name" }, item.name), " ",
      h("span", { class: "media-status", role: "status" }, words[item.status] || item.status, item.note ? `: ${item.note}` : ""),
      alt,
      h("button", { type: "button", onclick: () => { items = items.filter((x) => x !== item); render(); } }, `Remove ${item.name}`));
  }));
}

async function saveAlt(item, text) {
  $("media-error").textContent = "";
  try {
    const saved = await state.api.updateMedia(item.media_id, { alt_text: text.trim() || null });
    item.alt_text = saved.alt_text || "";
    $("media-list").dispatchEvent(new Event("media-changed"));
  } catch (err) {
    $("media-error").textContent = `Alt text for ${item.name}: ${problemText(err)}`;
  }
}

/** A chosen image as a data: URL for the previews (the page's CSP allows data: images, not blob:). */
function thumbnail(item, file) {
  const reader = new FileReader();
  reader.onload = () => {
    item.url = String(reader.result);
    $("media-list").dispatchEvent(new Event("media-changed"));
  };
  reader.readAsDataURL(file);
}

async function upload(file) {
  const item = { key: nextKey++, name: file.name, media_id: null, status: "uploading", alt_text: "", note: "", url: null, content_type: file.type };
  if (file.type.startsWith("image/")) thumbnail(item, file);
  items.push(item);
  render();
  try {
    const created = await state.api.createMedia({ content_type: file.type, size: file.size, sha256: await sha256Hex(file) });
    item.media_id = created.media_id;
    await state.api.uploadForm(created.upload, file);
    const probed = await state.api.completeMedia(created.media_id);
    item.status = probed.status === "ready" ? "ready" : "rejected";
    item.note = probed.status === "ready" ? `${probed.content_type}${probed.width ? `, ${probed.width}\u00d7${probed.height}` : ""}` : (probed.reason_detail || probed.reason || "");
  } catch (err) {
    item.status = "failed";
    item.note = problemText(err);
  }
  render();
}

$("media-file").addEventListener("change", async () => {
  const files = [...$("media-file").files];
  $("media-file").value = "";
  await Promise.all(files.map(upload));
});

/** Start the dialog with `mediaIds` (an edited post's), read back with their alt text. */
export async function resetMedia(mediaIds = []) {
  items = [];
  $("media-error").textContent = "";
  render();
  for (const id of mediaIds) {
    const item = { key: nextKey++, name: id, media_id: id, status: "ready", alt_text: "", note: "" };
    items.push(item);
    try {
      const media = await state.api.getMedia(id);
      item.alt_text = media.alt_text || "";
      item.note = media.content_type || "";
      item.content_type = media.content_type;
    } catch { /* an upload the post names but the service forgot: the post's problem will say */ }
  }
  render();
}

/** The post's `media_ids`, or null (with a message) while an upload is unfinished or refused. */
export function mediaIdsForPost() {
  if (items.some((x) => x.status === "uploading")) {
    $("media-error").textContent = "Wait until every upload is ready.";
    return null;
  }
  if (items.some((x) => x.status !== "ready")) {
    $("media-error").textContent = "Remove the files that were refused or failed first.";
    return null;
  }
  return items.map((x) => x.media_id);
}

/** The dialog's media for the previews: [{name, url (a data: URL of a chosen image, else
 * null: a data: URL of a chosen image), alt_text, content_type}], refused and failed uploads left out. */
export function mediaForPreview() {
  return items.filter((x) => x.status === "ready" || x.status === "uploading")
    .map(({ name, url, alt_text, content_type }) => ({ name, url, alt_text, content_type }));
}
