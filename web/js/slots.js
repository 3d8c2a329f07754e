// A channel's posting slots (PUT/GET/DELETE /v1/channels/{id}/posting-schedule) and its next
// slots with the post in each (GET /v1/channels/{id}/queue), shown in the schedule's zone.

import { $, clearErrors, firstLine, h, problemText, say, state } from "./shared.js";
import * as t from "./time.js";

const DAYS = [["mon", "Monday"], ["tue", "Tuesday"], ["wed", "Wednesday"], ["thu", "Thursday"],
  ["fri", "Friday"], ["sat", "Saturday"], ["sun", "Sunday"]];
const NEXT_COUNT = 6;

let channel = null;

function zones() {
  try { return Intl.supportedValuesOf("timeZone"); } catch { return [t.browserZone()]; }
}

function renderForm(schedule) {
  const select = $("slots-zone");
  const names = zones();
  const zone = schedule ? schedule.timezone : t.browserZone();
  if (!names.includes(zone)) names.unshift(zone);
  select.replaceChildren(...names.map((z) => h("option", { value: z }, z)));
  select.value = zone;
  const chosen = new Set(schedule ? schedule.slots.flatMap((s) => s.days) : []);
  $("slots-days").replaceChildren(h("legend", {}, "Days"), ...DAYS.map(([v, name]) => h("label", { class: "inline" },
    h("input", { type: "checkbox", value: v, checked: chosen.has(v) }), ` ${name}`)));
  const times = schedule ? [...new Set(schedule.slots.flatMap((s) => s.times))] : [];
  $("slots-times").value = times.join(", ");
  $("slots-remove").hidden = !schedule;
}

async function renderNext() {
  const list = $("slots-next");
  try {
    const queue = await state.api.queue(channel.channel_id, NEXT_COUNT);
    list.replaceChildren(...queue.slots.map((slot) => {
      const post = slot.schedule_id && state.posts.find((p) => p.schedule_id === slot.schedule_id);
      const holder = slot.schedule_id ? (post ? `"${firstLine(post.content)}"` : "taken") : "free";
      return h("li", {}, h("time", { datetime: slot.at }, t.describe(Date.parse(slot.at), queue.timezone)), ` \u2014 ${holder}`);
    }));
  } catch (err) {
    list.replaceChildren(h("li", {}, err.status === 422 || err.status === 404 ? "No slots yet." : problemText(err)));
  }
}

/** Open the slots editor of `ch` (a channel of state.channels). */
export async function openSlots(ch) {
  channel = ch;
  clearErrors("slots-error", "slots-times-error");
  $("slots-title").textContent = `Posting slots of ${ch.name}`;
  let schedule = null;
  try {
    schedule = await state.api.postingSchedule(ch.channel_id);
  } catch (err) {
    if (err.status !== 404) $("slots-error").textContent = problemText(err);
  }
  renderForm(schedule);
  await renderNext();
  if (!$("slots").open) $("slots").showModal();
  $("slots-zone").focus();
}

function slotsBody() {
  const days = [...$("slots-days").querySelectorAll("input:checked")].map((b) => b.value);
  const times = $("slots-times").value.split(",").map((x) => x.trim()).filter(Boolean);
  return { timezone: $("slots-zone").value, slots: [{ days, times }] };
}

$("slots-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  clearErrors("slots-error", "slots-times-error");
  const body = slotsBody();
  if (!body.slots[0].days.length) { $("slots-error").textContent = "Choose at least one day."; return; }
  if (!body.slots[0].times.length) { $("slots-times-error").textContent = "Give at least one time, such as 09:00."; return; }
  try {
    await state.api.putPostingSchedule(channel.channel_id, body);
    say(`Posting slots of ${channel.name} saved.`);
    $("slots-remove").hidden = false;
    await renderNext();
  } catch (err) {
    const fields = Object.entries(err.fields || {});
    $("slots-error").textContent = fields.length ? fields.map(([f, m]) => `${f}: ${m}`).join("; ") : problemText(err);
  }
});

$("slots-remove").addEventListener("click", async () => {
  try {
    await state.api.deletePostingSchedule(channel.channel_id);
    say(`Posting slots of ${channel.name} removed.`);
    renderForm(null);
    await renderNext();
  } catch (err) {
    $("slots-error").textContent = problemText(err);
  }
});

$("slots-close").addEventListener("click", () => $("slots").close());
