// The content calendar: week and month views, compose/edit, post detail, channels.
// Plain ES modules, no build step. Every API call goes through Api (api.js).

import { Api, ApiError } from "./api.js";
import * as auth from "./auth.js";
import { MAX_CODE_POINTS, channelCounts, codePoints, describeCount } from "./counts.js";
import * as t from "./time.js";

const zone = t.browserZone();
const POLL_MS = Number(new URLSearchParams(window.location.search).get("poll_ms")) || 5000;
const TERMINAL = new Set(["published", "partially_published", "failed", "missed", "cancelled"]);

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

const state = {
  config: null,
  api: null,
  view: "week",
  anchor: t.today(zone),
  posts: [],
  channels: [],
  editing: null, // the post being edited (its version is sent as If-Match)
  detail: null,
  pollTimer: null,
  dstChoice: null,
};

const $ = (id) => document.getElementById(id);

/** Build an element: h("a", {href, class: "x"}, "text", child). Text is never parsed as HTML. */
function h(tag, attrs = {}, ...children) {
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

function badge(status) {
  const [icon, word] = BADGES[status] || ["\u2022", status];
  return h("span", { class: `badge badge-${status}` }, h("span", { "aria-hidden": "true" }, icon), ` ${word}`);
}

function say(text) {
  $("status").textContent = text;
}

function problemText(err) {
  if (!(err instanceof ApiError)) return String(err.message || err);
  if (err.status === 429) return `Too many requests or too many pending posts: ${err.message}`;
  return err.message;
}

function channelName(id) {
  const c = state.channels.find((x) => x.channel_id === id);
  return c ? c.name : `${id} (deleted)`;
}

function firstLine(text) {
  const line = (text || "").split("\n")[0];
  return line.length > 80 ? `${line.slice(0, 79)}\u2026` : line;
}

// ------------------------------------------------------------------ sign-in

async function start() {
  $("zone-name").textContent = t.zoneLabel(zone);
  try {
    const response = await fetch("config.json", { cache: "no-store" });
    state.config = await response.json();
  } catch {
    say("The page's configuration could not be loaded.");
    return;
  }
  state.api = new Api(state.config.api_base, auth.token, () => {
    if (auth.session() === null) showSignIn();
  });
  let session = null;
  try {
    session = await auth.init(state.config);
  } catch (err) {
    say(`Sign-in did not complete: ${err.message}`);
  }
  if (session) await enter(session);
  else showSignIn();
}

function showSignIn() {
  stopPolling();
  $("app").hidden = true;
  $("account").hidden = true;
  $("sign-in").hidden = false;
  const local = state.config.auth === "local";
  $("local-sign-in").hidden = !local;
  $("oidc-sign-in").hidden = local;
  (local ? $("user-name") : $("oidc-button")).focus();
}

async function enter(session) {
  await loadChannels();
  $("sign-in").hidden = true;
  $("app").hidden = false;
  $("account").hidden = false;
  $("account-name").textContent = session.user;
  setView("week");
  $("main").focus();
  startPolling();
}

$("local-sign-in").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  $("sign-in-error").textContent = "";
  const name = $("user-name").value.trim();
  if (!name) {
    $("sign-in-error").textContent = "Enter a user name.";
    return;
  }
  try {
    await enter(await auth.signInLocal(name));
  } catch (err) {
    $("sign-in-error").textContent = err.message;
  }
});
$("oidc-button").addEventListener("click", () => auth.signInOidc());
$("sign-out").addEventListener("click", async () => {
  await auth.signOut(state.config);
  state.posts = [];
  $("calendar").replaceChildren();
  showSignIn();
});

// ------------------------------------------------------------------ views

function setView(view) {
  state.view = view;
  for (const b of document.querySelectorAll("[data-view]")) {
    b.setAttribute("aria-pressed", String(b.dataset.view === view));
  }
  const calendar = view !== "channels";
  $("calendar").hidden = !calendar;
  $("range-title").hidden = !calendar;
  $("move").hidden = !calendar;
  $("channels").hidden = calendar;
  if (calendar) refresh();
  else renderChannels();
}

for (const b of document.querySelectorAll("[data-view]")) {
  b.addEventListener("click", () => setView(b.dataset.view));
}
$("prev").addEventListener("click", () => { state.anchor = t.shiftAnchor(state.view, state.anchor, -1); refresh(); });
$("next").addEventListener("click", () => { state.anchor = t.shiftAnchor(state.view, state.anchor, 1); refresh(); });
$("today").addEventListener("click", () => { state.anchor = t.today(zone); refresh(); });

function visibleDays() {
  return t.viewDays(state.view, state.anchor);
}

async function refresh({ quiet = false } = {}) {
  if (state.view === "channels") return;
  const days = visibleDays();
  const from = t.startOfDay(days[0], zone);
  const to = t.startOfDay(t.addDays(days[days.length - 1], 1), zone);
  try {
    state.posts = await state.api.listPosts(t.toUtc(from), t.toUtc(to));
    if (!quiet) say("");
  } catch (err) {
    say(`Could not load your posts: ${problemText(err)}`);
    return;
  }
  renderCalendar(days);
}

function rangeTitle(days) {
  const fmt = (d, opts) => new Intl.DateTimeFormat("en-GB", { timeZone: "UTC", ...opts })
    .format(new Date(Date.UTC(d.year, d.month - 1, d.day)));
  if (state.view === "month") return fmt(state.anchor, { month: "long", year: "numeric" });
  const a = days[0];
  const b = days[6];
  return `Week of ${fmt(a, { day: "numeric", month: "long" })} \u2013 ${fmt(b, { day: "numeric", month: "long", year: "numeric" })}`;
}

function postItem(post) {
  const at = Date.parse(post.publish_at);
  const channels = post.channel_ids.map(channelName).join(", ");
  return h("li", { class: `post post-${post.status}` },
    h("button", {
      type: "button", class: "post-open", "data-schedule-id": post.schedule_id,
      onclick: () => openDetail(post.schedule_id),
    },
    h("time", { datetime: post.publish_at }, t.timeOfDay(at, zone)), " ",
    badge(post.status),
    post.series_id ? h("span", { class: "recurring", title: "Part of a recurring schedule" }, h("span", { "aria-hidden": "true" }, "\u27F3"), " Recurring") : null,
    h("span", { class: "post-text" }, firstLine(post.content)),
    h("span", { class: "post-channels" }, `To: ${channels}`)));
}

let rendered = ""; // what the grid shows now: a re-render that changes nothing is skipped

function renderCalendar(days) {
  const signature = JSON.stringify([state.view, days[0], days.length, state.channels.map((c) => c.name),
    state.posts.map((p) => [p.schedule_id, p.version, p.status, p.publish_at])]);
  if (signature === rendered && $("calendar").childElementCount) return;
  rendered = signature;
  // Polling re-renders the grid: keep keyboard focus on the same post.
  const focused = document.activeElement && document.activeElement.dataset
    ? document.activeElement.dataset.scheduleId : undefined;
  $("range-title").textContent = rangeTitle(days);
  const byDay = new Map();
  for (const post of state.posts) {
    const key = t.dateKey(Date.parse(post.publish_at), zone);
    if (!byDay.has(key)) byDay.set(key, []);
    byDay.get(key).push(post);
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
      "aria-label": `${fmtDay(d, { weekday: "long", day: "numeric", month: "long" })}${key === todayKey ? " (today)" : ""}, ${posts.length} post${posts.length === 1 ? "" : "s"}`,
    },
    h("h3", { class: "day-title" }, fmtDay(d, state.view === "month" ? { day: "numeric" } : { weekday: "short", day: "numeric", month: "short" })),
    posts.length ? h("ul", { class: "posts" }, posts.map(postItem)) : null);
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

function startPolling() {
  stopPolling();
  state.pollTimer = window.setInterval(async () => {
    if (document.hidden || !auth.session()) return;
    if (state.view !== "channels") await refresh({ quiet: true });
    if (state.detail && $("detail").open && !TERMINAL.has(state.detail.status)) {
      await loadDetail(state.detail.schedule_id, { keepFocus: true });
    }
  }, POLL_MS);
}

function stopPolling() {
  if (state.pollTimer) window.clearInterval(state.pollTimer);
  state.pollTimer = null;
}

// ------------------------------------------------------------------ compose / edit

function clearErrors(...ids) {
  for (const id of ids) $(id).textContent = "";
}

function renderChannelOptions(selected) {
  const options = state.channels.map((c) => h("div", { class: "check" },
    h("input", { type: "checkbox", id: `ch-${c.channel_id}`, value: c.channel_id, checked: selected.includes(c.channel_id) }),
    h("label", { for: `ch-${c.channel_id}` }, c.name)));
  $("channel-options").replaceChildren(...(options.length ? options : [h("p", {}, "You have no channels yet: add one under Channels first.")]));
  for (const box of $("channel-options").querySelectorAll("input")) box.addEventListener("change", updateCounts);
}

function selectedChannels() {
  return [...$("channel-options").querySelectorAll("input:checked")].map((b) => b.value);
}

function updateCounts() {
  const text = $("content").value;
  const items = [];
  const total = codePoints(text);
  items.push(h("li", { class: total > MAX_CODE_POINTS ? "over" : "" }, `All channels: ${total} / ${MAX_CODE_POINTS} characters`));
  for (const id of selectedChannels()) {
    const channel = state.channels.find((c) => c.channel_id === id) || {};
    for (const count of channelCounts(text, channel)) {
      const d = describeCount(count);
      items.push(h("li", { class: d.over ? "over" : "" }, `${channel.name}: ${d.text}`));
    }
  }
  $("content-counts").replaceChildren(...items);
}
$("content").addEventListener("input", updateCounts);

function updatePublishHint() {
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

function openCompose(post = null) {
  state.editing = post;
  $("compose-title").textContent = post ? "Edit post" : "New post";
  $("schedule").textContent = post ? "Save changes" : "Schedule";
  clearErrors("compose-error", "content-error", "publish-error", "channels-error");
  $("content").value = post ? post.content : "";
  const at = post ? Date.parse(post.publish_at) : Date.now() + 60 * 60_000;
  $("publish-at").value = t.toLocalInput(post ? at : Math.ceil(at / 300_000) * 300_000, zone);
  renderChannelOptions(post ? post.channel_ids : state.channels.slice(0, 1).map((c) => c.channel_id));
  updateCounts();
  updatePublishHint();
  if (!$("compose").open) $("compose").showModal();
  $("content").focus();
}

$("new-post").addEventListener("click", () => openCompose());
$("compose-close").addEventListener("click", () => $("compose").close());

function publishInstant() {
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

function showFieldErrors(err) {
  const map = { content: "content-error", publish_at: "publish-error", channel_ids: "channels-error" };
  let placed = false;
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
  clearErrors("compose-error", "content-error", "channels-error");
  const content = $("content").value;
  const channel_ids = selectedChannels();
  let ok = true;
  if (!content.trim()) { $("content-error").textContent = "Write something to post."; ok = false; }
  if (!channel_ids.length) { $("channels-error").textContent = "Choose at least one channel."; ok = false; }
  const instant = publishInstant();
  if (instant === null || !ok) return;
  const body = { content, publish_at: t.toUtc(instant), channel_ids };
  $("schedule").disabled = true;
  try {
    if (state.editing) {
      const saved = await state.api.updatePost(state.editing.schedule_id, state.editing.version, body);
      say(`Saved: ${firstLine(saved.content)} at ${t.describe(Date.parse(saved.publish_at), zone)}.`);
    } else {
      const key = crypto.randomUUID();
      const created = await state.api.createPost(body, key);
      say(`Scheduled for ${t.describe(Date.parse(created.publish_at), zone)}.`);
      const day = t.wallOf(Date.parse(created.publish_at), zone);
      state.anchor = { year: day.year, month: day.month, day: day.day };
    }
    $("compose").close();
    await refresh({ quiet: true });
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

async function reloadAfterConflict(err) {
  const id = state.editing.schedule_id;
  let latest = null;
  try { latest = await state.api.getPost(id); } catch { /* shown below */ }
  const why = err.status === 412
    ? "This post was changed elsewhere since you opened it. The latest version is loaded below: review it and save again if you still want your change."
    : `This post can no longer be edited${latest ? `: it is now ${BADGES[latest.status]?.[1].toLowerCase() || latest.status}` : ""}. The latest version is loaded below.`;
  if (latest) {
    openCompose(latest);
    if (latest.status !== "scheduled") $("schedule").disabled = true;
  }
  $("compose-error").textContent = why;
  await refresh({ quiet: true });
}

// ------------------------------------------------------------------ detail

async function openDetail(id) {
  $("detail-error").textContent = "";
  state.detail = null;
  for (const id of ["detail-edit", "detail-cancel", "detail-retry"]) $(id).hidden = true;
  $("detail-body").replaceChildren(h("p", {}, "Loading\u2026"));
  if (!$("detail").open) $("detail").showModal();
  await loadDetail(id);
  $("detail-close").focus();
}

async function loadDetail(id, { keepFocus = false } = {}) {
  let post;
  let attempts = [];
  try {
    post = await state.api.getPost(id);
    attempts = (await state.api.attempts(id)).items;
  } catch (err) {
    if (!keepFocus) $("detail-error").textContent = problemText(err);
    return;
  }
  state.detail = post;
  const at = Date.parse(post.publish_at);
  const rows = post.deliveries.map((d) => h("tr", {},
    h("th", { scope: "row" }, channelName(d.channel_id)),
    h("td", {}, badge(d.status)),
    h("td", {}, String(d.attempts)),
    h("td", {}, d.remote_url ? h("a", { href: d.remote_url, target: "_blank", rel: "noopener noreferrer" }, "View post") : (d.remote_id || "\u2014")),
    h("td", {}, d.last_error || "\u2014")));
  const attemptRows = attempts.map((a) => h("tr", {},
    h("td", {}, String(a.attempt)),
    h("td", {}, channelName(a.channel_id)),
    h("td", {}, h("time", { datetime: a.started_at }, t.describe(Date.parse(a.started_at), zone))),
    h("td", {}, a.outcome),
    h("td", {}, a.http_status == null ? "\u2014" : String(a.http_status)),
    h("td", {}, a.error || "\u2014")));
  $("detail-body").replaceChildren(...[
    h("h2", { id: "detail-title" }, "Post ", badge(post.status)),
    post.series_id ? h("p", { class: "recurring" }, "\u27F3 An occurrence of a recurring schedule.") : null,
    h("dl", { class: "facts" },
      h("dt", {}, "Publish at"), h("dd", {}, h("time", { datetime: post.publish_at }, t.describe(at, zone)), ` \u2014 ${post.publish_at}`),
      h("dt", {}, "Published"), h("dd", {}, post.published_at ? t.describe(Date.parse(post.published_at), zone) : "not yet"),
      h("dt", {}, "Publish lag"), h("dd", {}, post.publish_lag_seconds == null ? "\u2014" : `${post.publish_lag_seconds.toFixed(3)} s`),
      h("dt", {}, "Content"), h("dd", { class: "content" }, post.content)),
    h("h3", {}, "Channels"),
    h("table", { class: "list" },
      h("thead", {}, h("tr", {}, ["Channel", "Status", "Attempts", "Link", "Last error"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows)),
    h("h3", {}, "Attempts"),
    attempts.length
      ? h("table", { class: "list" },
        h("thead", {}, h("tr", {}, ["#", "Channel", "Started", "Outcome", "HTTP", "Error"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, attemptRows))
      : h("p", {}, "No attempts yet."),
  ].filter(Boolean));
  const scheduled = post.status === "scheduled";
  $("detail-edit").hidden = !scheduled;
  $("detail-cancel").hidden = !scheduled;
  $("detail-retry").hidden = !(post.status === "failed" || post.status === "partially_published");
}

$("detail-close").addEventListener("click", () => $("detail").close());
$("detail").addEventListener("close", () => { state.detail = null; });
$("detail-edit").addEventListener("click", () => {
  const post = state.detail;
  $("detail").close();
  openCompose(post);
});
$("detail-cancel").addEventListener("click", async () => {
  const post = state.detail;
  if (!(await confirmAction("Cancel this post?", `"${firstLine(post.content)}" will not be published. This cannot be undone.`, "Cancel post"))) return;
  try {
    await state.api.cancelPost(post.schedule_id);
    say("The post was cancelled.");
  } catch (err) {
    $("detail-error").textContent = problemText(err);
  }
  await loadDetail(post.schedule_id);
  await refresh({ quiet: true });
  $("detail-close").focus();
});
$("detail-retry").addEventListener("click", async () => {
  const post = state.detail;
  try {
    await state.api.retryPost(post.schedule_id);
    say("Retrying the failed channels.");
  } catch (err) {
    $("detail-error").textContent = problemText(err);
  }
  await loadDetail(post.schedule_id);
  await refresh({ quiet: true });
});

function confirmAction(title, text, yes) {
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

// ------------------------------------------------------------------ channels

async function loadChannels() {
  try {
    state.channels = await state.api.listChannels();
  } catch (err) {
    say(`Could not load your channels: ${problemText(err)}`);
  }
}

function renderChannels() {
  const rows = state.channels.map((c) => h("tr", {},
    h("th", { scope: "row" }, c.name),
    h("td", {}, c.platform),
    h("td", {}, c.url || c.account || "\u2014"),
    h("td", {},
      c.platform === "webhook" ? h("button", { type: "button", onclick: () => rotate(c) }, `Rotate secret of ${c.name}`) : null, " ",
      h("button", { type: "button", class: "danger", onclick: () => removeChannel(c) }, `Delete ${c.name}`))));
  $("channel-rows").replaceChildren(...(rows.length ? rows : [h("tr", {}, h("td", { colspan: "4" }, "No channels yet."))]));
}

function showSecret(secret) {
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

async function rotate(channel) {
  if (!(await confirmAction("Rotate the signing secret?", `${channel.name} gets a new secret; the old one keeps working for a short overlap.`, "Rotate"))) return;
  try {
    const rotated = await state.api.rotateSecret(channel.channel_id);
    say(`New secret for ${channel.name}.`);
    showSecret(rotated.signing_secret);
  } catch (err) {
    $("channel-error").textContent = problemText(err);
  }
}

async function removeChannel(channel) {
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

start();
