// The content calendar: sign-in, then the views (calendar.js, compose.js, detail.js,
// channels.js). Plain ES modules, no build step. Every API call goes through Api (api.js).

import { Api } from "./api.js";
import * as auth from "./auth.js";
import { setView, startPolling, stopPolling } from "./calendar.js";
import { loadChannels } from "./channels.js";
import "./compose.js";
import "./detail.js";
import "./imports.js";
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
  state.api = new Api(state.config.api_base, auth.token, signedOut);
  let session = null;
  try {
    session = await auth.init(state.config);
  } catch (err) {
    say(`Sign-in did not complete: ${err.message}`);
  }
  if (session && session.redirecting) say("Signing you in again\u2026");
  else if (session) await enter(session);
  else showSignIn();
}

// A 401: the token expired or the API refuses it (locally: a stack restarted with another
// secret). The session is dropped, so a reload does not bring the refused token back.
function signedOut() {
  if (auth.session() === null && $("app").hidden) return;
  auth.forget();
  for (const dialog of document.querySelectorAll("dialog[open]")) dialog.close();
  resetView();
  showSignIn();
  say("Your session has ended: sign in again.");
}

function resetView() {
  state.posts = [];
  state.channels = [];
  $("calendar").replaceChildren();
}

function showSignIn() {
  stopPolling();
  $("app").hidden = true;
  $("account").hidden = true;
  $("sign-in").hidden = false;
  const local = state.config.auth === "local";
  $("local-sign-in").hidden = !local;
  $("oidc-sign-in").hidden = local;
  $("user-name").value = ""; // never offer the last user's name to whoever comes next
  (local ? $("user-name") : $("oidc-button")).focus();
}

async function enter(session) {
  await loadChannels();
  if (auth.session() === null) return; // refused meanwhile: signedOut() showed the sign-in
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
  resetView();
  showSignIn();
  say("");
});

start();
