// Post detail: deliveries with remote_url links, lag, attempts, the event history; Edit, Cancel post, Retry.

import { movable, movePost, refresh } from "./calendar.js";
import { openCompose } from "./compose.js";
import {
  $,
  TERMINAL,
  badge,
  channelName,
  confirmAction,
  firstLine,
  h,
  problemText,
  say,
  state,
  zone,
} from "./shared.js";
import * as t from "./time.js";

// ------------------------------------------------------------------ detail

export async function openDetail(id) {
  $("detail-error").textContent = "";
  state.detail = null;
  for (const id of ["detail-edit", "detail-cancel", "detail-retry"]) $(id).hidden = true;
  $("detail-body").replaceChildren(h("p", {}, "Loading\u2026"));
  if (!$("detail").open) $("detail").showModal();
  await loadDetail(id);
  $("detail-close").focus();
}

// What happened to the post: when it was published, or cancelled, or why it was not. A
// cancelled post is never changed again (only a series' resume revives one, as a scheduled
// post), so its updated_at is when it was cancelled: the post.cancelled event's occurred_at.
function outcomeFact(post) {
  const when = (iso) => h("time", { datetime: iso }, t.describe(Date.parse(iso), zone));
  if (post.status === "cancelled") {
    const bySeries = post.series_id && !post.detached ? " by its recurring schedule" : "";
    return [h("dt", {}, "Cancelled"), h("dd", {}, when(post.updated_at), bySeries)];
  }
  if (post.published_at) return [h("dt", {}, "Published"), h("dd", {}, when(post.published_at))];
  const not = { failed: "no: it failed (see its channels below)", missed: "no: it missed its time" };
  return [h("dt", {}, "Published"), h("dd", {}, not[post.status] || "not yet")];
}

// One outcome event (docs/events.md) as a line: its local time, what happened, the channel.
function historyItem({ event }) {
  const what = String(event.type || "").replace(/[._]/g, " ");
  const outcome = event.channel || {};
  const channel = outcome.channel_id ? ` \u2014 ${channelName(outcome.channel_id)}` : "";
  const why = outcome.last_error || "";
  return h("li", {},
    h("time", { datetime: event.occurred_at }, t.describe(Date.parse(event.occurred_at), zone)), " ",
    h("span", { class: "history-type" }, what), channel, why ? `: ${why}` : "");
}

// The post's uploads as the API describes them (GET /v1/media/{id}), read once per detail.
const mediaCache = new Map();

async function mediaOf(post) {
  const ids = [...new Set([...post.media_ids, ...post.deliveries.flatMap((d) => d.media_ids || [])])];
  return Promise.all(ids.map(async (id) => {
    if (!mediaCache.has(id)) {
      try { mediaCache.set(id, await state.api.getMedia(id)); } catch { return { media_id: id, missing: true }; }
    }
    return mediaCache.get(id);
  }));
}

function mediaItem(m) {
  if (m.missing) return h("li", {}, `${m.media_id}: no longer held by the service`);
  const size = m.width ? `, ${m.width}\u00d7${m.height}` : "";
  return h("li", {}, h("span", {}, `${m.content_type || "media"}${size}`), " \u2014 ",
    m.alt_text ? h("span", {}, "Alt text: ", h("q", {}, m.alt_text)) : h("span", { class: "error" }, "No alt text"));
}

/** What a channel publishes when it differs from the post: its own text, media, options. */
function channelSpecifics(post, d) {
  const bits = [];
  if (d.content && d.content !== post.content) bits.push(`Own text: "${firstLine(d.content)}"`);
  if (d.media_ids && JSON.stringify(d.media_ids) !== JSON.stringify(post.media_ids)) bits.push(`${d.media_ids.length} own media`);
  const o = d.options || {};
  if (o.visibility) bits.push(`visibility ${o.visibility}`);
  if (o.spoiler_text) bits.push(`content warning "${o.spoiler_text}"`);
  if (o.sensitive) bits.push("sensitive media");
  if (o.langs) bits.push(`languages ${o.langs.join(", ")}`);
  if (o.tags) bits.push(`tags ${o.tags.map((x) => `#${x}`).join(" ")}`);
  return bits.length ? bits.join("; ") : "The post as written";
}

function linkCell(d) {
  if (d.remote_url) return h("a", { href: d.remote_url, target: "_blank", rel: "noopener noreferrer" }, `View on ${channelName(d.channel_id)}`);
  if (d.remote_id) return d.remote_id;
  return d.planned_remote_url ? h("span", { class: "hint" }, `Will be ${d.planned_remote_url}`) : "\u2014";
}

const external = (url, text) => h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, text);

/** A thread's progress on one channel (`parts_published` "k/n", a link per published part) and
 * its first comment's state, link and error; null for a single post without a comment. */
function threadCell(post, d) {
  const total = 1 + (d.parts || []).length;
  const bits = [];
  if (total > 1) {
    bits.push(h("p", {}, d.parts_published ? `${d.parts_published} parts published` : `${total} parts`));
    const links = (d.published_parts || []).map((p) => h("li", {}, p.remote_url
      ? external(p.remote_url, `Part ${p.index + 1} on ${channelName(d.channel_id)}`)
      : `Part ${p.index + 1}: ${p.remote_id || "published"}`));
    if (links.length) bits.push(h("ul", { class: "part-links" }, links));
  }
  const c = d.first_comment;
  if (c) {
    bits.push(h("p", {}, "First comment: ", badge(c.status),
      c.remote_url ? [" ", external(c.remote_url, `View the first comment on ${channelName(d.channel_id)}`)] : null,
      c.error ? h("span", { class: "error" }, ` ${c.error}`) : null));
  } else if (post.first_comment) {
    bits.push(h("p", {}, "First comment: not yet"));
  }
  return bits.length ? bits : null;
}

function deliveryStatus(d) {
  const when = (iso) => h("time", { datetime: iso }, t.describe(Date.parse(iso), zone));
  return [badge(d.status),
    d.next_attempt_at ? h("span", { class: "hint" }, " next try ", when(d.next_attempt_at)) : null,
    d.verification ? h("span", { class: "error" }, ` ${d.verification === "missing" ? "no longer on the network" : "changed on the network"}`) : null];
}

/** The post's replies (parts 2 to n) and its first comment, as facts. */
function threadFacts(post) {
  const facts = [];
  if ((post.parts || []).length) {
    facts.push(h("dt", {}, "Thread"), h("dd", {}, h("ol", { class: "thread-facts", start: "2", "aria-label": `Parts 2 to ${post.parts.length + 1}` },
      post.parts.map((p) => h("li", { class: "content" }, p.content)))));
  }
  const c = post.first_comment;
  if (c) {
    const later = c.delay_seconds ? `, ${Math.round(c.delay_seconds / 60)} min after the post` : "";
    facts.push(h("dt", {}, "First comment"), h("dd", { class: "content" }, c.content, h("span", { class: "hint" }, ` (a reply to part 1${later})`)));
  }
  return facts;
}

export async function loadDetail(id, { keepFocus = false } = {}) {
  let post;
  let attempts = [];
  let events = [];
  let media = [];
  try {
    post = await state.api.getPost(id);
    [attempts, events, media] = await Promise.all([
      state.api.attempts(id).then((r) => r.items),
      state.api.events(id).then((r) => r.items),
      mediaOf(post),
    ]);
  } catch (err) {
    if (!keepFocus) $("detail-error").textContent = problemText(err);
    return;
  }
  state.detail = post;
  // Events reach the history shortly after the post changes (the outbox relay): an open detail
  // keeps polling until the post is final and its final event is in the history.
  state.detailSettled = TERMINAL.has(post.status) && events.some((e) => e.event.type === `post.${post.status}`);
  const at = Date.parse(post.publish_at);
  const threaded = (post.parts || []).length || post.first_comment || post.deliveries.some((d) => (d.parts || []).length);
  const rows = post.deliveries.map((d) => h("tr", {},
    h("th", { scope: "row" }, channelName(d.channel_id)),
    h("td", { "data-label": "Status" }, deliveryStatus(d)),
    h("td", { "data-label": "Attempts" }, String(d.attempts)),
    h("td", { "data-label": "Link" }, linkCell(d)),
    h("td", { "data-label": "Publishes" }, channelSpecifics(post, d)),
    threaded ? h("td", { "data-label": "Thread" }, threadCell(post, d) || "\u2014") : null,
    h("td", { "data-label": "Last error" }, d.last_error || "\u2014")));
  const attemptRows = attempts.map((a) => h("tr", {},
    h("td", { "data-label": "Attempt" }, String(a.attempt)),
    h("td", { "data-label": "Channel" }, channelName(a.channel_id)),
    h("td", { "data-label": "Started" }, h("time", { datetime: a.started_at }, t.describe(Date.parse(a.started_at), zone))),
    h("td", { "data-label": "Outcome" }, a.outcome),
    h("td", { "data-label": "HTTP" }, a.http_status == null ? "\u2014" : String(a.http_status)),
    h("td", { "data-label": "Error" }, a.error || "\u2014",
      a.remote_url ? [" ", h("a", { href: a.remote_url, target: "_blank", rel: "noopener noreferrer" }, `View attempt ${a.attempt}'s post`)] : null)));
  $("detail-body").replaceChildren(...[
    h("h2", { id: "detail-title" }, "Post ", badge(post.status)),
    post.series_id ? h("p", { class: "recurring" }, "\u27F3 An occurrence of a recurring schedule.") : null,
    h("dl", { class: "facts" },
      h("dt", {}, "Publish at"), h("dd", {}, h("time", { datetime: post.publish_at }, t.describe(at, zone)), ` \u2014 ${post.publish_at}`),
      ...outcomeFact(post),
      h("dt", {}, "Publish lag"), h("dd", {}, post.publish_lag_seconds == null ? "\u2014" : `${post.publish_lag_seconds.toFixed(3)} s`),
      h("dt", {}, "Content"), h("dd", { class: "content" }, post.content),
      ...threadFacts(post)),
    h("h3", {}, "Channels"),
    h("table", { class: "list" },
      h("thead", {}, h("tr", {}, ["Channel", "Status", "Attempts", "Link", "Publishes", threaded ? "Thread" : null, "Last error"]
        .filter(Boolean).map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows)),
    h("h3", {}, "Media"),
    media.length ? h("ul", { class: "history detail-media" }, media.map(mediaItem)) : h("p", {}, "No media."),
    post.link_card ? [h("h3", {}, "Bluesky link card"), h("div", { class: "link-card" },
      h("p", { class: "link-card-title" }, post.link_card.title || post.link_card.uri),
      post.link_card.description ? h("p", { class: "hint" }, post.link_card.description) : null,
      h("p", { class: "hint" }, post.link_card.uri))] : null,
    h("h3", {}, "Attempts (numbered per channel, as the service numbers them)"),
    attempts.length
      ? h("table", { class: "list" },
        h("thead", {}, h("tr", {}, ["#", "Channel", "Started", "Outcome", "HTTP", "Error"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, attemptRows))
      : h("p", {}, "No attempts yet."),
    h("h3", {}, "History"),
    events.length ? h("ol", { class: "history" }, events.map(historyItem)) : h("p", {}, "No events yet."),
  ].flat().filter(Boolean));
  const scheduled = post.status === "scheduled";
  $("detail-move").hidden = !movable(post);
  const wall = t.wallOf(at, zone);
  const day = `${wall.year}-${t.pad(wall.month)}-${t.pad(wall.day)}`;
  if ($("move-day").dataset.for !== `${post.schedule_id}@${post.version}`) {
    $("move-day").value = day; // a new post or version: its own day (never over one being typed)
    $("move-day").dataset.for = `${post.schedule_id}@${post.version}`;
  }
  $("detail-edit").hidden = !scheduled;
  $("detail-cancel").hidden = !scheduled;
  $("detail-retry").hidden = !(post.status === "failed" || post.status === "partially_published");
}

// The keyboard's (and a phone's) way to do what a drag does: another day, the same local time
// (calendar.js movePost: its DST rule, If-Match, the message of a post changed meanwhile). It
// sits outside #detail-body, which polling redraws, so a day being typed is kept.
$("detail-move-button").addEventListener("click", async () => {
  const post = state.detail;
  const day = $("move-day").value;
  if (!post || !day) return;
  await movePost(post.schedule_id, day);
  await loadDetail(post.schedule_id, { keepFocus: true });
});

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
