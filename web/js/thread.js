// A thread and a first comment in the compose dialog (docs/api.md "Threads and first comments"):
// the main text is part 1, "Add to thread" adds the replies after it (2 to 25 parts in all), each
// with its own counts per chosen channel, moved or removed by buttons; the first comment is a
// reply to part 1, `delay_seconds` after the post (typed in minutes, 0 to 60, fractions allowed).
// Each reply has its own media (a MediaBox: upload, alt text, order), checked per channel by the
// API like part 1's (a 422 names the part).
// Each change dispatches "thread-changed" on #thread-box (the dialog redraws counts, previews).

import { countLines } from "./counts.js";
import { MediaBox } from "./media.js";
import { $, h } from "./shared.js";

const MAX_PARTS = 25; // in all, part 1 included (models/thread.py MAX_THREAD_PARTS)
const MAX_DELAY_MINUTES = 60; // MAX_FIRST_COMMENT_DELAY_SECONDS, 3,600 s

/** The replies being edited: [{key, content, media: MediaBox, file, list, error}]. */
let parts = [];
let nextKey = 0;

/** A new reply with `content` and its media box (read back: an edited post's `mediaIds`). */
function newPart(content, mediaIds = []) {
  const key = nextKey++;
  const part = { key, content };
  part.file = h("input", { id: `part-${key}-media-file`, type: "file", multiple: true, accept: "image/jpeg,image/png,image/gif,image/webp,video/mp4" });
  part.list = h("ul", { class: "media-list" });
  part.error = h("p", { class: "error", id: `part-${key}-media-error` });
  part.media = new MediaBox({ list: part.list, error: part.error, file: part.file, label: () => `Part ${parts.indexOf(part) + 2}: ` });
  if (mediaIds.length) part.media.reset(mediaIds);
  return part;
}

function changed() {
  $("thread-box").dispatchEvent(new Event("thread-changed"));
}

function move(index, by) {
  const [part] = parts.splice(index, 1);
  parts.splice(index + by, 0, part);
  render();
  // Keep the keyboard on the moved part: on the same button, or at an end on its other one.
  const row = $("thread-parts").children[index + by];
  const [same, other] = [".part-up", ".part-down"].map((c) => row.querySelector(c));
  const wanted = by < 0 ? same : other;
  (wanted.disabled ? (by < 0 ? other : same) : wanted).focus();
  changed();
}

function partRow(part, index) {
  const n = index + 2;
  const id = `part-${part.key}`;
  const area = h("textarea", { id, rows: "3", "aria-describedby": `${id}-counts ${id}-error` });
  area.value = part.content;
  area.addEventListener("input", () => { part.content = area.value; $(`${id}-error`).textContent = ""; changed(); });
  part.media.draw(); // its controls named after the part's new number
  return h("li", { class: "thread-part" },
    h("label", { for: id }, `Part ${n} of ${parts.length + 1}`),
    area,
    h("ul", { id: `${id}-counts`, class: "counts", "aria-live": "polite" }),
    h("p", { class: "error", id: `${id}-error` }),
    h("label", { for: part.file.id }, `Add media to part ${n}`),
    part.file,
    part.list,
    part.error,
    h("div", { class: "part-actions" },
      h("button", { type: "button", class: "part-up", "aria-label": `Move part ${n} up`, disabled: index === 0, onclick: () => move(index, -1) }, "Move up"),
      h("button", { type: "button", class: "part-down", "aria-label": `Move part ${n} down`, disabled: index === parts.length - 1, onclick: () => move(index, 1) }, "Move down"),
      h("button", { type: "button", class: "danger", "aria-label": `Remove part ${n}`, onclick: () => remove(index) }, "Remove")));
}

function remove(index) {
  parts.splice(index, 1);
  render();
  const rows = $("thread-parts").children;
  (rows.length ? rows[Math.min(index, rows.length - 1)].querySelector("textarea") : $("add-part")).focus();
  changed();
}

function render() {
  $("thread-parts").replaceChildren(...parts.map(partRow));
  const full = parts.length + 1 >= MAX_PARTS;
  $("add-part").disabled = full;
  $("thread-hint").textContent = full
    ? `A thread has at most ${MAX_PARTS} parts.`
    : parts.length ? `The text above is part 1 of ${parts.length + 1}; each part is published as a reply to the one before.` : "";
}

$("add-part").addEventListener("click", () => {
  parts.push(newPart(""));
  render();
  $("thread-parts").lastElementChild.querySelector("textarea").focus();
  changed();
});
$("thread-box").addEventListener("media-changed", changed); // a reply's upload or alt text
$("first-comment").addEventListener("input", changed);
$("comment-delay").addEventListener("input", changed);

/** Start the dialog with an edited post's `parts` and `first_comment` (none for a new post). */
export function resetThread(post) {
  parts = ((post && post.parts) || []).map((p) => newPart(p.content, p.media_ids || []));
  const comment = post && post.first_comment;
  $("first-comment").value = comment ? comment.content : "";
  $("comment-delay").value = String(comment ? comment.delay_seconds / 60 : 0); // 90 s: 1.5
  $("comment-error").textContent = "";
  $("parts-error").textContent = "";
  render();
}

/** The replies as typed: [{content, media: [{name, url, alt_text, content_type}]}] (previews). */
export function threadParts() {
  return parts.map((part) => ({ content: part.content, media: part.media.forPreview() }));
}

/** The first comment as typed ({content, delayMinutes}), or null when its box is blank. */
export function firstComment() {
  const content = $("first-comment").value;
  if (!content.trim()) return null;
  return { content, delayMinutes: Number($("comment-delay").value) || 0 };
}

/**
 * The body's `parts` and `first_comment`, or null (with a message) for a delay out of range. An
 * edit always sends both (`[]` and `null` remove them); a new post only what it has. Empty
 * parts are sent as they are: the API's 422 names the part (showThreadErrors places it).
 */
export function threadBody(editing) {
  const comment = firstComment();
  const minutes = Number($("comment-delay").value);
  if (comment && !(Number.isFinite(minutes) && minutes >= 0 && minutes <= MAX_DELAY_MINUTES)) {
    $("comment-error").textContent = `First comment: the delay is from 0 to ${MAX_DELAY_MINUTES} minutes.`;
    return null;
  }
  const ids = parts.map((part) => part.media.idsForPost());
  if (ids.includes(null)) return null; // an upload of a reply is unfinished or refused: said there
  const body = {};
  if (editing || parts.length) body.parts = parts.map((part, i) => ({ content: part.content, media_ids: ids[i] }));
  if (editing || comment) body.first_comment = comment && { content: comment.content, delay_seconds: Math.round(minutes * 60) };
  return body;
}

/**
 * Redraw each box's counts: the parts' on `partChannels` (the chosen channels that publish these
 * parts, not a variant's own), the comment's on `commentChannels` (every chosen channel).
 */
export function updateThreadCounts(partChannels, commentChannels) {
  const draw = (target, text, channels) => target.replaceChildren(...countLines(text, channels.map((channel) => ({ channel, text })))
    .map((l) => h("li", { class: l.over ? "over" : "" }, l.text)));
  parts.forEach((part) => draw($(`part-${part.key}-counts`), part.content, partChannels));
  draw($("comment-counts"), $("first-comment").value, commentChannels);
}

/** Empty the parts' and the comment's error lines (before a new attempt to save). */
export function clearThreadErrors() {
  for (const el of $("thread-box").querySelectorAll(".error")) el.textContent = "";
  $("comment-error").textContent = "";
}

/**
 * Place the 422's errors of `problem` on the parts and the comment: `["body", "parts", i, ...]`
 * under part i + 2, `["body", "parts"]` under the thread, `["body", "first_comment", ...]` under
 * the comment. True when one was placed.
 */
export function showThreadErrors(problem) {
  let placed = false;
  for (const e of (problem && problem.errors) || []) {
    const loc = Array.isArray(e.loc) ? e.loc : [];
    const msg = String(e.msg || "is not valid");
    let target = null;
    if (loc[1] === "parts" && Number.isInteger(loc[2]) && parts[loc[2]]) {
      target = $(`part-${parts[loc[2]].key}-error`);
      target.textContent = `Part ${loc[2] + 2}: ${msg}`;
    } else if (loc[1] === "parts") {
      target = $("parts-error");
      target.textContent = `Thread: ${msg}`;
    } else if (loc[1] === "first_comment") {
      target = $("comment-error");
      target.textContent = `First comment: ${msg}`;
    }
    placed = placed || Boolean(target);
  }
  return placed;
}
