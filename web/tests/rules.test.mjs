// node --test web/tests: recurrence rules in plain words.
import assert from "node:assert/strict";
import { test } from "node:test";

import { summary } from "../js/rules.js";

test("a weekly pattern names its days, times and zone", () => {
  const text = summary({ timezone: "America/New_York", slots: [{ days: ["fri", "mon"], times: ["17:30", "09:00"] }] });
  assert.equal(text, "Every Monday and Friday at 09:00 and 17:30, New York time (America/New_York).");
});

test("weekdays, every day and a bound have their own words", () => {
  assert.equal(summary({ timezone: "UTC", slots: [{ days: ["mon", "tue", "wed", "thu", "fri"], times: ["08:00"] }], max_occurrences: 3 }),
    "Every weekday at 08:00, UTC, 3 posts in all.");
  assert.equal(summary({ timezone: "Europe/Paris", slots: [{ days: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], times: ["12:00"] }] }),
    "Every day at 12:00, Paris time (Europe/Paris).");
});

test("a cron's common shapes read as words, others as written", () => {
  assert.equal(summary({ timezone: "Asia/Tokyo", cron: "30 9 * * 1-5" }), "Every weekday at 09:30, Tokyo time (Asia/Tokyo).");
  assert.equal(summary({ timezone: "UTC", cron: "0 8 1 * *" }), "On day 1 of every month at 08:00, UTC.");
  assert.equal(summary({ timezone: "UTC", cron: "15 * * * 0,6" }), "Every weekend day at minute 15 of every hour, UTC.");
  assert.equal(summary({ timezone: "UTC", cron: "*/5 9-17 * * *" }), 'By the cron rule "*/5 9-17 * * *", UTC.');
});
