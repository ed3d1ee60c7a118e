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
import http from "node:http";
import { readFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { requireDep } from "../build.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const views = dirname(here);
const repo = dirname(views);
const artifacts = process.env.VIEWS_ARTIFACTS || join(here, "artifacts");
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
const manifest = JSON.parse(readFileSync(join(views, "views.json"), "utf8")).views;

let skip = false;
if (!existsSync(chromiumPath)) {
  if (process.env.CI === "true") throw new Error(`chromium not found at ${chromiumPath}: run scripts/install/views.sh (Debian's chromium)`);
  skip = `chromium not found at ${chromiumPath} (scripts/install/views.sh installs it)`;
}

const json = (p) => JSON.parse(readFileSync(join(repo, p), "utf8"));
const fixture = (name) => JSON.parse(readFileSync(join(views, "testdata", name), "utf8"));
const textResult = (obj) => ({ content: [{ type: "text", text: JSON.stringify(obj, null, 2) }] });
const structured = (obj) => ({ content: [{ type: "text", text: JSON.stringify(obj) }], structuredContent: obj });
const READ_AT = "2026-11-27T06:15:00Z";

// The restrictive default the extension prescribes when _meta.ui.csp names
// no domain (what our views declare).
const CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'";

let server, port, browser, hostJS;

before(async () => {
  if (skip) return;
  mkdirSync(artifacts, { recursive: true });
  const esbuild = requireDep("esbuild");
  const { nodeModules } = await import("../build.mjs");
  const out = await esbuild.build({ entryPoints: [join(here, "host.js")], bundle: true, format: "iife", write: false, nodePaths: [nodeModules()], logLevel: "error" });
  hostJS = out.outputFiles[0].text;
  server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/favicon.ico") {
      res.writeHead(204).end();
    } else if (url.pathname === "/host.html") {
      res.writeHead(200, { "content-type": "text/html" }).end('<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0;padding:8px"><script src="/host.js"></script></body></html>');
    } else if (url.pathname === "/host.js") {
      res.writeHead(200, { "content-type": "text/javascript" }).end(hostJS);
    } else if (url.pathname.startsWith("/view/")) {
      const v = manifest[url.pathname.slice(6).replace(/\.html$/, "")];
      if (!v) return res.writeHead(404).end();
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-security-policy": CSP }).end(readFileSync(join(repo, v.out)));
    } else res.writeHead(404).end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  port = server.address().port;
  const { chromium } = requireDep("playwright-core");
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});

after(async () => {
  await browser?.close();
  server?.close();
});

// open gives a host page whose tool calls are recorded and answered by answer.
async function open(answer, { width = 380 } = {}) {
  const ctx = await browser.newContext({ viewport: { width: width + 16, height: 900 }, deviceScaleFactor: 1 });
  const page = await ctx.newPage();
  const calls = [];
  const problems = [];
  await page.exposeFunction("hostCallTool", async (params) => {
    calls.push(params);
    return answer(params);
  });
  const hostOrigin = `http://127.0.0.1:${port}`;
  const viewOrigin = `http://localhost:${port}`;
  page.on("request", (r) => {
    const u = r.url();
    if (!u.startsWith(hostOrigin) && !u.startsWith(viewOrigin + "/view/") && !u.startsWith("data:") && !u.startsWith("blob:")) problems.push("request to " + u);
  });
  page.on("console", (m) => {
    if (m.type() === "error" || /Content Security Policy/.test(m.text())) problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  await page.goto(`${hostOrigin}/host.html`);
  const mount = async (view, toolName, args, result, opts = {}) => {
    const start = await page.evaluate((p) => window.mountView(p), { url: `${viewOrigin}/view/${view}.html`, toolName, args, result, width, ...opts });
    const frame = await (await page.waitForSelector("iframe")).contentFrame();
    await frame.waitForSelector("html[data-rendered]");
    return { frame, start };
  };
  const close = async () => {
    await ctx.close();
    assert.deepEqual(problems, [], "the view fetched nothing, broke no CSP rule and logged no error");
  };
  return { page, calls, mount, close };
}

async function shoot(page, frame, name) {
  await page.waitForTimeout(120); // the host applies the view's size-changed
  const height = await frame.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: page.viewportSize().width, height: Math.min(4000, height + 16) });
  const path = join(artifacts, name + ".png");
  await page.screenshot({ path });
  return path;
}

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

test("first render under 500 ms (median of 10 per view)", { skip }, async () => {
  const inputs = {
    "consumer-lag": ["get_consumer_lag", textResult(lagReport())],
    "cluster-health": ["get_cluster_health", textResult(clusterHealth())],
    "backend-pool": ["list_servers", structured(fixture("list_servers.fleet.json"))],
    "query-result": ["execute_query", structured(json("sqlmcp/internal/cli/testdata/e2e/query.json.golden"))],
    "change-preview": ["set_server_state", fixture("set_server_state.approval.json")],
  };
  const { mount, close } = await open(() => ({ content: [] }));
  const medians = {};
  for (const [view, [tool, result]] of Object.entries(inputs)) {
    const times = [];
    for (let i = 0; i < 10; i++) {
      const { frame, start } = await mount(view, tool, {}, result);
      times.push((await frame.evaluate(() => window.__firstRenderAt)) - start);
    }
    times.sort((a, b) => a - b);
    medians[view] = Math.round(((times[4] + times[5]) / 2) * 10) / 10;
  }
  writeFileSync(join(artifacts, "first-render.json"), JSON.stringify(medians, null, 2) + "\n");
  console.log("first render, median of 10 (ms):", JSON.stringify(medians));
  for (const [view, ms] of Object.entries(medians)) assert.ok(ms < 500, `${view}: ${ms} ms`);
  await close();
});

test("every built view is fresh and under 400 KB", { skip: false }, async () => {
  const { buildAll } = await import("../build.mjs");
  for (const b of await buildAll()) {
    assert.equal(readFileSync(b.path, "utf8"), b.html, `${b.name} is stale: run node views/build.mjs`);
    assert.ok(Buffer.byteLength(b.html) < 400 * 1024, `${b.name} is under 400 KB`);
  }
});
