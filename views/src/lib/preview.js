import { h, badge } from "./dom.js";

// isRows tells a list of records (a preview's per-partition or per-server
// rows), shown as a table of its own rather than in one cell.
const isRows = (v) => Array.isArray(v) && v.length > 0 && v.every((r) => r && typeof r === "object" && !Array.isArray(r));
const isObject = (v) => v != null && typeof v === "object" && !Array.isArray(v);
const scalar = (v) => v == null || typeof v !== "object";
const text = (v) => (v == null ? "—" : String(v));

// value shows any value as a person reads it: a scalar as text, a list of
// scalars joined, an object as a compact name/value table and a list of
// objects as a numbered list of them; never a JSON blob (past four levels,
// the rest is summarised by its size).
export function value(v, depth = 0) {
  if (scalar(v)) return text(v);
  const n = Array.isArray(v) ? v.length : Object.keys(v).length;
  if (n === 0) return h("span.muted", "none");
  if (depth >= 4) return h("span.muted", Array.isArray(v) ? n + " item(s)" : n + " field(s)");
  if (Array.isArray(v)) return v.every(scalar) ? v.map(text).join(", ") : h("ol.nested", v.map((x) => h("li", value(x, depth + 1))));
  return h("table.kv.nested", h("tbody", Object.entries(v).map(([k, x]) => h("tr", h("th", { scope: "row" }, k), h("td.mono", value(x, depth + 1))))));
}

// SETS tells, per change tool whose target state the view can read, which
// field of the previewed state an argument sets (or the value a tool sets it
// to). Only these are shown as before → after: an argument of the same name
// elsewhere may mean something else (set_server_agent's port is the agent's,
// not the server's).
const SETS = {
  set_server_state: { state: "admin_state" },
  enable_server: { "=admin_state": "ready" },
  disable_server: { "=admin_state": "maint" },
  set_server_weight: { weight: "weight" },
  set_server_maxconn: { maxconn: "maxconn" },
  set_server_addr: { address: "address", port: "port" },
  set_server_check_port: { port: "check_port" },
  set_frontend_maxconn: { maxconn: "maxconn" },
};

// afterOf returns the fields the call sets, by state field: {admin_state: "drain"}.
export function afterOf(tool, args) {
  const out = {};
  for (const [from, field] of Object.entries(SETS[tool] || {})) {
    if (from.startsWith("=")) out[from.slice(1)] = field;
    else if (args && scalar(args[from]) && args[from] != null && args[from] !== "") out[field] = args[from];
  }
  return out;
}

// stateTable shows a state object as name/value rows; a field the change
// sets reads "before → after" (lists of records apart, see rowTables).
export function stateTable(state, caption, after = {}) {
  if (state == null) return null;
  if (typeof state !== "object") return h("p.mono", String(state));
  if (Object.keys(state).length === 0) return h("p.muted", "none");
  const rows = Object.entries(state)
    .filter(([, v]) => !isRows(v))
    .map(([k, v]) => {
      if (!(k in after) || !scalar(v)) return h("tr", { "data-field": k }, h("th", { scope: "row" }, k), h("td.mono", value(v)));
      const same = String(after[k]) === String(v);
      return h(
        "tr.sets" + (same ? ".same" : ""),
        { "data-field": k },
        h("th", { scope: "row" }, k),
        h("td.mono", h("span.before", text(v)), h("span.arrow", " → "), h("span.after", text(after[k])), same ? h("span.muted", " (already)") : null),
      );
    });
  return h("table.kv", caption ? h("caption", caption) : null, h("tbody", rows));
}

// rowTables shows each list of records of a state object as a table, full
// width and scrolling sideways (from the keyboard too) when the inline width
// is short.
export function rowTables(state, prefix) {
  if (!isObject(state)) return [];
  return Object.entries(state)
    .filter(([, v]) => isRows(v))
    .map(([k, list]) => {
      const cols = [...new Set(list.flatMap((r) => Object.keys(r)))];
      return h(
        "section.rows",
        h("h3", prefix + ": " + k),
        h(
          "div.scroll",
          { tabindex: 0, role: "region", "aria-label": prefix + ": " + k },
          h(
            "table",
            h("thead", h("tr", cols.map((c) => h("th", { scope: "col" }, c)))),
            h("tbody", list.map((r) => h("tr", cols.map((c) => h("td.mono", value(r[c], 2)))))),
          ),
        ),
      );
    });
}

// isPreview tells a dry-run or confirmation preview (shared/toolcall's
// PreviewResult) from any other tool result.
export const isPreview = (d) => d && typeof d === "object" && typeof d.summary === "string" && Array.isArray(d.commands) && "class" in d;

// instancesOf tells a fleet preview (proxymcp plans a write on every chosen
// instance and previews their states as {instance: state}) and returns its
// instance names; null for any other state. Every key must be an object and
// be named by the preview's target or prefix one of its commands.
export function instancesOf(p) {
  const s = p.state;
  if (!isObject(s)) return null;
  const names = Object.keys(s);
  if (!names.length || !names.every((k) => isObject(s[k]))) return null;
  const words = new Set(String(p.target || "").split(/[\s,]+/));
  const named = (k) => words.has(k) || p.commands.some((c) => String(c).startsWith(k + ": "));
  return names.every(named) ? names : null;
}

// commandsOf lists the commands sent to one instance of a fleet: those
// prefixed with its name, and those without a prefix (sent to every one).
function commandsOf(p, names, instance) {
  const prefixed = (c) => names.find((n) => c.startsWith(n + ": "));
  return p.commands.filter((c) => !prefixed(c) || prefixed(c) === instance).map((c) => (c.startsWith(instance + ": ") ? c.slice(instance.length + 2) : c));
}

// targetOf is one instance's own target, from the fleet's ("HAProxy
// instances lb1 (unix:///a.sock), lb2 (…)" → "lb1 (unix:///a.sock)").
function targetOf(p, instance) {
  const t = String(p.target || "");
  const at = t.indexOf(instance + " (");
  if (at < 0 || (at > 0 && !/[\s,]/.test(t[at - 1]))) return instance;
  const end = t.indexOf(")", at);
  return end < 0 ? instance : t.slice(at, end + 1);
}

function commandList(cmds) {
  return cmds.length ? h("ol.commands", cmds.map((c) => h("li", h("code", c)))) : h("p.muted", "none");
}

// instanceSection is one instance of a fleet preview, the single-instance
// card's structure in small: its target, its commands, its state now with
// the fields the change sets as before → after.
function instanceSection(p, names, instance, after) {
  const st = p.state[instance];
  const failed = Object.keys(st).length === 1 && typeof st.error === "string";
  return h(
    "section.instance" + (failed ? ".danger" : ""),
    { "data-instance": instance, "aria-label": "instance " + instance },
    h("header", h("h3", instance), failed ? badge("error") : null),
    h("dl.facts", h("dt", "Target"), h("dd.mono", targetOf(p, instance)), h("dt", "Sends"), h("dd", commandList(commandsOf(p, names, instance)))),
    failed ? h("p.mono.wrap", { role: "alert" }, "Its current state cannot be read: " + st.error) : stateTable(st, "Now", after),
    failed ? null : rowTables(st, instance),
  );
}

// previewCard renders shared/toolcall's PreviewResult; args are the call's
// arguments (for the before → after of the fields it sets). It offers no
// approve action: approval stays with the client's elicitation or
// confirmation flow.
export function previewCard(p, args) {
  const heading = p.confirmation
    ? "Approval needed — nothing was changed yet"
    : p.dryRun
      ? "Dry run — nothing was changed"
      : "Preview";
  const after = afterOf(p.tool, args);
  const fleet = instancesOf(p);
  return h(
    "article.card.preview",
    { "aria-label": heading },
    h("header", h("h2", heading), badge(p.class)),
    h("p.summary.wrap", p.summary),
    h("dl.facts", h("dt", "Tool"), h("dd.mono", p.tool || "—"), h("dt", "Target"), h("dd.mono", p.target || "—")),
    h("h3", p.commands.length === 1 ? "Command" : "Commands"),
    commandList(p.commands),
    fleet
      ? [
          h("section.instances", { "aria-label": "per instance" }, fleet.map((n) => instanceSection(p, fleet, n, after))),
          h("section.after", h("h3", "After"), h("p", p.effect || "not described")),
        ]
      : [
          h(
            "div.before-after",
            h("section", h("h3", "Now"), p.state != null ? stateTable(p.state, null, after) : h("p.muted", "not described")),
            h("section", h("h3", "After"), p.after != null ? stateTable(p.after) : h("p", p.effect || "not described")),
          ),
          rowTables(p.state, "Now"),
          rowTables(p.after, "After"),
        ],
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

// outcomeCard renders the result of a change that ran (or failed); args are
// the call's arguments, when the view knows them.
export function outcomeCard(toolName, res, args) {
  if (res.error) return h("article.card.outcome.danger", { role: "alert" }, h("header", h("h2", toolName + " failed"), badge("error")), h("p.mono.wrap", res.error));
  if (isPreview(res.data)) return previewCard(res.data, args);
  const d = res.data;
  return h(
    "article.card.outcome",
    h("header", h("h2", toolName + (d && d.changed === false ? " — already so, nothing changed" : " — applied")), badge(d && d.changed === false ? "unchanged" : "ok")),
    d && typeof d === "object" ? stateTable(d) : h("p.mono.wrap", res.text || ""),
  );
}
