// Recurrence rules in plain words, without a browser (node --test web/tests): a weekly pattern
// ("Every Monday and Friday at 10:30, New York time") or a five-field cron, as far as its
// common shapes go; any other cron is named as written.

export const DAYS = [["mon", "Monday"], ["tue", "Tuesday"], ["wed", "Wednesday"], ["thu", "Thursday"],
  ["fri", "Friday"], ["sat", "Saturday"], ["sun", "Sunday"]];
const DAY_NAME = Object.fromEntries(DAYS);
// cron's day-of-week numbers: 0 and 7 are Sunday.
const CRON_DAY = ["sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/** "a", "a and b", "a, b and c". */
export function listWords(words) {
  if (words.length < 2) return words.join("");
  return `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}`;
}

function dayWords(days) {
  const set = new Set(days);
  if (set.size === 7) return "Every day";
  const weekdays = ["mon", "tue", "wed", "thu", "fri"];
  if (set.size === 5 && weekdays.every((d) => set.has(d))) return "Every weekday";
  if (set.size === 2 && set.has("sat") && set.has("sun")) return "Every weekend day";
  return `Every ${listWords(DAYS.filter(([d]) => set.has(d)).map(([d]) => DAY_NAME[d]))}`;
}

function zoneWords(zone) {
  if (zone === "UTC") return "UTC";
  const city = zone.split("/").pop().replace(/_/g, " ");
  return `${city} time (${zone})`;
}

/** The cron's day-of-week field as day ids, or null when it is not a plain list or range. */
function cronDays(field) {
  if (field === "*") return DAYS.map(([d]) => d);
  const days = new Set();
  for (const part of field.split(",")) {
    const range = /^(\d)(?:-(\d))?$/.exec(part);
    if (!range) return null;
    const from = Number(range[1]);
    const to = range[2] === undefined ? from : Number(range[2]);
    if (from > 7 || to > 7 || to < from) return null;
    for (let n = from; n <= to; n += 1) days.add(CRON_DAY[n]);
  }
  return [...days];
}

const pad2 = (n) => String(n).padStart(2, "0");

function cronWords(cron) {
  const [minute, hour, dom, month, dow] = cron.trim().split(/\s+/);
  const plain = /^\d{1,2}$/;
  if (!plain.test(minute) || month !== "*") return null;
  let at;
  if (plain.test(hour)) at = `at ${pad2(hour)}:${pad2(minute)}`;
  else if (hour === "*") at = `at minute ${Number(minute)} of every hour`;
  else if (/^\d{1,2}(,\d{1,2})+$/.test(hour)) at = `at ${listWords(hour.split(",").map((x) => `${pad2(x)}:${pad2(minute)}`))}`;
  else return null;
  if (dom === "*") {
    const days = cronDays(dow);
    return days ? `${dayWords(days)} ${at}` : null;
  }
  if (dow === "*" && /^\d{1,2}$/.test(dom)) return `On day ${Number(dom)} of every month ${at}`;
  return null;
}

/**
 * The rule in words: `{timezone, cron}` or `{timezone, slots: [{days, times}]}`, with
 * `max_occurrences` and `ends_at` (an ISO instant) when given.
 */
export function summary(rule) {
  let text;
  if (rule.cron) {
    text = cronWords(rule.cron) || `By the cron rule "${rule.cron}"`;
  } else {
    text = (rule.slots || []).map((s) => `${dayWords(s.days)} at ${listWords([...s.times].sort())}`).join("; ");
  }
  text += `, ${zoneWords(rule.timezone)}`;
  if (rule.max_occurrences) text += `, ${rule.max_occurrences} post${rule.max_occurrences === 1 ? "" : "s"} in all`;
  return `${text}.`;
}
