// Sign-in. Two modes, chosen by /config.json:
//  - "local": the local stack's POST /local/token mints a token for a user name (make run only;
//    a deployment has no such endpoint).
//  - "oidc": the authorization-code flow with PKCE through oidc-client-ts (vendored, see
//    web/vendor/README.md) against Cognito's hosted UI. Tokens stay in memory: a reload signs in
//    again through the hosted UI's session. Only the PKCE state of a redirect in flight sits in
//    sessionStorage, as the library keeps it.

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

export async function init(config) {
  if (config.auth !== "oidc") return null;
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
  if (params.has("code") && params.has("state")) {
    const user = await manager.signinRedirectCallback();
    window.history.replaceState({}, "", home);
    current = {
      user: (user.profile && (user.profile.email || user.profile["cognito:username"] || user.profile.sub)) || "signed in",
      accessToken: user.access_token,
      expiresAt: (user.expires_at || 0) * 1000,
    };
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
  return current;
}

export async function signInOidc() {
  await manager.signinRedirect();
}

export async function signOut(config) {
  current = null;
  if (config.auth === "oidc" && manager) {
    await manager.removeUser();
    if (config.logout_url) window.location.assign(config.logout_url);
  }
}

export function session() {
  if (current && current.expiresAt && Date.now() > current.expiresAt - 30_000) current = null;
  return current;
}

export async function token() {
  const s = session();
  return s ? s.accessToken : null;
}
