// Sign-in. Two modes, chosen by /config.json:
//  - "local": the local stack's POST /local/token mints a token for a user name (make run only;
//    a deployment has no such endpoint). The session ({user, accessToken, expiresAt}) sits in
//    this tab's sessionStorage until it expires or the creator signs out, so a reload keeps
//    them signed in (docs/decisions.md, "A reload keeps the session, per tab").
//  - "oidc": the authorization-code flow with PKCE through oidc-client-ts (vendored, see
//    web/vendor/README.md) against Cognito's hosted UI. Tokens stay in memory: a reload goes
//    back through the hosted UI by itself, whose session signs the creator in again. Only a
//    marker that this tab signed in (no token) and the PKCE state of a redirect in flight sit
//    in sessionStorage.

/** sessionStorage key of the local session. */
export const SESSION_KEY = "scheduled-posts.session";
/** sessionStorage key of the OIDC marker: this tab signed in and has not signed out. */
const OIDC_MARK_KEY = "scheduled-posts.oidc-signed-in";
/** A token this close to its expiry counts as expired, in milliseconds. */
const EXPIRY_MARGIN_MS = 30_000;

let current = null; // {user, accessToken, expiresAt}
let manager = null;

function loadScript(src) {
  return new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = src;
    s.onload = resolve;
    s.onerror = () => reject(new Error(`could not load ${src}`));
    document.head.append(s);
  });
}

// A session whose token has not expired (an expiresAt of 0: the provider gave no expiry).
function fresh(s) {
  return Boolean(s && typeof s.accessToken === "string" && typeof s.user === "string"
    && Number.isFinite(s.expiresAt) && (s.expiresAt === 0 || Date.now() < s.expiresAt - EXPIRY_MARGIN_MS));
}

function restoreLocal() {
  let saved = null;
  try {
    saved = JSON.parse(window.sessionStorage.getItem(SESSION_KEY));
  } catch {
    saved = null;
  }
  if (!fresh(saved) || !saved.expiresAt) {
    forget();
    return null;
  }
  current = { user: saved.user, accessToken: saved.accessToken, expiresAt: saved.expiresAt };
  return current;
}

/** The session a reload keeps, or null; `{redirecting: true}` while the page goes to the provider. */
export async function init(config) {
  if (config.auth !== "oidc") return restoreLocal();
  await loadScript("vendor/oidc-client-ts-3.5.0.min.js");
  const { UserManager, WebStorageStateStore, InMemoryWebStorage } = window.oidc;
  const home = new URL(".", window.location.href).href;
  manager = new UserManager({
    authority: config.authority,
    client_id: config.client_id,
    redirect_uri: home,
    post_logout_redirect_uri: home,
    response_type: "code",
    scope: "openid email profile",
    userStore: new WebStorageStateStore({ store: new InMemoryWebStorage() }),
    automaticSilentRenew: false,
    metadataSeed: config.end_session_endpoint ? { end_session_endpoint: config.end_session_endpoint } : undefined,
  });
  const params = new URLSearchParams(window.location.search);
  if ((params.has("code") || params.has("error")) && params.has("state")) {
    let user;
    try {
      user = await manager.signinRedirectCallback();
    } catch (err) {
      window.sessionStorage.removeItem(OIDC_MARK_KEY); // never loop through a failing provider
      throw err;
    } finally {
      window.history.replaceState({}, "", home);
    }
    window.sessionStorage.setItem(OIDC_MARK_KEY, "1");
    current = {
      user: (user.profile && (user.profile.email || user.profile["cognito:username"] || user.profile.sub)) || "signed in",
      accessToken: user.access_token,
      expiresAt: (user.expires_at || 0) * 1000,
    };
  } else if (window.sessionStorage.getItem(OIDC_MARK_KEY)) {
    await manager.signinRedirect();
    return { redirecting: true };
  }
  return current;
}

export async function signInLocal(name) {
  const response = await fetch("/local/token", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ sub: name }),
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new Error((data && (data.detail || data.title)) || "Sign-in failed");
  current = { user: name, accessToken: data.access_token, expiresAt: Date.now() + data.expires_in * 1000 };
  window.sessionStorage.setItem(SESSION_KEY, JSON.stringify(current));
  return current;
}

export async function signInOidc() {
  await manager.signinRedirect();
}

/** Drop the session (expired, refused by the API, or signed out): memory and storage. */
export function forget() {
  current = null;
  window.sessionStorage.removeItem(SESSION_KEY);
}

export async function signOut(config) {
  forget();
  window.sessionStorage.removeItem(OIDC_MARK_KEY);
  if (config.auth === "oidc" && manager) {
    await manager.removeUser();
    if (config.logout_url) window.location.assign(config.logout_url);
  }
}

export function session() {
  if (current && !fresh(current)) forget();
  return current;
}

export async function token() {
  const s = session();
  return s ? s.accessToken : null;
}
