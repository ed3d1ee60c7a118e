// consumer-lag: streammcp's consumer-lag report (report.LagReport, with
// "cluster" when the report is of a named cluster). Groups sorted by lag,
// per-partition lag bars, and a lag-over-time sparkline from the reads made
// while the view is open (the initial result, Refresh, auto-refresh).
import { connect, dataOf } from "../lib/bridge.js";
import { h, render, badge, fmt, sparkline, messageView } from "../lib/dom.js";
import { outcomeCard } from "../lib/preview.js";

const TOOL = "get_consumer_lag";
const AUTO_MS = 30000;
const root = document.getElementById("app");
let args = {};
let report = null;
let outcome = null;
const history = new Map(); // group_id → [{t, lag}]
let auto = true;
let timer = 0;
let busy = false;

const app = connect({
  name: "mcpfleet-consumer-lag",
  onInput(a) {
    args = a;
  },
  onResult(result) {
    take(dataOf(result));
  },
  onCancelled(reason) {
    render(root, messageView("The call was cancelled", reason));
  },
});

function take(res) {
  if (res.error || !res.data || !Array.isArray(res.data.group_summary)) {
    render(root, messageView("No lag report", res.error || "The tool result has no group_summary.", "danger"));
    return;
  }
  report = res.data;
  const t = Date.now();
  for (const g of report.group_summary) {
    const pts = history.get(g.group_id) || [];
    pts.push({ t, lag: g.total_lag });
    if (pts.length > 60) pts.shift();
    history.set(g.group_id, pts);
  }
  draw();
  schedule();
}

function schedule() {
  clearTimeout(timer);
  if (auto) timer = setTimeout(refresh, AUTO_MS);
}

async function refresh() {
  if (busy) return;
  busy = true;
  draw();
  try {
    take(dataOf(await app.callTool(app.toolName(TOOL), args)));
  } catch (e) {
    outcome = { title: "Refresh failed", card: messageView("Refresh failed", e.message, "danger") };
  } finally {
    busy = false;
    draw();
  }
}

async function resetDryRun(g, d) {
  const tool = report.reset_tool;
  // reset_consumer_group_offsets' own arguments: one target (to_latest)
  // and the pipeline's dryRun, so the call changes nothing.
  const call = { group_id: g.group_id, topic: d.topic, to_latest: true, dryRun: true };
  if (report.cluster) call.cluster = report.cluster;
  try {
    outcome = { card: outcomeCard(tool, dataOf(await app.callTool(tool, call))) };
  } catch (e) {
    outcome = { card: messageView(tool + " failed", e.message, "danger") };
  }
  draw();
}

function draw() {
  if (!report) return;
  const r = report;
  const groups = [...r.group_summary].sort((a, b) => b.total_lag - a.total_lag || a.group_id.localeCompare(b.group_id));
  const max = Math.max(1, ...groups.map((g) => g.total_lag));
  const details = r.high_lag_details || [];
  const toolbar = h(
    "div.toolbar",
    h(
      "div",
      h("h1", "Consumer lag" + (r.cluster ? " — " + r.cluster : "")),
      h(
        "div.meta",
        `${fmt(r.group_count)} groups · ${fmt(r.groups_with_high_lag)} above ${fmt(r.lag_threshold)} · read ${r.timestamp || ""}`,
      ),
    ),
    h(
      "div",
      h("label", h("input", { type: "checkbox", checked: auto, onchange: (e) => { auto = e.target.checked; schedule(); } }), " auto-refresh 30 s"),
      " ",
      h("button", { type: "button", onclick: refresh, disabled: busy, "aria-label": "Refresh the lag report" }, busy ? "Reading…" : "Refresh"),
    ),
  );
  const list = h(
    "ol.groups",
    { "aria-label": "Consumer groups by lag, highest first" },
    groups.map((g) => {
      const pts = (history.get(g.group_id) || []).map((p) => p.lag);
      const parts = details.filter((d) => d.group_id === g.group_id).sort((a, b) => b.lag - a.lag);
      const pmax = Math.max(1, ...parts.map((d) => d.lag));
      return h(
        "li.group" + (g.has_high_lag ? ".high" : ""),
        { "data-group": g.group_id },
        h(
          "div.row",
          h("span.name.mono", g.group_id),
          badge(g.state || "unknown"),
          h("span.muted", `${fmt(g.member_count)} members · ${fmt(g.topic_count)} topics`),
          h("span.lag.num", { "data-lag": g.total_lag }, fmt(g.total_lag)),
          sparkline(pts, { label: `lag of ${g.group_id} over ${pts.length} reads: ${pts.join(", ")}` }),
        ),
        h("div.bar", { role: "img", "aria-label": `total lag ${g.total_lag}` }, h("span", { style: `width:${((g.total_lag / max) * 100).toFixed(1)}%` })),
        g.partitions_without_commit || g.partitions_with_errors || g.error
          ? h(
              "p.muted",
              [g.partitions_without_commit ? `${g.partitions_without_commit} partition(s) never committed` : "", g.partitions_with_errors ? `${g.partitions_with_errors} with errors` : "", g.error]
                .filter(Boolean)
                .join(" · "),
            )
          : null,
        parts.length
          ? h(
              "ul.parts",
              parts.map((d) =>
                h(
                  "li",
                  h("span.mono", `${d.topic}[${d.partition}]`),
                  h("span.pbar", { role: "img", "aria-label": `lag ${d.lag}` }, h("span", { style: `width:${((d.lag / pmax) * 100).toFixed(1)}%` })),
                  h("span.num", fmt(d.lag)),
                  h("span.muted", `${fmt(d.current_offset)} / ${fmt(d.log_end_offset)}`),
                  r.reset_tool ? h("button", { type: "button", onclick: () => resetDryRun(g, d) }, "Dry-run reset to latest") : null,
                ),
              ),
            )
          : null,
      );
    }),
  );
  render(
    root,
    toolbar,
    groups.length ? list : messageView("No consumer groups", "The cluster has no consumer group."),
    (r.errors || []).length ? h("section.message.danger", { role: "alert" }, h("strong", "Errors"), h("ul", r.errors.map((e) => h("li", e)))) : null,
    (r.recommendations || []).length ? h("section", h("h3", "Recommendations"), h("ul.recs", r.recommendations.map((e) => h("li", e)))) : null,
    outcome ? outcome.card : null,
  );
}
