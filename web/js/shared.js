// What the views share: the page state, DOM helpers, status badges, messages.

import { ApiError } from "./api.js";
import * as t from "./time.js";

export const zone = t.browserZone();
export const POLL_MS = Number(new URLSearchParams(window.location.search).get("poll_ms")) || 5000;
export const TERMINAL = new Set(["published", "partially_published", "failed", "missed", "cancelled"]);

// Status badges: an icon and a word for each, so no state relies on colour alone.
export const BADGES = {
  scheduled: ["\u25F7", "Scheduled"],
  publishing: ["\u21BB", "Publishing"],
  published: ["\u2713", "Published"],
  partially_published: ["\u25D0", "Partially published"],
  failed: ["\u2715", "Failed"],
  missed: ["\u26A0", "Missed"],
  cancelled: ["\u2298", "Cancelled"],
  pending: ["\u25F7", "Pending"],
  retry_scheduled: ["\u21BB", "Retry scheduled"],
  skipped: ["\u2298", "Skipped"],
};

export const state = {
  config: null,
  api: null,
  view: "week",
  anchor: t.today(zone),
  posts: [],
  channels: [],
  series: [],
  drafts: [],
  endpoints: [],
  planned: [], // occurrences of active series past the materialization horizon, in view
  editing: null, // the post being edited (its version is sent as If-Match)
  detail: null,
  detailSettled: false, // the open detail is final and its history complete: polling stops
  pollTimer: null,
  dstChoice: null,
  channelFilter: "", // a channel_id: show only its posts ("": all)
  statusFilter: "", // a post status: show only posts in it ("": all; planned occurrences count as scheduled)
};

export const $ = (id) => document.getElementById(id);

/** Build an element: h("a", {href, class: "x"}, "text", child). Text is never parsed as HTML. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function badge(status) {
  const [icon, word] = BADGES[status] || ["\u2022", status];
  return h("span", { class: `badge badge-${status}` }, h("span", { "aria-hidden": "true" }, icon), h("span", { class: "badge-word" }, ` ${word}`));
}

export function say(text) {
  $("status").textContent = text;
}

export function problemText(err) {
  if (!(err instanceof ApiError)) return String(err.message || err);
  if (err.status === 429) return `Too many requests or too many pending posts: ${err.message}`;
  return err.message;
}

export function channelName(id) {
  const c = state.channels.find((x) => x.channel_id === id);
  return c ? c.name : `${id} (deleted)`;
}

export function firstLine(text) {
  const line = (text || "").split("\n")[0];
  return line.length > 80 ? `${line.slice(0, 79)}\u2026` : line;
}


export function clearErrors(...ids) {
  for (const id of ids) $(id).textContent = "";
}

export function confirmAction(title, text, yes) {
  return new Promise((resolve) => {
    const dialog = $("confirm");
    $("confirm-title").textContent = title;
    $("confirm-text").textContent = text;
    $("confirm-yes").textContent = yes;
    const done = (answer) => {
      $("confirm-yes").onclick = null;
      $("confirm-no").onclick = null;
      dialog.onclose = null;
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    $("confirm-yes").onclick = () => done(true);
    $("confirm-no").onclick = () => done(false);
    dialog.onclose = () => done(false);
    dialog.showModal();
    $("confirm-no").focus();
  });
}
