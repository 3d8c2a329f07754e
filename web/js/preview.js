// How the post will look on each chosen network (compose dialog): Mastodon's status (content
// warning as a "Show more" disclosure, visibility, media with their alt texts, sensitive
// media veiled) and Bluesky's post (text, images, or else the link card: the one the service
// froze on the post, or for a new post the first link it will make one from); a thread's replies
// and the first comment below the post, each marked with what it replies to. A sketch of each
// app's layout, not its exact pixels.

import { h } from "./shared.js";

const VISIBILITY_WORDS = { public: "Public", unlisted: "Quiet public", private: "Followers only", direct: "Mentioned people only" };
const URL_RE = /https?:\/\/[^\s<>"']+/;

function thumbs(media, sensitive) {
  if (!media.length) return null;
  return h("ul", { class: "preview-media" }, media.map((m) => h("li", { class: sensitive ? "sensitive" : "" },
    m.url
      ? h("img", { src: m.url, alt: m.alt_text || "", width: "96", height: "72" })
      : h("span", { class: "preview-media-stub", role: "img", "aria-label": m.alt_text || m.name }, m.content_type || "media"),
    sensitive ? h("span", { class: "preview-flag" }, "Sensitive") : null,
    h("span", { class: m.alt_text ? "preview-alt" : "preview-alt missing" }, m.alt_text ? `ALT: ${m.alt_text}` : "No alt text"))));
}

function header(channel, network, extra) {
  return h("p", { class: "preview-head" }, h("strong", {}, channel.name), ` \u00b7 ${network}`, extra ? ` \u00b7 ${extra}` : "");
}

// A status's text and media, behind its content warning when it has one (every part of a
// thread and the first comment carry the channel's options too).
function toot(text, options, media) {
  const body = [h("p", { class: "preview-text" }, text), thumbs(media, Boolean(options.sensitive))];
  return options.spoiler_text
    ? h("details", { class: "preview-cw" }, h("summary", {}, options.spoiler_text, h("span", { class: "hint" }, " (Show more)")), ...body)
    : body;
}

function mastodon(channel, { text, options, media }) {
  return [header(channel, "Mastodon", VISIBILITY_WORDS[options.visibility] || "Account's default visibility"), toot(text, options, media)];
}

function card(c, pending) {
  if (pending) return h("div", { class: "link-card preview-card" }, h("p", { class: "hint" }, `A link card for ${pending} (made when you schedule)`));
  return h("div", { class: "link-card preview-card" },
    h("p", { class: "link-card-title" }, c.title || c.uri),
    c.description ? h("p", { class: "hint" }, c.description) : null,
    h("p", { class: "hint" }, new URL(c.uri).host));
}

function bluesky(channel, { text, options, media, linkCard, cardRemoved, isNew }) {
  let embed = thumbs(media, false);
  if (!media.length && !cardRemoved) {
    const first = (text.match(URL_RE) || [])[0];
    if (linkCard) embed = card(linkCard, null);
    else if (isNew && first) embed = card(null, first);
  }
  const tags = options.tags && options.tags.length ? h("p", { class: "hint" }, `Tags: ${options.tags.map((x) => `#${x}`).join(" ")}`) : null;
  const langs = options.langs && options.langs.length ? `Languages: ${options.langs.join(", ")}` : null;
  return [header(channel, "Bluesky", langs), h("p", { class: "preview-text" }, text), embed, tags];
}

/** The thread's replies after part 1, then the first comment: each as a reply below it. */
function replies(platform, { parts, options, comment }) {
  const body = (text, media = []) => (platform === "mastodon" ? toot(text, options, media) : [h("p", { class: "preview-text" }, text), thumbs(media, false)]);
  const total = parts.length + 1;
  const items = parts.map((p, i) => h("li", { class: "preview-reply" },
    h("p", { class: "preview-head" }, `Part ${i + 2} of ${total} · a reply to part ${i + 1}`), body(p.text, p.media)));
  if (comment) {
    const later = comment.delayMinutes ? `, ${comment.delayMinutes} min after the post` : "";
    items.push(h("li", { class: "preview-reply preview-comment" },
      h("p", { class: "preview-head" }, `First comment · a reply to part 1${later}`), body(comment.content)));
  }
  return items.length ? h("ol", { class: "preview-thread" }, items) : null;
}

/**
 * The previews of the chosen network channels: `items` is [{channel, text, options, parts:
 * [{text, media}]}] and `shared` {media: [{name, url, alt_text, content_type}], linkCard, cardRemoved,
 * isNew, comment: {content, delayMinutes} | null}.
 */
export function renderPreviews(target, items, shared) {
  const shown = items.filter((x) => x.channel.platform === "mastodon" || x.channel.platform === "bluesky");
  target.hidden = !shown.length;
  target.replaceChildren(...(shown.length ? [h("h3", { class: "option-title" }, "Preview")] : []),
    ...shown.map((x) => h("section", { class: `preview preview-${x.channel.platform}`, "aria-label": `Preview on ${x.channel.name}` },
      ...(x.channel.platform === "mastodon" ? mastodon : bluesky)(x.channel, { ...shared, ...x }),
      replies(x.channel.platform, { ...shared, ...x }))));
}
