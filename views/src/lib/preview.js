import { h, badge } from "./dom.js";

// isRows tells a list of records (a preview's per-partition or per-server
// rows), shown as a table of its own rather than as JSON in one cell.
const isRows = (v) => Array.isArray(v) && v.length > 0 && v.every((r) => r && typeof r === "object" && !Array.isArray(r));
const cell = (v) => (v == null ? "—" : typeof v === "object" ? JSON.stringify(v) : String(v));

// stateTable shows a state object as name/value rows (nested values as JSON;
// lists of records apart, see rowTables).
export function stateTable(state, caption) {
  if (state == null) return null;
  if (typeof state !== "object") return h("p.mono", String(state));
  const rows = Object.entries(state)
    .filter(([, v]) => !isRows(v))
    .map(([k, v]) => h("tr", h("th", { scope: "row" }, k), h("td.mono", cell(v))));
  return h("table.kv", caption ? h("caption", caption) : null, h("tbody", rows));
}

// rowTables shows each list of records of a state object as a table, full
// width and scrolling sideways when the inline width is short.
export function rowTables(state, prefix) {
  if (state == null || typeof state !== "object" || Array.isArray(state)) return [];
  return Object.entries(state)
    .filter(([, v]) => isRows(v))
    .map(([k, list]) => {
      const cols = [...new Set(list.flatMap((r) => Object.keys(r)))];
      return h(
        "section.rows",
        h("h3", prefix + ": " + k),
        h(
          "div.scroll",
          h(
            "table",
            h("thead", h("tr", cols.map((c) => h("th", { scope: "col" }, c)))),
            h("tbody", list.map((r) => h("tr", cols.map((c) => h("td.mono", cell(r[c])))))),
          ),
        ),
      );
    });
}

// isPreview tells a dry-run or confirmation preview (shared/toolcall's
// PreviewResult) from any other tool result.
export const isPreview = (d) => d && typeof d === "object" && typeof d.summary === "string" && Array.isArray(d.commands) && "class" in d;

// previewCard renders shared/toolcall's PreviewResult. It offers no approve
// action: approval stays with the client's elicitation or confirmation flow.
export function previewCard(p) {
  const heading = p.confirmation
    ? "Approval needed — nothing was changed yet"
    : p.dryRun
      ? "Dry run — nothing was changed"
      : "Preview";
  return h(
    "article.card.preview",
    { "aria-label": heading },
    h("header", h("h2", heading), badge(p.class)),
    h("p.summary.wrap", p.summary),
    h("dl.facts", h("dt", "Tool"), h("dd.mono", p.tool || "—"), h("dt", "Target"), h("dd.mono", p.target || "—")),
    h("h3", p.commands.length === 1 ? "Command" : "Commands"),
    p.commands.length ? h("ol.commands", p.commands.map((c) => h("li", h("code", c)))) : h("p.muted", "none"),
    h(
      "div.before-after",
      h("section", h("h3", "Now"), p.state != null ? stateTable(p.state) : h("p.muted", "not described")),
      h("section", h("h3", "After"), p.after != null ? stateTable(p.after) : h("p", p.effect || "not described")),
    ),
    rowTables(p.state, "Now"),
    rowTables(p.after, "After"),
    p.confirmation
      ? h(
          "p.note",
          { role: "note" },
          "Your client asks you to approve this change; the view cannot approve it. The confirmation is valid until ",
          h("time", { datetime: p.confirmation.expires }, p.confirmation.expires),
          ".",
        )
      : null,
  );
}

// outcomeCard renders the result of a change that ran (or failed).
export function outcomeCard(toolName, res) {
  if (res.error) return h("article.card.outcome.danger", { role: "alert" }, h("header", h("h2", toolName + " failed"), badge("error")), h("p.mono.wrap", res.error));
  if (isPreview(res.data)) return previewCard(res.data);
  const d = res.data;
  return h(
    "article.card.outcome",
    h("header", h("h2", toolName + (d && d.changed === false ? " — already so, nothing changed" : " — applied")), badge(d && d.changed === false ? "unchanged" : "ok")),
    d && typeof d === "object" ? stateTable(d) : h("p.mono.wrap", res.text || ""),
  );
}
