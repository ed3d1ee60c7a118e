// query-result: sqlmcp's execute_query result ({columns: [{name, type}],
// rows, row_count, truncated, limit, query_id, elapsed_ms, next_cursor}). A
// sortable grid with the column types, the row count and truncation/cursor
// state, a chart for a two-column result whose second column is numeric,
// CSV download, and "fetch more" (sqlmcp's fetch_more tool, continuing the
// same engine query) while a cursor is open. A preview (a write's dry run,
// or a call waiting for approval) is shown as the change-preview card.
import { connect, dataOf } from "../lib/bridge.js";
import { h, svg, render, fmt, messageView } from "../lib/dom.js";
import { isPreview, outcomeCard } from "../lib/preview.js";

const TOOL = "execute_query";
const MORE = "fetch_more";
const root = document.getElementById("app");
let args = {};
let q = null;
let sort = { col: -1, dir: 1 };
let note = null;
let busy = false;

const app = connect({
  name: "mcpfleet-query-result",
  onInput(a) {
    args = a;
  },
  onResult(result) {
    const res = dataOf(result);
    if (!res.error && isPreview(res.data)) {
      q = null;
      render(root, outcomeCard(app.toolName(TOOL), res));
      return;
    }
    if (res.error || !res.data || !Array.isArray(res.data.columns) || !Array.isArray(res.data.rows)) {
      render(root, messageView("No rows", res.error || "The tool result has no columns and rows.", "danger"));
      return;
    }
    q = { ...res.data, rows: res.data.rows.slice() };
    draw();
  },
  onCancelled(reason) {
    render(root, messageView("The query was cancelled", reason));
  },
});

const NUMERIC = /^(tinyint|smallint|integer|int|bigint|real|double|decimal|numeric)\b/i;
const isNumeric = (type) => NUMERIC.test(type || "");
const num = (v) => (v == null || v === "" ? NaN : typeof v === "number" ? v : Number(v));

function cell(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function compare(a, b, numeric) {
  if (a == null && b == null) return 0;
  if (a == null) return 1; // NULLs last either way
  if (b == null) return -1;
  if (numeric) {
    const x = num(a), y = num(b);
    if (!isNaN(x) && !isNaN(y)) return x - y;
  }
  return cell(a).localeCompare(cell(b));
}

function sortedRows() {
  if (sort.col < 0) return q.rows;
  const numeric = isNumeric(q.columns[sort.col].type);
  return q.rows
    .map((r, i) => [r, i])
    .sort((A, B) => {
      const a = A[0][sort.col], b = B[0][sort.col];
      if (a == null || b == null) return compare(a, b, numeric) || A[1] - B[1];
      return sort.dir * compare(a, b, numeric) || A[1] - B[1];
    })
    .map((x) => x[0]);
}

export function toCSV(columns, rows) {
  const esc = (s) => (/[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s);
  return [columns.map((c) => esc(c.name)), ...rows.map((r) => r.map((v) => esc(cell(v))))].map((l) => l.join(",")).join("\r\n") + "\r\n";
}

async function download() {
  const text = toCSV(q.columns, sortedRows());
  const name = `query-${q.query_id || "result"}.csv`;
  if (app.capabilities().downloadFile) {
    try {
      await app.downloadFile({ contents: [{ type: "resource", resource: { uri: "file:///" + name, mimeType: "text/csv", text } }] });
      note = h("p.muted", { role: "status" }, `${name} handed to the host (${q.rows.length} rows).`);
    } catch (e) {
      note = messageView("Download refused", e.message, "danger");
    }
  } else {
    const a = h("a", { href: URL.createObjectURL(new Blob([text], { type: "text/csv" })), download: name });
    document.body.append(a);
    a.click();
    a.remove();
  }
  draw();
}

async function fetchMore() {
  busy = true;
  draw();
  try {
    // The same engine query's next page, in the format it was started with.
    const res = dataOf(await app.callTool(MORE, { cursor: q.next_cursor }));
    if (res.error) note = messageView("Fetching more failed", res.error, "danger");
    else {
      q.rows.push(...res.data.rows);
      q.row_count = q.rows.length;
      q.truncated = res.data.truncated;
      q.next_cursor = res.data.next_cursor;
    }
  } catch (e) {
    note = messageView("Fetching more failed", e.message, "danger");
  }
  busy = false;
  draw();
}

function chart() {
  if (q.columns.length !== 2 || !isNumeric(q.columns[1].type)) return null;
  const pts = q.rows.filter((r) => !isNaN(num(r[1]))).slice(0, 200);
  if (pts.length < 2) return null;
  const ys = pts.map((r) => num(r[1]));
  const ymin = Math.min(0, ...ys), ymax = Math.max(0, ...ys) || 1;
  // The left margin fits the longer y label (about 7 units a character).
  const W = 560, H = 180, B = 22, T = 8, R = 8, L = Math.max(48, 12 + 7 * Math.max(fmt(ymax).length, fmt(ymin).length));
  const y = (v) => T + (H - T - B) * (1 - (v - ymin) / (ymax - ymin || 1));
  const xnum = isNumeric(q.columns[0].type) && pts.every((r) => !isNaN(num(r[0])));
  const label = `${q.columns[1].name} by ${q.columns[0].name}, ${pts.length} points`;
  const kids = [
    svg("line", { x1: L, x2: W - R, y1: y(0), y2: y(0), class: "axis" }),
    svg("text", { x: L - 4, y: y(ymax) + 4, "text-anchor": "end", class: "tick" }, fmt(ymax)),
    svg("text", { x: L - 4, y: y(ymin) + 4, "text-anchor": "end", class: "tick" }, fmt(ymin)),
  ];
  if (xnum) {
    const s = pts.map((r) => [num(r[0]), num(r[1])]).sort((a, b) => a[0] - b[0]);
    const x0 = s[0][0], x1 = s[s.length - 1][0] || 1;
    const x = (v) => L + (W - L - R) * ((v - x0) / (x1 - x0 || 1));
    kids.push(svg("polyline", { class: "line", points: s.map(([a, b]) => `${x(a).toFixed(1)},${y(b).toFixed(1)}`).join(" ") }));
    kids.push(svg("text", { x: L, y: H - 6, class: "tick" }, fmt(x0)), svg("text", { x: W - R, y: H - 6, "text-anchor": "end", class: "tick" }, fmt(x1)));
  } else {
    const bw = (W - L - R) / pts.length;
    pts.forEach((r, i) => {
      const v = num(r[1]);
      kids.push(svg("rect", { class: "bar", x: L + i * bw + 1, width: Math.max(1, bw - 2), y: Math.min(y(v), y(0)), height: Math.abs(y(v) - y(0)) }, svg("title", {}, `${cell(r[0])}: ${cell(r[1])}`)));
      if (pts.length <= 16) kids.push(svg("text", { x: L + i * bw + bw / 2, y: H - 6, "text-anchor": "middle", class: "tick" }, cell(r[0]).slice(0, 10)));
    });
  }
  return h(
    "figure.chart",
    svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label, preserveAspectRatio: "none" }, ...kids),
    h("figcaption.muted", label),
  );
}

function headerCell(c, i) {
  const active = sort.col === i;
  return h(
    "th",
    { scope: "col", "aria-sort": active ? (sort.dir > 0 ? "ascending" : "descending") : "none", class: isNumeric(c.type) ? "num" : null },
    h(
      "button.sort",
      {
        type: "button",
        "aria-label": `Sort by ${c.name}`,
        onclick: () => {
          sort = active ? { col: i, dir: -sort.dir } : { col: i, dir: 1 };
          draw();
        },
      },
      h("span.cname", c.name),
      h("span.ctype", c.type),
      h("span.arrow", { "aria-hidden": "true" }, active ? (sort.dir > 0 ? "▲" : "▼") : ""),
    ),
  );
}

function draw() {
  if (!q) return;
  const state = q.next_cursor
    ? "more rows available"
    : q.truncated
      ? `truncated${q.limit ? " at limit " + fmt(q.limit) : ""}: more rows existed`
      : "complete";
  const fig = chart();
  render(
    root,
    h(
      "div.toolbar",
      h(
        "div",
        h("h1", "Query result"),
        h("div.meta", { "data-state": q.truncated || q.next_cursor ? "partial" : "complete" }, `${fmt(q.rows.length)} row(s) · ${state}` + (q.elapsed_ms != null ? ` · ${fmt(q.elapsed_ms)} ms` : "") + (q.query_id ? ` · ${q.query_id}` : "")),
      ),
      h(
        "div",
        q.next_cursor ? h("button", { type: "button", onclick: fetchMore, disabled: busy }, busy ? "Fetching…" : "Fetch more") : null,
        " ",
        h("button", { type: "button", onclick: download }, "Download CSV"),
      ),
    ),
    note,
    fig,
    h(
      "div.scroll.grid",
      h(
        "table",
        h("caption.sr-only", "Query rows; use the column buttons to sort"),
        h("thead", h("tr", q.columns.map(headerCell))),
        h(
          "tbody",
          sortedRows().map((r) =>
            h(
              "tr",
              r.map((v, i) => h("td" + (isNumeric(q.columns[i].type) ? ".num" : "") + (v == null ? ".null" : "") + (cell(v).length > 40 || /\n/.test(cell(v)) ? ".long" : ""), v == null ? "NULL" : cell(v))),
            ),
          ),
        ),
      ),
    ),
    q.rows.length ? null : h("p.muted", "The query returned no rows."),
  );
}
