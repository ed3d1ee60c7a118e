// cluster-health: streammcp's health per cluster of a fleet. Data:
// {timestamp, health_status, clusters: [{cluster, health_check:
// report.HealthCheck, under_replicated_partitions: report.URPReport,
// error}]}; a bare HealthCheck (one cluster) is shown too. Actions:
// refresh, and a partition's details through describe_topic.
import { connect, dataOf } from "../lib/bridge.js";
import { h, render, badge, fmt, messageView } from "../lib/dom.js";

const TOOL = "get_cluster_health";
const root = document.getElementById("app");
let args = {};
let doc = null;
let busy = false;
const details = new Map(); // "cluster/topic/partition" → element

const app = connect({
  name: "mcpfleet-cluster-health",
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
  let d = res.data;
  if (d && d.broker_status) d = { timestamp: d.timestamp, health_status: d.overall_status, clusters: [{ cluster: d.cluster || "", health_check: d }] };
  if (res.error || !d || !Array.isArray(d.clusters)) {
    render(root, messageView("No health report", res.error || "The tool result has no clusters.", "danger"));
    return;
  }
  doc = d;
  draw();
}

async function refresh() {
  busy = true;
  draw();
  try {
    take(dataOf(await app.callTool(app.toolName(TOOL), args)));
  } catch (e) {
    render(root, messageView("Refresh failed", e.message, "danger"));
  } finally {
    busy = false;
    draw();
  }
}

async function openPartition(cluster, p) {
  const key = `${cluster}/${p.topic}/${p.partition}`;
  const call = { topic: p.topic };
  if (cluster) call.cluster = cluster;
  details.set(key, h("p.muted", "Reading…"));
  draw();
  let el;
  try {
    const res = dataOf(await app.callTool("describe_topic", call));
    if (res.error) el = h("p.mono.wrap", res.error);
    else {
      const parts = (res.data && res.data.partitions) || [];
      const one = parts.find((x) => x.partition === p.partition || x.id === p.partition);
      el = h("pre.mono.wrap.detail", JSON.stringify(one || res.data, null, 1));
    }
  } catch (e) {
    el = h("p.mono.wrap", e.message);
  }
  details.set(key, el);
  draw();
}

const figure = (label, value, kind) => h("div.fig" + (kind ? "." + kind : ""), h("span.v", fmt(value)), h("span.l", label));

function clusterCard(c) {
  const hc = c.health_check;
  const urp = c.under_replicated_partitions;
  const status = hc ? hc.overall_status : c.health_status || "unknown";
  const b = hc && hc.broker_status;
  const ps = hc && hc.partition_status;
  const cs = hc && hc.consumer_status;
  const rows = [];
  for (const d of (urp && urp.details) || []) rows.push({ ...d, kind: d.under_min_isr ? "under min ISR" : "under-replicated" });
  for (const d of (urp && urp.offline_partitions) || []) rows.push({ ...d, kind: "offline" });
  return h(
    "article.card.cluster",
    { "data-cluster": c.cluster, "aria-label": `cluster ${c.cluster || "default"}` },
    h("header", h("h2", c.cluster || "cluster"), badge(status)),
    c.error && !hc ? h("p.mono.wrap.err", c.error) : null,
    hc
      ? h(
          "div.figs",
          figure("brokers online", `${b.live_brokers}/${b.total_brokers}`, b.offline_brokers ? "danger" : ""),
          figure("controller", hc.controller_status.controller_id, hc.controller_status.status !== "healthy" ? "danger" : ""),
          figure("under-replicated", ps.under_replicated_partitions, ps.under_replicated_partitions ? "warning" : ""),
          figure("offline partitions", ps.offline_partitions, ps.offline_partitions ? "danger" : ""),
          figure("under min ISR", ps.under_min_isr_partitions, ps.under_min_isr_partitions ? "danger" : ""),
          figure("groups lagging", cs.groups_with_high_lag, cs.groups_with_high_lag ? "warning" : ""),
        )
      : null,
    b && b.offline_brokers ? h("p", "Offline brokers: ", h("span.mono", b.offline_broker_ids.join(", "))) : null,
    cs && cs.error ? h("p.muted", "Consumer groups: " + cs.error) : null,
    rows.length
      ? h(
          "ul.parts",
          { "aria-label": "Partitions that need attention" },
          rows.map((p) => {
            const key = `${c.cluster}/${p.topic}/${p.partition}`;
            return h(
              "li",
              { "data-partition": `${p.topic}[${p.partition}]` },
              h(
                "div.prow",
                h("span.mono.pname", `${p.topic}[${p.partition}]`),
                badge(p.kind),
                h("span.muted", "leader " + (p.leader < 0 ? "none" : p.leader)),
                h("span.muted.mono", p.isr ? `ISR ${p.isr.join(",")} of ${p.replicas.join(",")}` : p.reason || ""),
                h("button", { type: "button", onclick: () => openPartition(c.cluster, p), "aria-label": `Details of ${p.topic} partition ${p.partition}` }, "Details"),
              ),
              details.has(key) ? details.get(key) : null,
            );
          }),
        )
      : hc
        ? h("p.muted", "Every partition is fully replicated.")
        : null,
  );
}

function draw() {
  if (!doc) return;
  render(
    root,
    h(
      "div.toolbar",
      h("div", h("h1", "Cluster health"), h("div.meta", `${doc.clusters.length} cluster(s) · `, badge(doc.health_status), ` · read ${doc.timestamp || ""}`)),
      h("button", { type: "button", onclick: refresh, disabled: busy }, busy ? "Reading…" : "Refresh"),
    ),
    h("div.clusters", doc.clusters.map(clusterCard)),
  );
}
