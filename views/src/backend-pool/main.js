// backend-pool: proxymcp's list_servers result. One instance: {count,
// servers: [haproxy.Server], source}; a fleet adds "instance" to each
// server, "instances", "errors", "compared" and "divergence" (fleet.
// Divergence: {kind, object, differences: {field: {instance: value}},
// summary}). Servers per backend and per instance, divergence highlighted,
// and drain / ready / weight buttons that call set_server_state and
// set_server_weight through the host (so through the approval pipeline).
import { connect, dataOf } from "../lib/bridge.js";
import { h, render, badge, fmt, messageView } from "../lib/dom.js";
import { outcomeCard } from "../lib/preview.js";

const TOOL = "list_servers";
const root = document.getElementById("app");
let args = {};
let pool = null;
let outcome = null;
let busy = "";

const app = connect({
  name: "mcpfleet-backend-pool",
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
  if (res.error || !res.data || !Array.isArray(res.data.servers)) {
    render(root, messageView("No servers", res.error || "The tool result has no servers.", "danger"));
    return;
  }
  pool = res.data;
  draw();
}

async function reload() {
  try {
    take(dataOf(await app.callTool(app.toolName(TOOL), args)));
  } catch (e) {
    outcome = messageView("Refresh failed", e.message, "danger");
    draw();
  }
}

async function act(tool, call, label) {
  busy = label;
  outcome = null;
  draw();
  try {
    outcome = outcomeCard(tool, dataOf(await app.callTool(tool, call)));
  } catch (e) {
    outcome = messageView(tool + " failed", e.message, "danger");
  }
  busy = "";
  await reload();
}

function draw() {
  if (!pool) return;
  const fleet = Array.isArray(pool.instances) && pool.instances.some((i) => i.instance);
  const instances = fleet ? pool.instances.map((i) => i.instance) : [];
  const diverge = new Map((pool.divergence || []).map((d) => [d.object, d.differences || {}]));
  const backends = new Map();
  for (const s of pool.servers) {
    const b = backends.get(s.backend) || new Map();
    const rows = b.get(s.name) || [];
    rows.push(s);
    b.set(s.name, rows);
    backends.set(s.backend, b);
  }
  const sections = [...backends].map(([backend, servers]) =>
    h(
      "section.backend",
      { "aria-label": "backend " + backend, "data-backend": backend },
      h("h2", backend, " ", h("span.muted", `${servers.size} server(s)`)),
      h(
        "div.scroll",
        h(
          "table.servers",
          h(
            "thead",
            h("tr", h("th", "server"), fleet ? h("th", "instance") : null, h("th", "status"), h("th.num", "weight"), h("th.num", "sessions"), h("th", "check")),
          ),
          h(
            "tbody",
            [...servers].map(([name, rows]) => {
              const diff = diverge.get(`${backend}/${name}`);
              const target = h(
                "select",
                { "aria-label": `instances to change for ${backend}/${name}`, hidden: !fleet },
                h("option", { value: "" }, "all instances"),
                instances.map((i) => h("option", { value: i }, i)),
              );
              const setWeight = () => act("set_server_weight", call({ weight: Number(weight.value) }), "weight");
              // No <form>: hosts sandbox views without allow-forms, which blocks submission.
              const weight = h("input", {
                type: "number", min: 0, max: 256, value: rows[0].weight, "aria-label": `new weight for ${backend}/${name}`, size: 4,
                onkeydown: (e) => { if (e.key === "Enter") { e.preventDefault(); setWeight(); } },
              });
              const call = (extra) => {
                const c = { backend, server: name, ...extra };
                if (target.value) c.instance = target.value;
                return c;
              };
              const actions = h(
                "div.actions",
                fleet ? target : null,
                h("button", { type: "button", disabled: !!busy, onclick: () => act("set_server_state", call({ state: "drain" }), "drain"), "aria-label": `Drain ${backend}/${name}` }, "Drain"),
                h("button", { type: "button", disabled: !!busy, onclick: () => act("set_server_state", call({ state: "ready" }), "ready"), "aria-label": `Ready ${backend}/${name}` }, "Ready"),
                h(
                  "span.weight",
                  weight,
                  h("button", { type: "button", disabled: !!busy, onclick: setWeight, "aria-label": `Set the weight of ${backend}/${name}` }, "Set weight"),
                ),
              );
              return rows.map((s, i) =>
                h(
                  "tr" + (diff ? ".diverges" : ""),
                  { "data-server": `${backend}/${name}`, "data-instance": s.instance || "", "data-status": s.status },
                  i === 0 ? h("th", { scope: "rowgroup", rowspan: rows.length + 1 }, h("span.mono", name), h("div.muted.addr", s.address + (s.port ? ":" + s.port : "")), diff ? h("div.flag", "differs between instances") : null) : null,
                  fleet ? h("td.mono", s.instance) : null,
                  h("td" + (diff && diff.status ? ".diff" : ""), badge(s.status)),
                  h("td.num" + (diff && diff.weight ? ".diff" : ""), fmt(s.weight)),
                  h("td.num", fmt(s.current_sessions) + (s.session_limit ? " / " + fmt(s.session_limit) : "")),
                  h("td", s.check_status ? h("span.mono", { title: s.check_desc || "" }, s.check_status) : h("span.muted", "—")),
                ),
              ).concat(h("tr.act", { "data-actions": `${backend}/${name}` }, h("td", { colspan: fleet ? 6 : 5 }, actions)));
            }),
          ),
        ),
      ),
    ),
  );
  const errs = pool.errors || [];
  render(
    root,
    h(
      "div.toolbar",
      h(
        "div",
        h("h1", "Backend pool"),
        h("div.meta", `${fmt(pool.count != null ? pool.count : pool.servers.length)} server rows` + (fleet ? ` · ${instances.length} instances (${instances.join(", ")})` : "") + (busy ? ` · ${busy}…` : "")),
      ),
      h("button", { type: "button", onclick: reload, disabled: !!busy }, "Refresh"),
    ),
    (pool.divergence || []).length
      ? h("section.message.warning", { role: "status" }, h("strong", `${pool.divergence.length} server(s) differ between instances`), h("ul", pool.divergence.map((d) => h("li.mono", d.summary))))
      : null,
    errs.length ? h("section.message.danger", { role: "alert" }, h("strong", "Not answered"), h("ul", errs.map((e) => h("li", `${e.instance}: ${e.error}`)))) : null,
    outcome,
    sections.length ? sections : messageView("No servers", "The backend has no server."),
  );
}
