// The content calendar: sign-in, then the views (calendar.js, compose.js, detail.js,
// channels.js). Plain ES modules, no build step. Every API call goes through Api (api.js).

import { Api } from "./api.js";
import * as auth from "./auth.js";
import { setView, startPolling, stopPolling } from "./calendar.js";
import { loadChannels } from "./channels.js";
import "./compose.js";
import "./detail.js";
import { $, say, state, zone } from "./shared.js";
import * as t from "./time.js";

// ------------------------------------------------------------------ sign-in

async function start() {
  $("zone-name").textContent = t.zoneLabel(zone);
  try {
    const response = await fetch("config.json", { cache: "no-store" });
    state.config = await response.json();
  } catch {
    say("The page's configuration could not be loaded.");
    return;
  }
  state.api = new Api(state.config.api_base, auth.token, () => {
    if (auth.session() === null) showSignIn();
  });
  let session = null;
  try {
    session = await auth.init(state.config);
  } catch (err) {
    say(`Sign-in did not complete: ${err.message}`);
  }
  if (session) await enter(session);
  else showSignIn();
}

function showSignIn() {
  stopPolling();
  $("app").hidden = true;
  $("account").hidden = true;
  $("sign-in").hidden = false;
  const local = state.config.auth === "local";
  $("local-sign-in").hidden = !local;
  $("oidc-sign-in").hidden = local;
  (local ? $("user-name") : $("oidc-button")).focus();
}

async function enter(session) {
  await loadChannels();
  $("sign-in").hidden = true;
  $("app").hidden = false;
  $("account").hidden = false;
  $("account-name").textContent = session.user;
  setView("week");
  $("main").focus();
  startPolling();
}

$("local-sign-in").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  $("sign-in-error").textContent = "";
  const name = $("user-name").value.trim();
  if (!name) {
    $("sign-in-error").textContent = "Enter a user name.";
    return;
  }
  try {
    await enter(await auth.signInLocal(name));
  } catch (err) {
    $("sign-in-error").textContent = err.message;
  }
});
$("oidc-button").addEventListener("click", () => auth.signInOidc());
$("sign-out").addEventListener("click", async () => {
  await auth.signOut(state.config);
  state.posts = [];
  $("calendar").replaceChildren();
  showSignIn();
});

start();
