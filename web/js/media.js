// Media in the compose dialog: each chosen file is uploaded at once (POST /v1/media, the file
// to S3 with the pre-signed form, POST .../complete: the service probes the bytes), shown with
// its state, and given alt text (PATCH /v1/media/{id}). A post (and each reply of a thread)
// names its ready uploads, in order. A MediaBox is one such list: the post's own (part 1) and
// one per reply (thread.js); each dispatches "media-changed" on its list.

import { $, h, problemText, state } from "./shared.js";

async function sha256Hex(file) {
  const digest = await crypto.subtle.digest("SHA-256", await file.arrayBuffer());
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The chosen channels' entries of GET /v1/channels (compose.js sets it): a file their `limits`
 * refuse (kind, size per item, items per post) is refused before anything is uploaded. */
let chosenChannels = () => [];
export function checkUploadsAgainst(channels) { chosenChannels = channels; }

/** Why the chosen channels refuse `file` as the post's `count`-th item, or null. The API checks
 * the same limits again (platforms/media_rules.py): this only spares a doomed upload. */
function refusal(file, count) {
  for (const c of chosenChannels()) {
    const l = c.limits || {};
    if (l.supported_mime_types && !l.supported_mime_types.includes(file.type)) return `${c.name} does not take ${file.type || "this kind of file"}`;
    const cap = file.type.startsWith("video/") ? l.video_size_limit : l.image_size_limit;
    if (cap != null && file.size > cap) return `too big for ${c.name}: ${file.size.toLocaleString("en")} bytes, it takes at most ${cap.toLocaleString("en")}`;
    if (l.max_media_attachments != null && count > l.max_media_attachments) return `${c.name} takes at most ${l.max_media_attachments} per post`;
  }
  return null;
}

const WORDS = { uploading: "Uploading\u2026", ready: "Ready", rejected: "Refused", failed: "Upload failed" };

/** One list of uploads: `list` (ul), `error` (p) and `file` (input type=file) elements; `label`
 * (a string, or a function giving it: a reply's number changes when it moves) prefixes the
 * controls' names ("Part 2: ") when several boxes share the dialog. */
export class MediaBox {
  constructor({ list, error, file, label = "" }) {
    Object.assign(this, { list, error, file, label });
    /** [{key, name, media_id, status: "uploading"|"ready"|"rejected"|"failed", alt_text, note, url, content_type}] */
    this.items = [];
    this.nextKey = 0;
    file.addEventListener("change", async () => {
      const files = [...file.files];
      file.value = "";
      await Promise.all(files.map((f) => this.upload(f)));
    });
  }

  changed() {
    this.list.dispatchEvent(new Event("media-changed", { bubbles: true }));
  }

  get prefix() {
    return typeof this.label === "function" ? this.label() : this.label;
  }

  render() {
    this.draw();
    this.changed();
  }

  /** Redraw the list (no event: a reply's row redrawn after a move). */
  draw() {
    this.list.replaceChildren(...this.items.map((item) => {
      const alt = h("input", { type: "text", maxlength: "2000", "aria-label": `${this.prefix}Alt text for ${item.name}`, placeholder: "Describe the image for people who cannot see it" });
      alt.value = item.alt_text || "";
      alt.disabled = item.status !== "ready";
      alt.addEventListener("change", () => this.saveAlt(item, alt.value));
      item.bar = item.status === "uploading"
        ? h("progress", { max: "1", value: String(item.sent || 0), "aria-label": `${this.prefix}Upload of ${item.name}` })
        : null;
      const nudge = item.status === "ready" && !item.alt_text
        ? h("span", { class: "hint alt-nudge" }, "No alt text yet: people who cannot see it will miss it.")
        : null;
      return h("li", { class: `media-item media-${item.status}` },
        h("span", { class: "media-name" }, item.name), " ",
        h("span", { class: "media-status", role: "status" }, WORDS[item.status] || item.status, item.note ? `: ${item.note}` : ""),
        item.bar,
        alt,
        nudge,
        h("button", { type: "button", "aria-label": `${this.prefix}Remove ${item.name}`, onclick: () => { this.items = this.items.filter((x) => x !== item); this.render(); } }, `Remove ${item.name}`));
    }));
  }

  async saveAlt(item, text) {
    this.error.textContent = "";
    try {
      const saved = await state.api.updateMedia(item.media_id, { alt_text: text.trim() || null });
      item.alt_text = saved.alt_text || "";
      const nudge = this.list.children[this.items.indexOf(item)]?.querySelector(".alt-nudge");
      if (nudge) nudge.hidden = Boolean(item.alt_text); // no redraw: the focus stays where it went
      this.changed();
    } catch (err) {
      this.error.textContent = `${this.prefix}Alt text for ${item.name}: ${problemText(err)}`;
    }
  }

  /** A chosen image as a data: URL for the previews (the page's CSP allows data: images, not blob:). */
  thumbnail(item, file) {
    const reader = new FileReader();
    reader.onload = () => {
      item.url = String(reader.result);
      this.changed();
    };
    reader.readAsDataURL(file);
  }

  async upload(file) {
    const item = { key: this.nextKey++, name: file.name, media_id: null, status: "uploading", alt_text: "", note: "", url: null, content_type: file.type };
    const refused = refusal(file, this.items.filter((x) => x.status === "ready" || x.status === "uploading").length + 1);
    this.items.push(item);
    if (refused) {
      Object.assign(item, { status: "rejected", note: `${refused}; nothing was uploaded` });
      this.render();
      return;
    }
    if (file.type.startsWith("image/")) this.thumbnail(item, file);
    this.render();
    try {
      const created = await state.api.createMedia({ content_type: file.type, size: file.size, sha256: await sha256Hex(file) });
      item.media_id = created.media_id;
      await state.api.uploadForm(created.upload, file, (sent) => {
        item.sent = sent;
        if (item.bar) item.bar.value = sent; // no redraw: an alt text being typed stays
      });
      const probed = await state.api.completeMedia(created.media_id);
      item.status = probed.status === "ready" ? "ready" : "rejected";
      item.note = probed.status === "ready" ? `${probed.content_type}${probed.width ? `, ${probed.width}\u00d7${probed.height}` : ""}` : (probed.reason_detail || probed.reason || "");
    } catch (err) {
      item.status = "failed";
      item.note = problemText(err);
    }
    this.render();
  }

  /** Start with `mediaIds` (an edited post's), read back with their alt text. Every id is an
   * item at once, so a save made before the read-backs finish still names them all. */
  async reset(mediaIds = []) {
    this.items = mediaIds.map((id) => ({ key: this.nextKey++, name: id, media_id: id, status: "ready", alt_text: "", note: "" }));
    this.error.textContent = "";
    this.render();
    await Promise.all(this.items.map(async (item) => {
      try {
        const media = await state.api.getMedia(item.media_id);
        item.alt_text = media.alt_text || "";
        item.note = media.content_type || "";
        item.content_type = media.content_type;
      } catch { /* an upload the post names but the service forgot: the post's problem will say */ }
    }));
    this.render();
  }

  /** The `media_ids`, or null (with a message) while an upload is unfinished or refused. */
  idsForPost() {
    if (this.items.some((x) => x.status === "uploading")) {
      this.error.textContent = `${this.prefix}Wait until every upload is ready.`;
      return null;
    }
    if (this.items.some((x) => x.status !== "ready")) {
      this.error.textContent = `${this.prefix}Remove the files that were refused or failed first.`;
      return null;
    }
    return this.items.map((x) => x.media_id);
  }

  /** The media for the previews: [{name, url (a data: URL of a chosen image, else null),
   * alt_text, content_type}], refused and failed uploads left out. */
  forPreview() {
    return this.items.filter((x) => x.status === "ready" || x.status === "uploading")
      .map(({ name, url, alt_text, content_type }) => ({ name, url, alt_text, content_type }));
  }
}

/** The post's own media (part 1). */
const postMedia = new MediaBox({ list: $("media-list"), error: $("media-error"), file: $("media-file") });

/** Start the dialog with `mediaIds` (an edited post's), read back with their alt text. */
export const resetMedia = (mediaIds = []) => postMedia.reset(mediaIds);
/** The post's `media_ids`, or null (with a message) while an upload is unfinished or refused. */
export const mediaIdsForPost = () => postMedia.idsForPost();
/** The post's media for the previews (MediaBox.forPreview). */
export const mediaForPreview = () => postMedia.forPreview();
