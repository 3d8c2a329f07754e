// Week and month views, Previous/Today/Next, and polling of the visible posts.

import * as auth from "./auth.js";
import { loadChannels, renderChannels } from "./channels.js";
import { loadSeries, renderSeries } from "./recurring.js";
import { loadAccount, renderAccount } from "./account.js";
import { loadDrafts, renderDrafts } from "./drafts.js";
import { loadDetail, openDetail } from "./detail.js";
import {
  $,
  POLL_MS,
  badge,
  channelName,
  firstLine,
  h,
  problemText,
  say,
  state,
  zone,
} from "./shared.js";
import * as t from "./time.js";

// ------------------------------------------------------------------ views

export function setView(view) {
  state.view = view;
  for (const b of document.querySelectorAll("[data-view]")) {
    b.setAttribute("aria-pressed", String(b.dataset.view === view));
  }
  const calendar = view === "week" || view === "month";
  $("calendar").hidden = !calendar;
  $("range-title").hidden = !calendar;
  $("move").hidden = !calendar;
  $("channels").hidden = view !== "channels";
  $("recurring").hidden = view !== "recurring";
  $("drafts").hidden = view !== "drafts";
  $("imports").hidden = view !== "imports";
  $("account-view").hidden = view !== "account-view";
  if (calendar) refresh();
  else if (view === "channels") {
    // Shown at once from what is known, then again with each channel's current status.
    renderChannels();
    loadChannels().then(() => { if (state.view === "channels") renderChannels(); });
  } else if (view === "drafts") {
    renderDrafts();
    loadDrafts().then(() => { if (state.view === "drafts") renderDrafts(); });
  } else if (view === "recurring") {
    renderSeries();
    loadSeries().then(() => { if (state.view === "recurring") renderSeries(); });
  } else if (view === "imports") {
    // Nothing to load: the view shows the file last checked or imported.
  } else {
    renderAccount();
    loadAccount().then(() => { if (state.view === "account-view") renderAccount(); });
  }
}

for (const b of document.querySelectorAll("[data-view]")) {
  b.addEventListener("click", () => setView(b.dataset.view));
}
$("prev").addEventListener("click", () => { state.anchor = t.shiftAnchor(state.view, state.anchor, -1); refresh(); });
$("next").addEventListener("click", () => { state.anchor = t.shiftAnchor(state.view, state.anchor, 1); refresh(); });
$("today").addEventListener("click", () => { state.anchor = t.today(zone); refresh(); });

export function visibleDays() {
  return t.viewDays(state.view, state.anchor);
}

export async function refresh({ quiet = false } = {}) {
  if (state.view !== "week" && state.view !== "month") return;
  const days = visibleDays();
  const from = t.startOfDay(days[0], zone);
  const to = t.startOfDay(t.addDays(days[days.length - 1], 1), zone);
  try {
    [state.posts, state.planned] = await Promise.all([
      state.api.listPosts(t.toUtc(from), t.toUtc(to)),
      plannedOccurrences(from, to),
    ]);
    if (!quiet) say("");
  } catch (err) {
    if (err.status === 401) return; // main.js asks to sign in again
    say(`Could not load your posts: ${problemText(err)}`);
    return;
  }
  renderCalendar(days);
}

// ------------------------------------------------------------------ planned occurrences

// A series' occurrences exist as posts only within the materialization horizon; the ones after
// it are drawn from GET .../occurrences (schedule_id null) as "Planned", so a Mon/Wed/Fri series
// shows every day of the week. Read again at most once a minute per series version.
const OCCURRENCES_TTL_MS = 60_000;
const OCCURRENCES_LIMIT = 40;
const occurrenceCache = new Map(); // series_id -> {version, at, items}
let seriesReadAt = 0;

async function plannedOccurrences(from, to) {
  if (Date.now() - seriesReadAt > OCCURRENCES_TTL_MS) {
    seriesReadAt = Date.now();
    try { state.series = await state.api.listSeries(); } catch { /* shown in the Recurring view */ }
  }
  const planned = [];
  for (const series of state.series || []) {
    if (series.status !== "active") continue;
    let cached = occurrenceCache.get(series.series_id);
    if (!cached || cached.version !== series.version || Date.now() - cached.at > OCCURRENCES_TTL_MS) {
      try {
        cached = { version: series.version, at: Date.now(), items: await state.api.occurrences(series.series_id, OCCURRENCES_LIMIT) };
      } catch { continue; }
      occurrenceCache.set(series.series_id, cached);
    }
    for (const o of cached.items) {
      const at = Date.parse(o.occurrence_at);
      if (!o.schedule_id && at >= from && at < to) planned.push({ series, occurrence_at: o.occurrence_at });
    }
  }
  return planned;
}

function plannedItem({ series, occurrence_at }) {
  const at = Date.parse(occurrence_at);
  return h("li", { class: "post post-planned" },
    h("span", { class: "post-open" },
      h("time", { datetime: occurrence_at }, t.timeOfDay(at, zone)), " ",
      h("span", { class: "badge badge-scheduled" }, h("span", { "aria-hidden": "true" }, "\u25F7"), h("span", { class: "badge-word" }, " Planned")),
      h("span", { class: "recurring", title: "Part of a recurring schedule" }, h("span", { "aria-hidden": "true" }, "\u27F3"), h("span", { class: "recurring-word" }, " Recurring")),
      h("span", { class: "post-text" }, firstLine(series.content)),
      h("span", { class: "post-channels" }, `To: ${series.channel_ids.map(channelName).join(", ")}`)));
}

export function rangeTitle(days) {
  const fmt = (d, opts) => new Intl.DateTimeFormat("en-GB", { timeZone: "UTC", ...opts })
    .format(new Date(Date.UTC(d.year, d.month - 1, d.day)));
  if (state.view === "month") return fmt(state.anchor, { month: "long", year: "numeric" });
  const a = days[0];
  const b = days[6];
  return `Week of ${fmt(a, { day: "numeric", month: "long" })} \u2013 ${fmt(b, { day: "numeric", month: "long", year: "numeric" })}`;
}

/** A one-off scheduled post can be dragged to another day (an occurrence moves with its series). */
export function movable(post) {
  return post.status === "scheduled" && !post.series_id;
}

export function postItem(post) {
  const at = Date.parse(post.publish_at);
  const channels = post.channel_ids.map(channelName).join(", ");
  const drag = movable(post)
    ? { draggable: "true", ondragstart: (ev) => { ev.dataTransfer.setData("text/plain", post.schedule_id); ev.dataTransfer.effectAllowed = "move"; } }
    : {};
  return h("li", { class: `post post-${post.status}`, ...drag },
    h("button", {
      type: "button", class: "post-open", "data-schedule-id": post.schedule_id,
      onclick: () => openDetail(post.schedule_id),
    },
    h("time", { datetime: post.publish_at }, t.timeOfDay(at, zone)), " ",
    badge(post.status),
    post.series_id ? h("span", { class: "recurring", title: "Part of a recurring schedule" }, h("span", { "aria-hidden": "true" }, "\u27F3"), h("span", { class: "recurring-word" }, " Recurring")) : null,
    h("span", { class: "post-text" }, firstLine(post.content)),
    h("span", { class: "post-channels" }, `To: ${channels}`)));
}

export let rendered = ""; // what the grid shows now: a re-render that changes nothing is skipped

// ------------------------------------------------------------------ channel filter

function renderFilter() {
  const select = $("channel-filter");
  const wanted = ["", ...state.channels.map((c) => c.channel_id)];
  const have = [...select.options].map((o) => o.value);
  if (JSON.stringify(wanted) === JSON.stringify(have)) return;
  if (!wanted.includes(state.channelFilter)) state.channelFilter = "";
  select.replaceChildren(h("option", { value: "" }, "All channels"),
    ...state.channels.map((c) => h("option", { value: c.channel_id }, c.name)));
  select.value = state.channelFilter;
}

$("channel-filter").addEventListener("change", () => {
  state.channelFilter = $("channel-filter").value;
  renderCalendar(visibleDays());
});
$("status-filter").addEventListener("change", () => {
  state.statusFilter = $("status-filter").value;
  renderCalendar(visibleDays());
});

/** Series occurrences not made yet: shown under every status but one that is not "scheduled". */
function shownPlanned() {
  const only = state.channelFilter;
  const planned = state.statusFilter && state.statusFilter !== "scheduled" ? [] : state.planned || [];
  return only ? planned.filter((p) => p.series.channel_ids.includes(only)) : planned;
}

function shownPosts() {
  const only = state.channelFilter;
  const status = state.statusFilter;
  return state.posts.filter((p) => (!only || p.channel_ids.includes(only)) && (!status || p.status === status));
}

// ------------------------------------------------------------------ drag to another day

/**
 * Move a post to `dayKey` ("YYYY-MM-DD") at the same wall time in the browser's zone. A wall
 * time the clocks skip that day is refused with the first valid time named (never moved
 * silently); a wall time that happens twice takes the earlier instant (the posting queue's and
 * the recurring schedules' DST rule). The change goes through PATCH with If-Match.
 */
export async function movePost(scheduleId, dayKey) {
  const post = state.posts.find((p) => p.schedule_id === scheduleId);
  if (!post || !movable(post)) return;
  const wall = t.wallOf(Date.parse(post.publish_at), zone);
  const [year, month, day] = dayKey.split("-").map(Number);
  if (year === wall.year && month === wall.month && day === wall.day) return;
  const target = { ...wall, year, month, day };
  const found = t.wallToInstants(target, zone);
  if (!found.length) {
    const value = `${dayKey}T${t.pad(wall.hour)}:${t.pad(wall.minute)}`;
    const gap = t.resolveLocal(value, zone);
    say(`${t.pad(wall.hour)}:${t.pad(wall.minute)} does not exist on ${dayKey} in ${zone} (the clocks skip it); the first valid time is ${t.describe(gap.after, zone)}. Open the post and choose a time.`);
    return;
  }
  try {
    await state.api.updatePost(post.schedule_id, post.version, { publish_at: t.toUtc(found[0]) });
    say(`Moved "${firstLine(post.content)}" to ${t.describe(found[0], zone)}.`);
  } catch (err) {
    say(err.status === 412
      ? "The post changed elsewhere meanwhile: the calendar shows it as it is now."
      : `Could not move the post: ${problemText(err)}`);
  }
  await refresh({ quiet: true });
}

function dropTarget(key) {
  return {
    ondragover: (ev) => { ev.preventDefault(); ev.dataTransfer.dropEffect = "move"; },
    ondrop: (ev) => {
      ev.preventDefault();
      const id = ev.dataTransfer.getData("text/plain");
      if (id) movePost(id, key);
    },
  };
}

export function renderCalendar(days) {
  renderFilter();
  const signature = JSON.stringify([state.view, days[0], days.length, state.channels.map((c) => c.name),
    state.channelFilter, state.statusFilter, shownPosts().map((p) => [p.schedule_id, p.version, p.status, p.publish_at]),
    shownPlanned().map((p) => [p.series.series_id, p.occurrence_at])]);
  if (signature === rendered && $("calendar").childElementCount) return;
  rendered = signature;
  // Polling re-renders the grid: keep keyboard focus on the same post.
  const focused = document.activeElement && document.activeElement.dataset
    ? document.activeElement.dataset.scheduleId : undefined;
  $("range-title").textContent = rangeTitle(days);
  const byDay = new Map();
  for (const post of shownPosts()) {
    const key = t.dateKey(Date.parse(post.publish_at), zone);
    if (!byDay.has(key)) byDay.set(key, []);
    byDay.get(key).push(post);
  }
  const plannedByDay = new Map();
  for (const item of shownPlanned()) {
    const key = t.dateKey(Date.parse(item.occurrence_at), zone);
    if (!plannedByDay.has(key)) plannedByDay.set(key, []);
    plannedByDay.get(key).push(item);
  }
  const todayKey = t.dayKey(t.today(zone));
  const fmtDay = (d, opts) => new Intl.DateTimeFormat("en-GB", { timeZone: "UTC", ...opts })
    .format(new Date(Date.UTC(d.year, d.month - 1, d.day)));
  const cells = days.map((d) => {
    const key = t.dayKey(d);
    const posts = byDay.get(key) || [];
    const outside = state.view === "month" && d.month !== state.anchor.month;
    return h("li", {
      class: `day${key === todayKey ? " today" : ""}${outside ? " outside" : ""}`,
      "data-date": key,
      ...dropTarget(key),
      "aria-label": `${fmtDay(d, { weekday: "long", day: "numeric", month: "long" })}${key === todayKey ? " (today)" : ""}, ${posts.length} post${posts.length === 1 ? "" : "s"}`,
    },
    h("h3", { class: "day-title" }, fmtDay(d, state.view === "month" ? { day: "numeric" } : { weekday: "short", day: "numeric", month: "short" })),
    posts.length || plannedByDay.has(key)
      ? h("ul", { class: "posts" }, posts.map(postItem), (plannedByDay.get(key) || []).map(plannedItem))
      : null);
  });
  const head = state.view === "month"
    ? h("ol", { class: "weekdays", "aria-hidden": "true" }, ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map((n) => h("li", {}, n)))
    : null;
  $("calendar").replaceChildren(...[head, h("ol", { class: `grid grid-${state.view}`, "aria-label": rangeTitle(days) }, cells)].filter(Boolean));
  if (focused) {
    const again = $("calendar").querySelector(`[data-schedule-id="${CSS.escape(focused)}"]`);
    if (again) again.focus();
  }
}

// ------------------------------------------------------------------ polling

export function startPolling() {
  stopPolling();
  state.pollTimer = window.setInterval(async () => {
    if (document.hidden || !auth.session()) return;
    await refresh({ quiet: true });
    if (state.detail && $("detail").open && !state.detailSettled) {
      await loadDetail(state.detail.schedule_id, { keepFocus: true });
    }
  }, POLL_MS);
}

export function stopPolling() {
  if (state.pollTimer) window.clearInterval(state.pollTimer);
  state.pollTimer = null;
}
