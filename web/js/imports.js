// Imports: a CSV (or JSON Lines) file is checked first (POST /v1/imports dry_run: every bad row's
// problems by line, nothing written); then committed (202, the queued import) and followed with a
// progress bar from GET /v1/imports/{id} until it is completed or failed, each row's result
// listed. The API refuses a commit while any row is bad, so "Import the good rows" sends the file
// without the bad rows' records and maps the answer's lines back to the file's own.

import { openDetail } from "./detail.js";
import { $, POLL_MS, clearErrors, h, problemText, say, state } from "./shared.js";

/** Bodies up to this size go inline (the API refuses bodies over 64 KiB); larger files go
 * through the pre-signed upload (POST /v1/imports/uploads, up to 5 MB). */
const INLINE_MAX_BYTES = 60 * 1024;

// The chosen file: {name, format, text, records, problems, lineMap}; lineMap maps the sent
// file's lines to the chosen file's (identity unless bad rows were left out).
let chosen = null;
let pollTimer = null;

/**
 * The file's records (RFC 4180: a quoted field may hold newlines) as
 * [{line, text}], `line` the physical line a record starts on (1-based, as the API counts),
 * `text` the record with its line ending. JSON Lines: one record per line.
 */
export function records(text, format) {
  const out = [];
  let line = 1;
  let start = 0;
  let startLine = 1;
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '"' && format === "csv") quoted = !quoted;
    else if (c === "\n") {
      line += 1;
      if (!quoted) {
        out.push({ line: startLine, text: text.slice(start, i + 1) });
        start = i + 1;
        startLine = line;
      }
    }
  }
  if (start < text.length) out.push({ line: startLine, text: text.slice(start) });
  return out;
}

/** The file without the records starting on `badLines`, and its line -> original line map. */
export function withoutLines(recs, badLines, format) {
  const kept = recs.filter((r, i) => (format === "csv" && i === 0) || !badLines.has(r.line));
  const map = new Map();
  let line = 1;
  for (const r of kept) {
    map.set(line, r.line);
    line += (r.text.match(/\n/g) || []).length || 1;
  }
  return { text: kept.map((r) => r.text).join(""), map };
}

/** The body's file part: {content} inline, or {upload_id} after sending it to the upload form. */
async function filePart(text, format) {
  const inline = { content: text, format };
  if (new TextEncoder().encode(JSON.stringify(inline)).length <= INLINE_MAX_BYTES) return inline;
  const created = await state.api.createImportUpload();
  const type = format === "csv" ? "text/csv" : "application/x-ndjson";
  await state.api.uploadForm(created.upload, new File([text], chosen.name, { type }));
  return { upload_id: created.upload_id, format };
}

function problemLine(p) {
  const where = (p.loc || []).join(".");
  return where ? `${where}: ${p.msg}` : p.msg;
}

function renderCheck(check) {
  const bad = check.problems.length;
  $("import-summary").textContent = bad
    ? `${check.rows_total} rows: ${bad} with problems, ${check.rows_total - bad} ready. Fix the file and choose it again, or import the ${check.rows_total - bad} good rows.`
    : `${check.rows_total} rows, all ready to import.`;
  $("import-problems").replaceChildren(...check.problems.map((row) => h("li", {},
    h("strong", {}, `Line ${row.line}`), ": ", row.problems.map(problemLine).join("; "))));
  $("import-commit").hidden = check.rows_total - bad === 0;
  $("import-commit").textContent = bad ? `Import the ${check.rows_total - bad} good rows` : `Import ${check.rows_total} rows`;
}

async function check(file) {
  clearErrors("import-error");
  stopPolling();
  $("import-run").hidden = true;
  $("import-commit").hidden = true;
  $("import-problems").replaceChildren();
  $("import-summary").textContent = `Checking ${file.name}\u2026`;
  const format = /\.jsonl?$/i.test(file.name) ? "jsonl" : "csv";
  const text = await file.text();
  chosen = { name: file.name, format, text, records: records(text, format), problems: [], key: crypto.randomUUID() };
  try {
    const result = await state.api.createImport({ ...(await filePart(text, format)), dry_run: true });
    chosen.problems = result.problems;
    renderCheck(result);
  } catch (err) {
    $("import-summary").textContent = "";
    $("import-error").textContent = problemText(err);
  }
}

async function commit() {
  clearErrors("import-error");
  const bad = new Set(chosen.problems.map((p) => p.line));
  const { text, map } = withoutLines(chosen.records, bad, chosen.format);
  chosen.lineMap = map;
  $("import-commit").disabled = true;
  try {
    const started = await state.api.createImport(await filePart(text, chosen.format), chosen.key);
    $("import-commit").hidden = true;
    renderRun(started);
    follow(started.import_id);
  } catch (err) {
    $("import-error").textContent = problemText(err);
  } finally {
    $("import-commit").disabled = false;
  }
}

function resultItem(row) {
  const line = chosen && chosen.lineMap ? chosen.lineMap.get(row.line) || row.line : row.line;
  if (row.schedule_id) {
    return h("li", {}, h("strong", {}, `Line ${line}`), ": imported ",
      h("button", { type: "button", onclick: () => openDetail(row.schedule_id) }, `Open the post of line ${line}`));
  }
  return h("li", {}, h("strong", {}, `Line ${line}`), ": not imported: ", row.problems.map(problemLine).join("; "));
}

function renderRun(run) {
  $("import-run").hidden = false;
  const done = run.rows_done + run.rows_failed;
  const bar = $("import-progress");
  bar.max = Math.max(run.rows_total, 1);
  bar.value = done;
  const words = { queued: "Queued", running: "Importing", completed: "Completed", failed: "Failed" };
  $("import-state").textContent = `${words[run.status] || run.status}: ${done} of ${run.rows_total} rows done, ${run.rows_done} imported, ${run.rows_failed} not imported${run.error ? ` (${run.error})` : ""}.`;
  $("import-results").replaceChildren(...run.results.map(resultItem));
}

function stopPolling() {
  if (pollTimer) window.clearTimeout(pollTimer);
  pollTimer = null;
}

function follow(importId) {
  stopPolling();
  pollTimer = window.setTimeout(async () => {
    let run;
    try {
      run = await state.api.getImport(importId);
    } catch (err) {
      if (err.status !== 401) $("import-error").textContent = problemText(err);
      return;
    }
    renderRun(run);
    if (run.status === "completed" || run.status === "failed") {
      say(`Import ${run.status}: ${run.rows_done} posts imported, ${run.rows_failed} rows not imported.`);
      return;
    }
    follow(importId);
  }, POLL_MS);
}

$("import-file").addEventListener("change", () => {
  const file = $("import-file").files[0];
  if (file) check(file);
});
$("import-commit").addEventListener("click", commit);
