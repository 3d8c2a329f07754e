// Network options per channel in the compose dialog (a variant's fields, models/variants.py):
// Mastodon's visibility, content warning (spoiler_text) and sensitive media; Bluesky's langs and
// tags. And the Bluesky link card the service froze on the post, shown with a Remove action
// (sent as link_card: null). Each option is written into the channel's variant as it changes.

import { h } from "./shared.js";

const VISIBILITY = [["", "The account's default"], ["public", "Public"], ["unlisted", "Unlisted (quiet public)"],
  ["private", "Followers only"], ["direct", "Mentioned people only"]];

/** Words separated by commas or spaces, as a list (null when none); `strip` drops a leading #. */
function words(text, strip = false) {
  const list = text.split(/[\s,]+/).map((w) => (strip ? w.replace(/^#/, "") : w)).filter(Boolean);
  return list.length ? list : null;
}

function field(id, label, input, hint) {
  const hintId = hint ? `${id}-hint` : null;
  if (hintId) input.setAttribute("aria-describedby", hintId);
  return [h("label", { for: id }, label), input, hint ? h("p", { class: "hint", id: hintId }, hint) : null];
}

function mastodonFields(id, variant, set) {
  const visibility = h("select", { id: `vis-${id}` }, VISIBILITY.map(([v, word]) => h("option", { value: v }, word)));
  visibility.value = variant.visibility || "";
  visibility.addEventListener("change", () => set("visibility", visibility.value || null));
  const warning = h("input", { id: `cw-${id}`, maxlength: "500", autocomplete: "off" });
  warning.value = variant.spoiler_text || "";
  warning.addEventListener("input", () => set("spoiler_text", warning.value.trim() ? warning.value : null));
  const sensitive = h("input", { type: "checkbox", id: `sensitive-${id}`, checked: Boolean(variant.sensitive) });
  sensitive.addEventListener("change", () => set("sensitive", sensitive.checked ? true : null));
  return [
    ...field(`vis-${id}`, "Visibility", visibility),
    ...field(`cw-${id}`, "CW: a warning shown in place of the text (optional)", warning, "Readers see it first and open the post to read on; it counts toward the instance's length."),
    h("div", { class: "check" }, sensitive, h("label", { for: `sensitive-${id}` }, "Mark the media sensitive")),
  ];
}

function blueskyFields(id, variant, set) {
  const langs = h("input", { id: `langs-${id}`, autocomplete: "off", placeholder: "en, pt-BR" });
  langs.value = (variant.langs || []).join(", ");
  langs.addEventListener("input", () => set("langs", words(langs.value)));
  const tags = h("input", { id: `tags-${id}`, autocomplete: "off", placeholder: "news, launch" });
  tags.value = (variant.tags || []).join(", ");
  tags.addEventListener("input", () => set("tags", words(tags.value, true)));
  return [
    ...field(`langs-${id}`, "Languages of the text (up to 3)", langs, "Separated by commas; left empty, the post's language."),
    ...field(`tags-${id}`, "Extra hashtags (up to 8)", tags, "Without #, separated by commas; added to the post, not to its text."),
  ];
}

/**
 * The options fields of one chosen channel (`null` for a platform without options). `variant`
 * is the channel's variant object, updated in place; `onChange()` runs after each change.
 */
export function optionFields(channel, variant, onChange) {
  const set = (name, value) => { variant[name] = value; onChange(); };
  if (channel.platform === "mastodon") return mastodonFields(channel.channel_id, variant, set);
  if (channel.platform === "bluesky") return blueskyFields(channel.channel_id, variant, set);
  return null;
}

/**
 * The link card box of a Bluesky channel: the post's frozen card (`card`, or null) and whether
 * the creator removed it (`removed`); `toggle()` flips removal. A new post has no card yet.
 */
export function linkCardBox(card, removed, toggle, isNew) {
  if (!card) {
    return h("p", { class: "hint" }, isNew
      ? "Bluesky shows a card for the first link: the service makes it when you schedule, from the page's title and description; edit the post to see or remove it."
      : "No link card: Bluesky shows the post without one.");
  }
  if (removed) {
    return h("div", { class: "link-card removed" },
      h("p", {}, "The link card will be removed when you save."),
      h("button", { type: "button", onclick: toggle }, "Keep the link card"));
  }
  return h("div", { class: "link-card" },
    h("p", { class: "link-card-title" }, card.title || card.uri),
    card.description ? h("p", { class: "hint link-card-description" }, card.description) : null,
    h("p", { class: "hint link-card-uri" }, card.uri, card.thumb ? " \u00b7 with a thumbnail" : ""),
    h("button", { type: "button", class: "danger", onclick: toggle }, "Remove the link card"));
}
