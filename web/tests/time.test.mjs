// node --test web/tests: the page's time-zone and counting rules, without a browser.
import assert from "node:assert/strict";
import { test } from "node:test";

import { channelCounts, graphemes, mastodonLength, utf8Bytes } from "../js/counts.js";
import * as t from "../js/time.js";

const iso = (ms) => new Date(ms).toISOString();

test("a plain wall time maps to one UTC instant", () => {
  const r = t.resolveLocal("2026-12-01T09:15", "Asia/Kolkata");
  assert.equal(r.kind, "ok");
  assert.equal(iso(r.instant), "2026-12-01T03:45:00.000Z");
});

test("a time in the spring-forward gap is refused and the gap's end offered", () => {
  const r = t.resolveLocal("2026-03-08T02:30", "America/Los_Angeles");
  assert.equal(r.kind, "gap");
  assert.equal(iso(r.after), "2026-03-08T10:00:00.000Z"); // 03:00 PDT
});

test("a time repeated on the fall-back day gives both instants, earlier first", () => {
  const r = t.resolveLocal("2026-11-01T01:30", "America/New_York");
  assert.equal(r.kind, "ambiguous");
  assert.deepEqual(r.choices.map(iso), ["2026-11-01T05:30:00.000Z", "2026-11-01T06:30:00.000Z"]);
});

test("a half-hour DST shift (Lord Howe) is found too", () => {
  const gap = t.resolveLocal("2026-10-04T02:15", "Australia/Lord_Howe");
  assert.equal(gap.kind, "gap");
  assert.equal(t.toLocalInput(gap.after, "Australia/Lord_Howe"), "2026-10-04T02:30");
  const overlap = t.resolveLocal("2026-04-05T01:45", "Australia/Lord_Howe");
  assert.equal(overlap.kind, "ambiguous");
  assert.equal(overlap.choices[1] - overlap.choices[0], 30 * 60_000);
});

test("a zone whose DST gap starts at midnight still has a first instant that day", () => {
  // America/Santiago springs forward at 24:00 -> 01:00 on 2026-09-06.
  assert.equal(t.resolveLocal("2026-09-06T00:30", "America/Santiago").kind, "gap");
  assert.equal(iso(t.startOfDay({ year: 2026, month: 9, day: 6 }, "America/Santiago")), "2026-09-06T04:00:00.000Z");
});

test("the zone is named with its offset, renamed zones by their current names", () => {
  assert.equal(t.zoneLabel("Asia/Kolkata", Date.UTC(2026, 11, 1)), "Asia/Kolkata (UTC+05:30)");
  assert.equal(t.zoneLabel("America/New_York", Date.UTC(2026, 6, 1)), "America/New_York (UTC\u221204:00)");
  assert.equal(t.zoneLabel("UTC", 0), "UTC (UTC)");
});

test("week views start on Monday; month views cover whole weeks", () => {
  assert.deepEqual(t.viewDays("week", { year: 2026, month: 12, day: 3 })[0], { year: 2026, month: 11, day: 30 });
  assert.equal(t.viewDays("month", { year: 2027, month: 2, day: 1 }).length, 28); // Mon 1 - Sun 28
  const feb2026 = t.viewDays("month", { year: 2026, month: 2, day: 1 }); // starts on a Sunday
  assert.deepEqual([feb2026.length, feb2026[0], feb2026.at(-1)], [35, { year: 2026, month: 1, day: 26 }, { year: 2026, month: 3, day: 1 }]);
  assert.deepEqual(t.shiftAnchor("month", { year: 2026, month: 12, day: 1 }, 1), { year: 2027, month: 1, day: 1 });
});

test("grapheme, byte and Mastodon counts follow each network's rule", () => {
  const family = "\u{1F468}\u200D\u{1F469}\u200D\u{1F467}"; // one grapheme, 18 bytes
  assert.equal(graphemes(family), 1);
  assert.equal(utf8Bytes(family), 18);
  assert.equal(graphemes("e\u0301"), 1);
  assert.equal(mastodonLength("see https://example.com/a/very/long/path?x=1 now"), 4 + 23 + 4);
  assert.equal(mastodonLength("hi @alice@example.social"), "hi @alice".length);
  const bluesky = channelCounts("a".repeat(301), { limits: { max_graphemes: 300, max_bytes: 3000 } });
  assert.deepEqual(bluesky.map((c) => [c.label, c.count, c.limit]), [["graphemes", 301, 300], ["bytes", 301, 3000]]);
  assert.deepEqual(channelCounts("abc", { platform: "webhook" }), [{ label: "characters", count: 3, limit: null }]);
});
