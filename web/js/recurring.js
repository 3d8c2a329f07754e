// Recurring schedules: list with rule, status and next occurrences; pause, resume, end (DELETE);
// create or edit one (weekly days and times, or a cron rule, in an IANA zone) with its rule in
// plain words and a preview (POST /v1/recurring-schedules/preview) in the browser's time zone.
// An edit is a PATCH with If-Match carrying only the fields that changed.

import { $, channelName, clearErrors, confirmAction, firstLine, h, problemText, say, state, zone } from "./shared.js";
import { DAYS, summary } from "./rules.js";
import * as t from "./time.js";

const PREVIEW_COUNT = 5;

let editing = null; // the series being edited, as read (its version goes in If-Match)

export async function loadSeries() {
  try {
    state.series = await state.api.listSeries();
  } catch (err) {
    if (err.status === 401) return;
    say(`Could not load your recurring schedules: ${problemText(err)}`);
  }
}

function ruleText(s) {
  if (s.cron) return `cron ${s.cron} (${s.timezone})`;
  const parts = (s.slots || []).map((slot) => `${slot.days.map((d) => d[0].toUpperCase() + d.slice(1)).join(", ")} at ${slot.times.join(", ")}`);
  return `${parts.join("; ")} (${s.timezone})`;
}

/** An occurrence in the browser's zone, with the schedule's own wall time when that differs. */
function occurrenceText(iso, seriesZone) {
  const at = Date.parse(iso);
  const local = t.describe(at, zone);
  return seriesZone === zone ? local : `${local} \u2014 ${t.timeOfDay(at, seriesZone)} in ${seriesZone}`;
}

function seriesRow(s) {
  const next = (s.next_occurrences || []).slice(0, 3).map((o) => occurrenceText(o.occurrence_at, s.timezone));
  const active = s.status === "active";
  const name = firstLine(s.content);
  return h("tr", {},
    h("th", { scope: "row" }, name, h("span", { class: "hint" }, ` to ${s.channel_ids.map(channelName).join(", ")}`)),
    h("td", { "data-label": "Rule" }, ruleText(s), h("span", { class: "hint rule-words" }, ` ${summary(s)}`)),
    h("td", { "data-label": "Status" }, s.status),
    h("td", { "data-label": "Next" }, next.length ? h("ul", {}, next.map((n) => h("li", {}, n))) : "\u2014"),
    h("td", { "data-label": "Actions" },
      active || s.status === "paused" ? h("button", { type: "button", onclick: () => startEdit(s) }, `Edit ${name}`) : null, " ",
      active ? h("button", { type: "button", onclick: () => act(s, "pause") }, `Pause ${name}`) : null,
      s.status === "paused" ? h("button", { type: "button", onclick: () => act(s, "resume") }, `Resume ${name}`) : null, " ",
      active || s.status === "paused" ? h("button", { type: "button", class: "danger", onclick: () => end(s) }, `End ${name}`) : null));
}

export function renderSeries() {
  const rows = (state.series || []).map(seriesRow);
  $("series-rows").replaceChildren(...(rows.length ? rows : [h("tr", {}, h("td", { colspan: "5" }, "No recurring schedules yet."))]));
  renderForm();
}

let formReady = false;

function renderForm() {
  const chosen = new Set([...$("series-channels").querySelectorAll("input:checked")].map((b) => b.value));
  $("series-channels").replaceChildren(h("legend", {}, "Channels"), ...state.channels.map((c) => h("label", { class: "inline" },
    h("input", { type: "checkbox", value: c.channel_id, checked: chosen.has(c.channel_id) }), ` ${c.name}`)));
  if (formReady) return;
  formReady = true;
  let names = [t.browserZone()];
  try { names = Intl.supportedValuesOf("timeZone"); } catch { /* older browsers: the browser's zone only */ }
  if (!names.includes(t.browserZone())) names.unshift(t.browserZone());
  $("series-zone").replaceChildren(...names.map((z) => h("option", { value: z }, z)));
  $("series-zone").value = t.browserZone();
  $("series-days").replaceChildren(h("legend", {}, "Days"), ...DAYS.map(([v, name]) => h("label", { class: "inline" },
    h("input", { type: "checkbox", value: v }), ` ${name.slice(0, 3)}`)));
}

function kind() {
  return $("series-form").querySelector("input[name=series-kind]:checked").value;
}

function showKind() {
  $("series-weekly").hidden = kind() !== "weekly";
  $("series-cron-box").hidden = kind() !== "cron";
}

/** The form's rule: {timezone, cron} or {timezone, slots}, and max_occurrences (null: none). */
function ruleBody() {
  const body = { timezone: $("series-zone").value };
  if (kind() === "cron") body.cron = $("series-cron").value.trim();
  else {
    const days = [...$("series-days").querySelectorAll("input:checked")].map((b) => b.value);
    const times = $("series-times").value.split(",").map((x) => x.trim()).filter(Boolean);
    body.slots = [{ days, times }];
  }
  const max = $("series-max").value.trim();
  body.max_occurrences = max ? Number(max) : null;
  return body;
}

function showSummary() {
  const rule = ruleBody();
  const empty = rule.cron === "" || (rule.slots && (!rule.slots[0].days.length || !rule.slots[0].times.length));
  $("series-summary").textContent = empty ? "" : summary(rule);
}

function problemOf(err) {
  const fields = Object.entries(err.fields || {});
  return fields.length ? fields.map(([f, m]) => `${f}: ${m}`).join("; ") : problemText(err);
}

/** One weekly pattern for the form: every day of the series' slots at every time (merged). */
function mergedSlots(slots) {
  const days = DAYS.map(([d]) => d).filter((d) => slots.some((s) => s.days.includes(d)));
  const times = [...new Set(slots.flatMap((s) => s.times))].sort();
  return [{ days, times }];
}

function startEdit(series) {
  editing = series;
  clearErrors("series-error");
  $("series-form-title").textContent = `Edit "${firstLine(series.content)}"`;
  $("series-submit").textContent = "Save changes";
  $("series-cancel-edit").hidden = false;
  $("series-content").value = series.content;
  for (const box of $("series-channels").querySelectorAll("input")) box.checked = series.channel_ids.includes(box.value);
  $("series-zone").value = series.timezone;
  $("series-form").querySelector(`input[name=series-kind][value=${series.cron ? "cron" : "weekly"}]`).checked = true;
  $("series-cron").value = series.cron || "";
  const slot = series.slots ? mergedSlots(series.slots)[0] : { days: [], times: [] };
  for (const box of $("series-days").querySelectorAll("input")) box.checked = slot.days.includes(box.value);
  $("series-times").value = slot.times.join(", ");
  $("series-max").value = series.max_occurrences || "";
  $("series-preview-list").replaceChildren();
  showKind();
  showSummary();
  $("series-content").focus();
}

function stopEdit() {
  editing = null;
  $("series-form").reset();
  $("series-form-title").textContent = "New recurring schedule";
  $("series-submit").textContent = "Create schedule";
  $("series-cancel-edit").hidden = true;
  $("series-zone").value = t.browserZone();
  $("series-preview-list").replaceChildren();
  showKind();
  showSummary();
}

/** The PATCH body: only what differs from the series as read (the rule compared as the form shows it). */
function changes(series, body) {
  const patch = {};
  if (body.content !== series.content) patch.content = body.content;
  if (JSON.stringify([...body.channel_ids].sort()) !== JSON.stringify([...series.channel_ids].sort())) patch.channel_ids = body.channel_ids;
  if (body.timezone !== series.timezone) patch.timezone = body.timezone;
  if (body.cron !== undefined && body.cron !== series.cron) patch.cron = body.cron;
  if (body.slots && (!series.slots || JSON.stringify(body.slots) !== JSON.stringify(mergedSlots(series.slots)))) patch.slots = body.slots;
  if ((body.max_occurrences || null) !== (series.max_occurrences || null)) patch.max_occurrences = body.max_occurrences;
  return patch;
}

$("series-form").addEventListener("change", (ev) => {
  if (ev.target.name === "series-kind") showKind();
  showSummary();
});
$("series-form").addEventListener("input", showSummary);
$("series-cancel-edit").addEventListener("click", stopEdit);

$("series-preview").addEventListener("click", async () => {
  clearErrors("series-error");
  const body = ruleBody();
  if (body.max_occurrences === null) delete body.max_occurrences;
  try {
    const preview = await state.api.previewSeries({ ...body, count: PREVIEW_COUNT });
    $("series-preview-list").replaceChildren(...preview.occurrences.map((o) => h("li", {},
      h("time", { datetime: o.occurrence_at }, occurrenceText(o.occurrence_at, body.timezone)))));
  } catch (err) {
    $("series-error").textContent = problemOf(err);
  }
});

$("series-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  clearErrors("series-error");
  const channel_ids = [...$("series-channels").querySelectorAll("input:checked")].map((b) => b.value);
  const body = { ...ruleBody(), content: $("series-content").value, channel_ids };
  try {
    if (editing) {
      const patch = changes(editing, body);
      if (!Object.keys(patch).length) {
        $("series-error").textContent = "Nothing changed.";
        return;
      }
      const saved = await state.api.updateSeries(editing.series_id, editing.version, patch);
      say(`Recurring schedule saved: ${summary(saved)} Its coming posts follow.`);
    } else {
      if (body.max_occurrences === null) delete body.max_occurrences;
      const created = await state.api.createSeries(body, crypto.randomUUID());
      say(`Recurring schedule created: ${ruleText(created)}.`);
    }
    stopEdit();
  } catch (err) {
    if (err.status !== 412) {
      $("series-error").textContent = problemOf(err);
      return;
    }
    say("The schedule changed elsewhere meanwhile: nothing was saved; the list shows it as it is now.");
    stopEdit();
  }
  await loadSeries();
  renderSeries();
});

async function act(series, action) {
  try {
    await state.api.seriesAction(series.series_id, series.version, action);
    say(action === "pause" ? "Paused: its coming posts are cancelled until you resume." : "Resumed from now.");
  } catch (err) {
    say(err.status === 412 ? "The schedule changed elsewhere: the list shows it as it is now." : problemText(err));
  }
  await loadSeries();
  renderSeries();
}

async function end(series) {
  if (!(await confirmAction("End this recurring schedule?", `"${firstLine(series.content)}" stops; its coming posts are cancelled. Published ones stay.`, "End schedule"))) return;
  try {
    await state.api.deleteSeries(series.series_id, series.version);
    say("The recurring schedule was ended.");
    if (editing && editing.series_id === series.series_id) stopEdit();
  } catch (err) {
    say(problemText(err));
  }
  await loadSeries();
  renderSeries();
}
