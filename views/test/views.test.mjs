// The views in a real browser: Debian's chromium, driven by playwright-core,
// loads each built view (the committed file, served with the extension's
// restrictive default CSP from another origin) into a test host built on the
// official ext-apps SDK's AppBridge, feeds it a tool result, asserts what a
// person would see, clicks its actions and checks the tools/call it sends,
// writes screenshots (views/test/artifacts, or $VIEWS_ARTIFACTS) and measures
// the first render (median of 10, under 500 ms).
//
//   node --test views/test/views.test.mjs         (after scripts/install/views.sh)
//
// Results fed today are the modules' golden results where one exists and
// views/testdata/ otherwise; the wiring will answer hostCallTool from the real
// servers instead. With CI=true a missing chromium fails; otherwise it skips.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { skipFor, startHost, shoot, firstRender, previewInstances } from "./harness.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const views = dirname(here);
const repo = dirname(views);
const manifest = JSON.parse(readFileSync(join(views, "views.json"), "utf8")).views;
const skip = skipFor();

const json = (p) => JSON.parse(readFileSync(join(repo, p), "utf8"));
const fixture = (name) => JSON.parse(readFileSync(join(views, "testdata", name), "utf8"));
const textResult = (obj) => ({ content: [{ type: "text", text: JSON.stringify(obj, null, 2) }] });
const structured = (obj) => ({ content: [{ type: "text", text: JSON.stringify(obj) }], structuredContent: obj });
const READ_AT = "2026-11-27T06:15:00Z";

let host;

before(async () => {
  if (skip) return;
  // Each view as committed (the built file the module embeds).
  host = await startHost((view) => (manifest[view] ? readFileSync(join(repo, manifest[view].out)) : undefined));
});

after(async () => {
  await host?.close();
});

// open gives a host page whose tool calls are recorded and answered by answer.
const open = (answer, { width = 380 } = {}) => host.open({ answer, width });

async function noOverflow(frame) {
  const [sw, cw] = await frame.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
  assert.ok(sw <= cw, `nothing overflows the inline width (${sw} > ${cw})`);
}

// waitFor polls until check is true (the view answers asynchronously).
async function waitFor(check, what) {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail("timed out waiting for " + what);
}

function lagReport() {
  return { ...json("streammcp/testdata/fleet/lagging.consumer-lag-report.golden.json"), timestamp: READ_AT };
}

test("consumer-lag: groups by lag, partition bars, lag over successive reads", { skip }, async () => {
  const next = lagReport();
  next.group_summary.find((g) => g.group_id === "orders-processor").total_lag = 5600;
  const { page, calls, mount, close } = await open(() => textResult(next));
  for (const theme of ["light", "dark"]) {
    const { frame } = await mount("consumer-lag", "get_consumer_lag", { cluster: "lagging" }, textResult(lagReport()), { theme });
    const groups = await frame.$$eval("li.group", (els) => els.map((e) => [e.dataset.group, e.classList.contains("high"), e.querySelector(".lag").textContent]));
    assert.deepEqual(groups, [
      ["orders-replay", true, "5,100"],
      ["orders-processor", true, "5,000"],
      ["payments-audit", false, "80"],
      ["audit-archiver", false, "0"],
    ]);
    assert.deepEqual(await frame.$$eval("li.group .parts li > span.mono", (els) => els.map((e) => e.textContent)), ["orders[0]", "orders[0]"]);
    assert.equal(await frame.$eval("h1", (e) => e.textContent), "Consumer lag — lagging");
    await noOverflow(frame);
    await shoot(page, frame, `consumer-lag-${theme}`);
  }
  // Refresh, from the keyboard: a second read of the same tool with the same arguments.
  const { frame } = await mount("consumer-lag", "get_consumer_lag", { cluster: "lagging" }, textResult(lagReport()));
  await frame.focus("button[aria-label='Refresh the lag report']");
  await page.keyboard.press("Enter");
  await waitFor(async () => (await frame.$eval("li[data-group='orders-processor'] .spark", (e) => e.getAttribute("aria-label"))).includes("over 2 reads"), "the second read");
  assert.deepEqual(calls, [{ name: "get_consumer_lag", arguments: { cluster: "lagging" } }]);
  assert.equal(await frame.$eval("li[data-group='orders-processor'] .spark", (e) => e.getAttribute("aria-label")), "lag of orders-processor over 2 reads: 5000, 5600");
  // No reset tool offered by this result: no reset button.
  assert.equal((await frame.$$("text=Dry-run reset")).length, 0);
  await close();
});

function clusterHealth() {
  const fleet = json("streammcp/testdata/fleet/clusters.golden.json");
  return {
    timestamp: READ_AT,
    health_status: fleet.health_status,
    clusters: fleet.clusters.map((c) => ({
      cluster: c.cluster,
      health_check: json(`streammcp/testdata/fleet/${c.cluster}.health-check.golden.json`),
      under_replicated_partitions: json(`streammcp/testdata/fleet/${c.cluster}.under-replicated-partitions.golden.json`),
      error: c.error,
    })),
  };
}

test("cluster-health: brokers, controller, partitions per cluster; a partition's details", { skip }, async () => {
  const { page, calls, mount, close } = await open(() => textResult(fixture("describe_topic.json")), { width: 560 });
  for (const theme of ["light", "dark"]) {
    const { frame } = await mount("cluster-health", "get_cluster_health", {}, textResult(clusterHealth()), { theme });
    const cards = await frame.$$eval("article.cluster", (els) => els.map((e) => [e.dataset.cluster, e.querySelector("header .badge").textContent]));
    assert.deepEqual(cards, [["lagging", "warning"], ["degraded", "critical"], ["quiet", "healthy"]]);
    const degraded = await frame.$eval("article[data-cluster='degraded']", (e) => e.innerText);
    assert.match(degraded, /2\/3\s+brokers online/);
    assert.match(degraded, /Offline brokers: 1/);
    assert.match(degraded, /orders\[1\]\s+offline\s+leader 1\s+leader 1 is not a live broker/);
    await noOverflow(frame);
    await shoot(page, frame, `cluster-health-${theme}`);
  }
  const { frame } = await mount("cluster-health", "get_cluster_health", {}, textResult(clusterHealth()));
  await frame.focus("button[aria-label='Details of orders partition 0']");
  await page.keyboard.press("Enter");
  await frame.waitForSelector("pre.detail");
  assert.deepEqual(calls, [{ name: "describe_topic", arguments: { topic: "orders", cluster: "degraded" } }]);
  assert.match(await frame.$eval("pre.detail", (e) => e.textContent), /"offline_replicas": \[\s*1\s*\]/);
  await close();
});

test("backend-pool: servers per instance with divergence; drain and weight are tool calls; no approve action", { skip }, async () => {
  const pool = fixture("list_servers.fleet.json");
  const after = structuredClone(pool);
  for (const s of after.servers) if (s.name === "app2") s.status = "DRAIN";
  const approval = fixture("set_server_state.approval.json");
  const { page, calls, mount, close } = await open((p) => (p.name === "list_servers" ? structured(after) : approval), { width: 560 });
  for (const theme of ["light", "dark"]) {
    const { frame } = await mount("backend-pool", "list_servers", {}, structured(pool), { theme });
    const rows = await frame.$$eval("tr[data-server]", (els) => els.map((e) => [e.dataset.server, e.dataset.instance, e.dataset.status, e.classList.contains("diverges")]));
    assert.deepEqual(rows, [
      ["be_app/app1", "lb1", "UP", true],
      ["be_app/app1", "lb2", "DRAIN", true],
      ["be_app/app2", "lb1", "UP", false],
      ["be_app/app2", "lb2", "UP", false],
      ["be_app/app3", "lb1", "DOWN", false],
      ["be_app/app3", "lb2", "DOWN", false],
    ]);
    assert.match(await frame.$eval("section.message.warning", (e) => e.innerText), /be_app\/app1: lb1 UP, lb2 DRAIN/);
    await noOverflow(frame);
    await shoot(page, frame, `backend-pool-${theme}`);
  }
  const { frame } = await mount("backend-pool", "list_servers", {}, structured(pool));
  await frame.focus("button[aria-label='Drain be_app/app2']");
  await page.keyboard.press("Enter");
  await frame.waitForSelector("article.preview");
  await waitFor(() => calls.length === 2, "the refresh after the change");
  assert.deepEqual(calls, [
    { name: "set_server_state", arguments: { backend: "be_app", server: "app2", state: "drain" } },
    { name: "list_servers", arguments: {} },
  ]);
  assert.equal(await frame.$eval("article.preview h2", (e) => e.textContent), "Approval needed — nothing was changed yet");
  assert.equal((await frame.$$eval("button", (els) => els.filter((b) => /approve|confirm/i.test(b.textContent)))).length, 0, "no approve button");
  await waitFor(async () => (await frame.$$eval("tr[data-server='be_app/app2']", (els) => els.map((e) => e.dataset.status))).join() === "DRAIN,DRAIN", "the refreshed pool");
  await shoot(page, frame, "backend-pool-after-drain");
  // Weight on one instance.
  await frame.selectOption("select[aria-label='instances to change for be_app/app1']", "lb2");
  await frame.fill("input[aria-label='new weight for be_app/app1']", "20");
  await frame.focus("input[aria-label='new weight for be_app/app1']");
  await page.keyboard.press("Enter");
  await waitFor(() => calls.length === 4, "set_server_weight and the refresh");
  assert.deepEqual(calls[2], { name: "set_server_weight", arguments: { backend: "be_app", server: "app1", weight: 20, instance: "lb2" } });
  await close();
});

test("query-result: typed sortable grid, CSV, chart for two numeric columns, fetch more with a cursor", { skip }, async () => {
  const golden = { ...json("sqlmcp/internal/cli/testdata/e2e/query.json.golden"), query_id: "20261127_061500_00041_abcde", elapsed_ms: 23 };
  const pages = fixture("execute_query.cursor.json");
  const { page, calls, mount, close } = await open(() => structured(pages.second), { width: 560 });
  for (const theme of ["light", "dark"]) {
    const { frame } = await mount("query-result", "execute_query", { query: "SELECT * FROM customers" }, structured(golden), { theme });
    assert.deepEqual(await frame.$$eval("thead th", (els) => els.map((e) => e.querySelector(".cname").textContent + ":" + e.querySelector(".ctype").textContent)), [
      "id:integer", "name:varchar", "email:varchar", "country:varchar", "signup_date:date", "vip:boolean", "balance:decimal(12,2)",
    ]);
    assert.match(await frame.$eval(".meta", (e) => e.textContent), /^5 row\(s\) · complete/);
    await noOverflow(frame);
    await shoot(page, frame, `query-result-${theme}`);
  }
  const { frame } = await mount("query-result", "execute_query", { query: "SELECT * FROM customers" }, structured(golden));
  // Sort by balance, descending, from the keyboard: NULL stays last.
  const balance = "thead th:nth-child(7) button";
  await frame.focus(balance);
  await page.keyboard.press("Enter");
  await page.keyboard.press("Enter");
  assert.equal(await frame.$eval("thead th:nth-child(7)", (e) => e.getAttribute("aria-sort")), "descending");
  assert.deepEqual(await frame.$$eval("tbody tr td:first-child", (els) => els.map((e) => e.textContent)), ["5", "1", "3", "2", "4"]);
  assert.equal(await frame.$$eval("figure.chart", (e) => e.length), 0, "no chart for seven columns");
  await frame.click("text=Download CSV");
  await waitFor(() => page.evaluate(() => window.__downloads.length === 1), "the download");
  const dl = (await page.evaluate(() => window.__downloads))[0].contents[0].resource;
  assert.equal(dl.mimeType, "text/csv");
  assert.equal(dl.uri, "file:///query-20261127_061500_00041_abcde.csv");
  assert.equal(dl.text.split("\r\n")[0], "id,name,email,country,signup_date,vip,balance");
  assert.equal(dl.text.split("\r\n")[1], "5,山田 太郎,taro@example.jp,JP,2024-02-29,true,12345678.90");
  assert.equal(dl.text.split("\r\n")[5], "4,Dan O'Hara,dan@example.com,,,false,");

  const numeric = await mount("query-result", "execute_query", { query: "SELECT hour, count(*) AS orders FROM orders GROUP BY 1" }, structured(fixture("execute_query.numeric.json")));
  assert.equal(await numeric.frame.$eval("figure.chart svg", (e) => e.getAttribute("aria-label")), "orders by hour, 12 points");
  assert.equal(await numeric.frame.$$eval("figure.chart polyline", (e) => e.length), 1);
  await shoot(page, numeric.frame, "query-result-chart");

  const paged = await mount("query-result", "execute_query", { query: "SELECT id, name FROM customers", limit: 2 }, structured(pages.first));
  assert.match(await paged.frame.$eval(".meta", (e) => e.textContent), /^2 row\(s\) · more rows available/);
  await paged.frame.click("text=Fetch more");
  await waitFor(async () => (await paged.frame.$$("tbody tr")).length === 4, "the second page");
  assert.deepEqual(calls, [{ name: "fetch_more", arguments: { cursor: "page-2" } }]);
  assert.match(await paged.frame.$eval(".meta", (e) => e.textContent), /^4 row\(s\) · complete/);
  await close();
});

test("change-preview: target, commands, now and after; nothing to click", { skip }, async () => {
  const { page, mount, close } = await open(() => assert.fail("the preview view calls no tool"));
  for (const theme of ["light", "dark"]) {
    const { frame } = await mount("change-preview", "set_server_state", { backend: "be_app", server: "app2", state: "drain" }, fixture("set_server_state.approval.json"), { theme });
    const text = await frame.$eval("article.preview", (e) => e.innerText);
    assert.match(text, /Approval needed — nothing was changed yet/);
    assert.match(text, /Target\s+haproxy lb1/);
    assert.deepEqual(await frame.$$eval("ol.commands li", (els) => els.map((e) => e.textContent)), ["lb1: set server be_app/app2 state drain", "lb2: set server be_app/app2 state drain"]);
    assert.match(text, /admin_state\s+ready/);
    assert.match(text, /After\s+the server gets no new sessions/i);
    assert.equal((await frame.$$("button, a[href], input")).length, 0, "the card has no action");
    const bg = await frame.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, theme === "dark" ? "rgb(30, 31, 34)" : "rgb(255, 255, 255)", "the host's theme variables are applied");
    await noOverflow(frame);
    await shoot(page, frame, `change-preview-${theme}`);
  }
  await close();
});

// A fleet's preview as proxymcp builds it: the state by instance.
function fleetPreview() {
  const one = fixture("set_server_state.approval.json").structuredContent.state;
  return {
    dryRun: true,
    tool: "set_server_weight",
    class: "change",
    target: "HAProxy instances lb1 (unix:///run/haproxy/lb1.sock), lb2 (tcp://10.0.0.2:9999), lb3",
    commands: ["lb1: set weight be_app/app2 40", "lb2: set weight be_app/app2 40", "lb3: set weight be_app/app2 40"],
    summary: "On 3 HAProxy instance(s), one approval for all of them:\nlb1: …\nlb2: …\nlb3: …",
    state: {
      lb1: { ...one, weight: 50 },
      lb2: { ...one, weight: 30, current_sessions: 2 },
      lb3: { error: "HAProxy runtime API at unix:///run/haproxy/lb3.sock: connection refused" },
    },
    effect: "new sessions are balanced with the new weight",
  };
}

test("change-preview: a fleet's preview per instance, before → after, an unreadable instance shown as such", { skip }, async () => {
  const { page, mount, close } = await open(() => assert.fail("the preview view calls no tool"), { width: 380 });
  for (const theme of ["light", "dark"]) {
    const { frame } = await mount("change-preview", "set_server_weight", { backend: "be_app", server: "app2", weight: 40, dryRun: true }, structured(fleetPreview()), { theme });
    const got = await previewInstances(frame);
    assert.deepEqual(
      got.map((i) => [i.instance, i.sends, i.sets, i.rows.weight ?? null, i.rows.admin_state ?? null]),
      [
        ["lb1", ["set weight be_app/app2 40"], ["weight"], "50 → 40", "ready"],
        ["lb2", ["set weight be_app/app2 40"], ["weight"], "30 → 40", "ready"],
        ["lb3", ["set weight be_app/app2 40"], [], null, null],
      ],
    );
    assert.equal(got[1].rows.current_sessions, "2");
    assert.deepEqual(got.map((i) => i.target), ["lb1 (unix:///run/haproxy/lb1.sock)", "lb2 (tcp://10.0.0.2:9999)", "lb3"]);
    assert.match(got[2].error, /cannot be read: HAProxy runtime API at unix:\/\/\/run\/haproxy\/lb3\.sock: connection refused/);
    assert.equal(await frame.$eval("section.instance[data-instance='lb3']", (e) => e.classList.contains("danger")), true);
    const card = await frame.$eval("article.card", (e) => e.innerText);
    assert.doesNotMatch(card, /[{}]/, "no JSON in the card");
    assert.match(await frame.$eval("section.after", (e) => e.innerText), /After\s+new sessions are balanced with the new weight/i);
    assert.equal((await frame.$$("button, a[href], input")).length, 0, "the card has no action");
    await noOverflow(frame);
    await shoot(page, frame, `change-preview-fleet-${theme}`);
  }
  await close();
});

// Shapes the view was not written for, and hostile values: each still shown
// as name/value rows (never a JSON blob, never markup), a fleet recognised
// only when every key of the state is an instance the preview names.
test("change-preview: unknown and hostile shapes as compact name/value tables", { skip }, async () => {
  const base = { dryRun: true, class: "change", summary: "s", effect: "e" };
  const deep = { a: { b: { c: { d: { e: { f: 1 } } } } } };
  const cases = [
    { name: "objects not named by the target: one state, nested tables", tool: "reload", target: "HAProxy at x", commands: ["reload"], state: { config: { path: "/etc/haproxy.cfg", valid: true }, limits: { maxconn: 100 } }, fleet: null, has: [/config\s+path\s+\/etc\/haproxy\.cfg\s+valid\s+true/, /limits\s+maxconn\s+100/] },
    { name: "instance keys named only by command prefixes", tool: "set_server_state", args: { state: "maint" }, target: "haproxy", commands: ["a: disable server be/s", "b: disable server be/s"], state: { a: { admin_state: "ready" }, b: { admin_state: "maint" } }, fleet: [["a", ["admin_state"], "ready → maint"], ["b", ["admin_state"], "maint → maint (already)"]] },
    { name: "one key of the state is not an instance: no fleet", tool: "set_server_state", args: { state: "drain" }, target: "HAProxy instances lb1", commands: ["lb1: x"], state: { lb1: { admin_state: "ready" }, other: { x: 1 } }, fleet: null, has: [/lb1\s+admin_state\s+ready/, /other\s+x\s+1/] },
    { name: "scalars mixed in: one state", tool: "set_server_state", args: { state: "drain" }, target: "HAProxy instances lb1, lb2", commands: [], state: { lb1: { admin_state: "ready" }, lb2: "ready" }, fleet: null, has: [/lb2\s+ready/] },
    { name: "empty state", tool: "x", target: "t", commands: [], state: {}, fleet: null, has: [/Now\s+none\s+After/i] },
    { name: "state is a string", tool: "x", target: "t", commands: [], state: "plain words", fleet: null, has: [/Now\s+plain words/i] },
    { name: "lists of scalars joined, lists of records as a table", tool: "x", target: "t", commands: [], state: { tags: ["a", "b", 3], rows: [{ k: "v1", n: 1 }, { k: "v2", n: { m: 2 } }] }, fleet: null, has: [/tags\s+a, b, 3/, /Now: rows\s+k\s+n\s+v1\s+1\s+v2\s+m\s+2/i] },
    { name: "deep nesting summarised past four levels", tool: "x", target: "t", commands: [], state: deep, fleet: null, has: [/a\s+b\s+c\s+d\s+e\s+1 field\(s\)/] },
    { name: "markup in keys, values, instance names and commands is text", tool: "set_server_weight", args: { weight: "<b>9</b>" }, target: "HAProxy instances <img>", commands: ["<img>: <script>x</script>"], state: { "<img>": { weight: "<i>1</i>", "<u>k</u>": "<s>v</s>" } }, fleet: [["<img>", ["weight"], "<i>1</i> → <b>9</b>"]], has: [/<u>k<\/u>\s+<s>v<\/s>/] },
    { name: "an argument of another tool's name sets nothing (agent port is not the server's)", tool: "set_server_agent", args: { port: 5555, state: "down" }, target: "HAProxy instances lb1", commands: ["lb1: set server be/s agent-port 5555"], state: { lb1: { port: 80, admin_state: "ready" } }, fleet: [["lb1", [], null]] },
    { name: "enable_server sets the admin state without an argument", tool: "enable_server", args: {}, target: "HAProxy instances lb1", commands: [], state: { lb1: { admin_state: "maint" } }, fleet: [["lb1", ["admin_state"], "maint → ready"]] },
    { name: "null and empty values", tool: "set_server_weight", args: { weight: null }, target: "HAProxy instances lb1", commands: [], state: { lb1: { weight: null, note: "", list: [], obj: {} } }, fleet: [["lb1", [], null]], has: [/weight\s+—/, /list\s+none/, /obj\s+none/] },
  ];
  const { mount, close } = await open(() => assert.fail("the preview view calls no tool"));
  for (const c of cases) {
    const data = { ...base, tool: c.tool, target: c.target, commands: c.commands, state: c.state };
    const { frame: f } = await mount("change-preview", c.tool, c.args || {}, structured(data));
    const card = await f.$eval("article.card", (e) => e.innerText);
    assert.doesNotMatch(card, /[{}]/, `${c.name}: no JSON in the card`);
    assert.equal(await f.$$eval("article.card b, article.card i, article.card img, article.card script, article.card s, article.card u", (els) => els.length), 0, `${c.name}: no markup from the data`);
    const got = await previewInstances(f);
    if (c.fleet === null) assert.deepEqual(got, [], `${c.name}: not a fleet`);
    else {
      const field = (i) => i.sets[0];
      assert.deepEqual(
        got.map((i) => [i.instance, i.sets, i.sets.length ? i.rows[field(i)] : null]),
        c.fleet,
        c.name,
      );
    }
    for (const re of c.has || []) assert.match(card, re, c.name);
  }
  await close();
});

test("first render under 500 ms (median of 10 per view)", { skip }, async () => {
  const inputs = {
    "consumer-lag": ["get_consumer_lag", {}, textResult(lagReport())],
    "cluster-health": ["get_cluster_health", {}, textResult(clusterHealth())],
    "backend-pool": ["list_servers", {}, structured(fixture("list_servers.fleet.json"))],
    "query-result": ["execute_query", {}, structured(json("sqlmcp/internal/cli/testdata/e2e/query.json.golden"))],
    "change-preview": ["set_server_state", {}, fixture("set_server_state.approval.json")],
  };
  const { mount, close } = await open(() => ({ content: [] }));
  await firstRender(mount, inputs, "first-render.json");
  await close();
});

test("every built view is fresh and under 400 KB", { skip: false }, async () => {
  const { buildAll } = await import("../build.mjs");
  for (const b of await buildAll()) {
    assert.equal(readFileSync(b.path, "utf8"), b.html, `${b.name} is stale: run node views/build.mjs`);
    assert.ok(Buffer.byteLength(b.html) < 400 * 1024, `${b.name} is under 400 KB`);
  }
});
