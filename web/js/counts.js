// Live length counts per channel, by the rules the API enforces.
//
// Every post: 1 to 5,000 Unicode code points (PostCreate.content in openapi.json).
// A channel whose GET /v1/channels entry carries `limits` is counted by them (issue 12):
//   max_graphemes  - extended grapheme clusters (UAX #29, Intl.Segmenter), Bluesky 300
//   max_bytes      - UTF-8 bytes, Bluesky 3,000
//   max_characters - Mastodon's instance limit, in graphemes, where each URL counts as
//                    characters_reserved_per_url (23 when absent) and "@user@domain" as "@user"
// A webhook channel has no limit of its own.

export const MAX_CODE_POINTS = 5000;
const URL_RE = /https?:\/\/[^\s<>"]+[^\s<>".,;:!?)\]'"]/giu;
const MENTION_RE = /(^|[^\w@])(@\w+)@[\w.-]+\w/gu;

const segmenter = typeof Intl.Segmenter === "function"
  ? new Intl.Segmenter(undefined, { granularity: "grapheme" })
  : null;

export function graphemes(text) {
  if (!segmenter) return [...text].length;
  let n = 0;
  for (const _ of segmenter.segment(text)) n += 1;
  return n;
}

export function codePoints(text) {
  return [...text].length;
}

export function utf8Bytes(text) {
  return new TextEncoder().encode(text).length;
}

/** Mastodon's count: URLs as `perUrl` characters, remote mentions as the local part. */
export function mastodonLength(text, perUrl = 23) {
  const placeholder = "x".repeat(perUrl);
  const counted = text.replace(URL_RE, placeholder).replace(MENTION_RE, "$1$2");
  return graphemes(counted);
}

/**
 * The counts that apply to `text` on `channel`: [{label, count, limit|null}, ...].
 * `limit` null means "no limit" (shown as such).
 */
export function channelCounts(text, channel) {
  const limits = channel.limits || null;
  if (!limits) return [{ label: "characters", count: codePoints(text), limit: null }];
  const out = [];
  if (limits.max_characters != null) {
    out.push({
      label: "characters",
      count: mastodonLength(text, limits.characters_reserved_per_url ?? 23),
      limit: limits.max_characters,
    });
  }
  if (limits.max_graphemes != null) {
    out.push({ label: "graphemes", count: graphemes(text), limit: limits.max_graphemes });
  }
  if (limits.max_bytes != null) {
    out.push({ label: "bytes", count: utf8Bytes(text), limit: limits.max_bytes });
  }
  if (!out.length) out.push({ label: "characters", count: codePoints(text), limit: null });
  return out;
}

/** "120 / 300 graphemes" or "120 characters (no limit)"; `over` true past the limit. */
export function describeCount({ label, count, limit }) {
  if (limit == null) return { text: `${count} ${label} (no limit)`, over: false };
  const over = count > limit;
  const suffix = over ? ` \u2014 ${count - limit} over the limit` : "";
  return { text: `${count} / ${limit} ${label}${suffix}`, over };
}

/**
 * The count lines of one text box: first the post-wide cap on `text`, then each channel's counts
 * on its own text (`perChannel`: [{channel, text}]): [{text: "Toots: 12 / 500 characters", over}].
 */
export function countLines(text, perChannel) {
  const total = codePoints(text);
  const lines = [{ text: `All channels: ${total} / ${MAX_CODE_POINTS} characters`, over: total > MAX_CODE_POINTS }];
  for (const { channel, text: own } of perChannel) {
    for (const count of channelCounts(own, channel)) {
      const d = describeCount(count);
      lines.push({ text: `${channel.name}: ${d.text}`, over: d.over });
    }
  }
  return lines;
}
