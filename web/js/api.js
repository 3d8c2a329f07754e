// The public HTTP API (openapi.json), with the bearer token and problem+json turned into errors.

export class ApiError extends Error {
  /** `status` (HTTP), `problem` (RFC 9457 body or null), `fields` ({name: message}). */
  constructor(status, problem, fallback) {
    const detail = problem && (problem.detail || problem.title || problem.message);
    super(detail || fallback || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
    this.fields = {};
    for (const e of (problem && problem.errors) || []) {
      const loc = Array.isArray(e.loc) ? e.loc : [];
      // ["body", "channel_ids", 0] -> "channel_ids"; ["header", "If-Match"] -> "If-Match".
      const name = String(loc.length > 1 ? loc[1] : loc[0] || "");
      const msg = String(e.msg || "is not valid");
      this.fields[name] = this.fields[name] ? `${this.fields[name]}; ${msg}` : msg;
    }
  }
}

export class Api {
  /** `base` is the API's origin ("" when the page and the API share one); `tokens()` gives the bearer. */
  constructor(base, tokens, onUnauthorized) {
    this.base = (base || "").replace(/\/$/, "");
    this.tokens = tokens;
    this.onUnauthorized = onUnauthorized;
  }

  async request(method, path, { body, headers = {}, expectEtag = false, asText = false } = {}) {
    const token = await this.tokens();
    const init = { method, headers: { Accept: "application/json", ...headers } };
    if (token) init.headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(this.base + path, init);
    } catch {
      throw new ApiError(0, null, "The service cannot be reached. Check your connection and try again.");
    }
    const text = await response.text();
    let data = null;
    if (text) {
      try { data = JSON.parse(text); } catch { data = null; }
    }
    if (response.status === 401 && this.onUnauthorized) this.onUnauthorized();
    if (!response.ok) throw new ApiError(response.status, data, response.statusText);
    if (expectEtag) return { data, etag: response.headers.get("ETag") };
    if (asText) return text;
    return data;
  }

  async listPosts(fromIso, toIso) {
    const items = [];
    let cursor = null;
    do {
      const q = new URLSearchParams({ from: fromIso, to: toIso, limit: "100" });
      if (cursor) q.set("cursor", cursor);
      const page = await this.request("GET", `/v1/scheduled-posts?${q}`);
      items.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor && items.length < 1000);
    return items;
  }

  listDrafts() {
    return this.request("GET", "/v1/scheduled-posts?status=draft&limit=100").then((r) => r.items);
  }
  deleteDraft(id, version) {
    return this.request("DELETE", `/v1/scheduled-posts/${encodeURIComponent(id)}`, { headers: { "If-Match": `"${version}"` } });
  }
  getPost(id) { return this.request("GET", `/v1/scheduled-posts/${encodeURIComponent(id)}`); }
  attempts(id) { return this.request("GET", `/v1/scheduled-posts/${encodeURIComponent(id)}/attempts`); }
  events(id) { return this.request("GET", `/v1/scheduled-posts/${encodeURIComponent(id)}/events`); }
  createPost(body, key) {
    return this.request("POST", "/v1/scheduled-posts", { body, headers: { "Idempotency-Key": key } });
  }
  updatePost(id, version, body) {
    return this.request("PATCH", `/v1/scheduled-posts/${encodeURIComponent(id)}`, {
      body, headers: { "If-Match": `"${version}"` },
    });
  }
  cancelPost(id) { return this.request("DELETE", `/v1/scheduled-posts/${encodeURIComponent(id)}`); }
  retryPost(id) { return this.request("POST", `/v1/scheduled-posts/${encodeURIComponent(id)}/retry`); }
  listChannels() { return this.request("GET", "/v1/channels").then((r) => r.items); }
  createChannel(body) { return this.request("POST", "/v1/channels", { body }); }
  rotateSecret(id) { return this.request("POST", `/v1/channels/${encodeURIComponent(id)}/rotate-secret`); }
  updateChannel(id, body) { return this.request("PATCH", `/v1/channels/${encodeURIComponent(id)}`, { body }); }
  postingSchedule(id) { return this.request("GET", `/v1/channels/${encodeURIComponent(id)}/posting-schedule`); }
  putPostingSchedule(id, body) { return this.request("PUT", `/v1/channels/${encodeURIComponent(id)}/posting-schedule`, { body }); }
  deletePostingSchedule(id) { return this.request("DELETE", `/v1/channels/${encodeURIComponent(id)}/posting-schedule`); }
  queue(id, count) { return this.request("GET", `/v1/channels/${encodeURIComponent(id)}/queue?count=${count}`); }
  listSeries() { return this.request("GET", "/v1/recurring-schedules?limit=100").then((r) => r.items); }
  previewSeries(body) { return this.request("POST", "/v1/recurring-schedules/preview", { body }); }
  createSeries(body, key) { return this.request("POST", "/v1/recurring-schedules", { body, headers: { "Idempotency-Key": key } }); }
  updateSeries(id, version, body) {
    return this.request("PATCH", `/v1/recurring-schedules/${encodeURIComponent(id)}`, { body, headers: { "If-Match": `"${version}"` } });
  }
  seriesAction(id, version, action) {
    return this.request("POST", `/v1/recurring-schedules/${encodeURIComponent(id)}/${action}`, { headers: { "If-Match": `"${version}"` } });
  }
  deleteSeries(id, version) {
    return this.request("DELETE", `/v1/recurring-schedules/${encodeURIComponent(id)}`, { headers: { "If-Match": `"${version}"` } });
  }
  occurrences(id, limit) { return this.request("GET", `/v1/recurring-schedules/${encodeURIComponent(id)}/occurrences?limit=${limit}`).then((r) => r.items); }
  listEndpoints() { return this.request("GET", "/v1/notification-endpoints").then((r) => r.items); }
  createEndpoint(body) { return this.request("POST", "/v1/notification-endpoints", { body }); }
  rotateEndpoint(id) { return this.request("POST", `/v1/notification-endpoints/${encodeURIComponent(id)}/rotate-secret`); }
  deleteEndpoint(id) { return this.request("DELETE", `/v1/notification-endpoints/${encodeURIComponent(id)}`); }
  eventTypes() { return this.request("GET", "/openapi.json").then((doc) => doc.components.schemas.EventType.enum); }
  exportCsv() { return this.request("GET", "/v1/scheduled-posts/export.csv", { asText: true, headers: { Accept: "text/csv" } }); }
  exportAccount() { return this.request("GET", "/v1/me/export"); }
  createFeed() { return this.request("POST", "/v1/me/calendar-feed"); }
  revokeFeed() { return this.request("DELETE", "/v1/me/calendar-feed"); }
  eraseAccount() { return this.request("DELETE", "/v1/me"); }
  erasureStatus() { return this.request("GET", "/v1/me/erasure"); }
  createMedia(body) { return this.request("POST", "/v1/media", { body }); }
  completeMedia(id) { return this.request("POST", `/v1/media/${encodeURIComponent(id)}/complete`); }
  getMedia(id) { return this.request("GET", `/v1/media/${encodeURIComponent(id)}`); }
  updateMedia(id, body) { return this.request("PATCH", `/v1/media/${encodeURIComponent(id)}`, { body }); }
  /** POST `file` to S3 with the pre-signed form's fields (no bearer: the form's policy is the
   * grant), by XMLHttpRequest since fetch reports no upload progress: `onProgress(fraction)` as
   * bytes go out. Rejects with an ApiError. */
  uploadForm(form, file, onProgress = () => {}) {
    const data = new FormData();
    for (const [k, v] of Object.entries(form.fields)) data.append(k, v);
    data.append("file", file);
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open("POST", form.url);
      xhr.upload.addEventListener("progress", (ev) => { if (ev.lengthComputable) onProgress(ev.loaded / ev.total); });
      xhr.addEventListener("load", () => (xhr.status >= 200 && xhr.status < 300
        ? resolve()
        : reject(new ApiError(xhr.status, null, `The storage service refused the upload (HTTP ${xhr.status}).`))));
      xhr.addEventListener("error", () => reject(new ApiError(0, null, "The upload could not reach the storage service. Try again.")));
      xhr.send(data);
    });
  }
  createImportUpload() { return this.request("POST", "/v1/imports/uploads"); }
  createImport(body, key) {
    return this.request("POST", "/v1/imports", { body, headers: key ? { "Idempotency-Key": key } : {} });
  }
  getImport(id) { return this.request("GET", `/v1/imports/${encodeURIComponent(id)}`); }
  deleteChannel(id) { return this.request("DELETE", `/v1/channels/${encodeURIComponent(id)}`); }
}
