// Recurring schedules: list with rule, status and next occurrences; pause, resume, end; a new
// weekly schedule with a preview (POST /v1/recurring-schedules/preview) before it is created.

import { $, channelName, clearErrors, confirmAction, firstLine, h, problemText, say, state } from "./shared.js";
import * as t from "./time.js";

const DAYS = [["mon", "Mon"], ["tue", "Tue"], ["wed", "Wed"], ["thu", "Thu"], ["fri", "Fri"], ["sat", "Sat"], ["sun", "Sun"]];

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

function seriesRow(s) {
  const next = (s.next_occurrences || []).slice(0, 3).map((o) => t.describe(Date.parse(o.occurrence_at), s.timezone));
  const active = s.status === "active";
  return h("tr", {},
    h("th", { scope: "row" }, firstLine(s.content), h("span", { class: "hint" }, ` to ${s.channel_ids.map(channelName).join(", ")}`)),
    h("td", { "data-label": "Rule" }, ruleText(s)),
    h("td", { "data-label": "Status" }, s.status),
    h("td", { "data-label": "Next" }, next.length ? h("ul", {}, next.map((n) => h("li", {}, n))) : "\u2014"),
    h("td", { "data-label": "Actions" },
      active ? h("button", { type: "button", onclick: () => act(s, "pause") }, `Pause ${firstLine(s.content)}`) : null,
      s.status === "paused" ? h("button", { type: "button", onclick: () => act(s, "resume") }, `Resume ${firstLine(s.content)}`) : null, " ",
      active || s.status === "paused" ? h("button", { type: "button", class: "danger", onclick: () => end(s) }, `End ${firstLine(s.content)}`) : null));
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
    h("input", { type: "checkbox", value: v }), ` ${name}`)));
}

function ruleBody() {
  const days = [...$("series-days").querySelectorAll("input:checked")].map((b) => b.value);
  const times = $("series-times").value.split(",").map((x) => x.trim()).filter(Boolean);
  const body = { timezone: $("series-zone").value, slots: [{ days, times }] };
  const max = $("series-max").value.trim();
  if (max) body.max_occurrences = Number(max);
  return body;
}

function problemOf(err) {
  const fields = Object.entries(err.fields || {});
  return fields.length ? fields.map(([f, m]) => `${f}: ${m}`).join("; ") : problemText(err);
}

$("series-preview").addEventListener("click", async () => {
  clearErrors("series-error");
  const body = ruleBody();
  try {
    const preview = await state.api.previewSeries({ ...body, count: 5 });
    $("series-preview-list").replaceChildren(...preview.occurrences.map((o) => h("li", {},
      h("time", { datetime: o.occurrence_at }, t.describe(Date.parse(o.occurrence_at), body.timezone)))));
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
    const created = await state.api.createSeries(body, crypto.randomUUID());
    say(`Recurring schedule created: ${ruleText(created)}.`);
    $("series-form").reset();
    $("series-zone").value = t.browserZone();
    $("series-preview-list").replaceChildren();
    await loadSeries();
    renderSeries();
  } catch (err) {
    $("series-error").textContent = problemOf(err);
  }
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
  } catch (err) {
    say(problemText(err));
  }
  await loadSeries();
  renderSeries();
}
