// Time zones without a library: the browser's IANA zone through Intl, UTC instants on the wire.
//
// A wall time ("2026-03-08T02:30") in a zone can map to no instant (clocks jump forward over it),
// one, or two (clocks go back over it). wallToInstants() finds every instant whose wall time in
// the zone is the one asked for, so the page can refuse a gap and ask about an overlap instead
// of letting Date shift the time silently.

const MINUTE = 60_000;
const DAY = 86_400_000;

// ICU still reports some zones by their pre-rename IANA names (Chromium gives "Asia/Calcutta"
// for Asia/Kolkata). Shown names use the current ones, from the IANA tz database's "backward"
// file; both names are the same zone to Intl.
const RENAMED = {
  "Asia/Calcutta": "Asia/Kolkata",
  "Asia/Katmandu": "Asia/Kathmandu",
  "Asia/Saigon": "Asia/Ho_Chi_Minh",
  "Asia/Rangoon": "Asia/Yangon",
  "Europe/Kiev": "Europe/Kyiv",
  "America/Buenos_Aires": "America/Argentina/Buenos_Aires",
  "Atlantic/Faeroe": "Atlantic/Faroe",
  "Pacific/Enderbury": "Pacific/Kanton",
};

/** The browser's IANA time zone name, e.g. "Asia/Kolkata". */
export function browserZone() {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  return RENAMED[zone] || zone;
}

const partsCache = new Map();
function formatter(zone) {
  let f = partsCache.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit",
    });
    partsCache.set(zone, f);
  }
  return f;
}

/** Wall-clock fields of an instant (ms since epoch) in a zone: {year, month (1-12), day, hour, minute, second}. */
export function wallOf(ms, zone) {
  const out = {};
  for (const p of formatter(zone).formatToParts(new Date(ms))) {
    if (p.type !== "literal") out[p.type] = Number(p.value);
  }
  return { year: out.year, month: out.month, day: out.day, hour: out.hour % 24, minute: out.minute, second: out.second };
}

/** The zone's offset from UTC at an instant, in minutes (east positive: Asia/Kolkata is +330). */
export function offsetMinutes(ms, zone) {
  const w = wallOf(ms, zone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return Math.round((asUtc - Math.floor(ms / 1000) * 1000) / MINUTE);
}

/** "UTC+05:30", "UTC−04:00" (a true minus sign), "UTC" for zero. */
export function formatOffset(minutes) {
  if (minutes === 0) return "UTC";
  const sign = minutes > 0 ? "+" : "\u2212";
  const abs = Math.abs(minutes);
  return `UTC${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** "Asia/Kolkata (UTC+05:30)": the zone named on screen with its offset now. */
export function zoneLabel(zone = browserZone(), now = Date.now()) {
  return `${zone} (${formatOffset(offsetMinutes(now, zone))})`;
}

export function pad(n) {
  return String(n).padStart(2, "0");
}

/** Parse "YYYY-MM-DDTHH:MM" (what <input type="datetime-local"> gives) into wall fields, or null. */
export function parseWall(value) {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value || "");
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1).map((x) => Number(x || 0));
  return { year, month, day, hour, minute, second };
}

function sameWall(a, b) {
  return a.year === b.year && a.month === b.month && a.day === b.day &&
    a.hour === b.hour && a.minute === b.minute && a.second === b.second;
}

/**
 * Every instant (ms) whose wall time in `zone` equals `wall`, earliest first: [] for a time in a
 * spring-forward gap, two for a time repeated when clocks go back. Offsets are taken from a day
 * either side, which covers every transition of the IANA database (none is closer than 2 days).
 */
export function wallToInstants(wall, zone) {
  const naive = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  const offsets = new Set([naive - DAY, naive, naive + DAY].map((t) => offsetMinutes(t, zone)));
  const found = new Set();
  for (const off of offsets) {
    const t = naive - off * MINUTE;
    if (sameWall(wallOf(t, zone), wall)) found.add(t);
  }
  return [...found].sort((a, b) => a - b);
}

/**
 * Resolve a datetime-local value in `zone`:
 * {kind: "ok", instant} | {kind: "gap", after} | {kind: "ambiguous", choices: [ms, ms]} | {kind: "invalid"}.
 * `after` is the first valid minute after the gap, offered to the user, never applied silently.
 */
export function resolveLocal(value, zone) {
  const wall = parseWall(value);
  if (!wall) return { kind: "invalid" };
  const found = wallToInstants(wall, zone);
  if (found.length === 1) return { kind: "ok", instant: found[0] };
  if (found.length > 1) return { kind: "ambiguous", choices: found };
  // The clocks jumped over `wall`: find the transition instant (the first minute after the gap)
  // by bisection between the instants the offsets before and after map `wall` to.
  const naive = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute);
  const after = offsetMinutes(naive + DAY, zone);
  let lo = naive - after * MINUTE; // still under the old offset
  let hi = naive - offsetMinutes(naive - DAY, zone) * MINUTE; // already under the new one
  while (hi - lo > MINUTE) {
    const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
    if (offsetMinutes(mid, zone) === after) hi = mid; else lo = mid;
  }
  return { kind: "gap", after: hi };
}

/** An instant as RFC 3339 UTC with milliseconds: "2026-03-08T10:00:00.000Z". */
export function toUtc(ms) {
  return new Date(ms).toISOString();
}

/** An instant's wall time in `zone` as a datetime-local value "YYYY-MM-DDTHH:MM". */
export function toLocalInput(ms, zone) {
  const w = wallOf(ms, zone);
  return `${w.year}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}`;
}

/** "14:05" for an instant in `zone`. */
export function timeOfDay(ms, zone) {
  const w = wallOf(ms, zone);
  return `${pad(w.hour)}:${pad(w.minute)}`;
}

/** A date key "YYYY-MM-DD" for an instant in `zone`. */
export function dateKey(ms, zone) {
  const w = wallOf(ms, zone);
  return `${w.year}-${pad(w.month)}-${pad(w.day)}`;
}

/** A long local date and time for humans: "Mon 30 Nov 2026, 14:05 (UTC+05:30)". */
export function describe(ms, zone) {
  const text = new Intl.DateTimeFormat("en-GB", {
    timeZone: zone, weekday: "short", day: "numeric", month: "short", year: "numeric",
    hour: "2-digit", minute: "2-digit", hourCycle: "h23",
  }).format(new Date(ms));
  return `${text} (${formatOffset(offsetMinutes(ms, zone))})`;
}

// ----- calendar days: plain {year, month, day} values, no instants, so DST never bends a day.

export function addDays(d, n) {
  const t = new Date(Date.UTC(d.year, d.month - 1, d.day + n));
  return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: t.getUTCDate() };
}

export function weekday(d) {
  return (new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay() + 6) % 7; // Monday = 0
}

export function dayKey(d) {
  return `${d.year}-${pad(d.month)}-${pad(d.day)}`;
}

export function today(zone, now = Date.now()) {
  const w = wallOf(now, zone);
  return { year: w.year, month: w.month, day: w.day };
}

/** The first instant of a calendar day in `zone` (midnight, or the first minute after a gap). */
export function startOfDay(d, zone) {
  const found = wallToInstants({ ...d, hour: 0, minute: 0, second: 0 }, zone);
  if (found.length) return found[0];
  const r = resolveLocal(`${dayKey(d)}T00:00`, zone);
  return r.after;
}

/** The days shown by a view: a Monday-first week, or the Monday-first weeks covering a month. */
export function viewDays(view, anchor) {
  if (view === "month") {
    const first = { year: anchor.year, month: anchor.month, day: 1 };
    const start = addDays(first, -weekday(first));
    const days = [];
    for (let d = start; days.length < 42; d = addDays(d, 1)) days.push(d);
    // Drop a trailing week that lies wholly in the next month.
    while (days.length > 28 && days[days.length - 7].month !== anchor.month) days.splice(-7);
    return days;
  }
  const start = addDays(anchor, -weekday(anchor));
  return Array.from({ length: 7 }, (_, i) => addDays(start, i));
}

/** Move the anchor one view back (-1) or forward (+1). */
export function shiftAnchor(view, anchor, step) {
  if (view === "month") {
    const t = new Date(Date.UTC(anchor.year, anchor.month - 1 + step, 1));
    return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: 1 };
  }
  return addDays(anchor, 7 * step);
}
