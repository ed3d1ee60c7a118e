// streammcp's views against the REAL server: the test host (AppBridge in
// Debian's chromium, test/host.js) loads each view from the server's own
// ui:// resource, the tool result it is fed is a real tools/call, and every
// tools/call the view makes goes through a real MCP client (the official
// TypeScript SDK, declaring the MCP Apps extension) to a built streammcp over
// streamable HTTP, reading the in-process Kafka cluster (kfake, the seeded
// scenario of streammcp/internal/kafkatest). Run by streammcp's Go test
// (TestViewsInBrowser), which starts the cluster and the server and sets
// STREAMMCP_URL; screenshots and first-render-streammcp.json go to
// $VIEWS_ARTIFACTS (default views/test/artifacts).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { requireDep, nodeModules } from "../build.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const artifacts = process.env.VIEWS_ARTIFACTS || join(here, "artifacts");
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
const mcpURL = process.env.STREAMMCP_URL;
const CLUSTER = process.env.STREAMMCP_CLUSTER || "default";
const EXT = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";
// Generous bounds: the machine runs many tests at once (load 15-30).
const WAIT = 60000;

let skip = false;
if (!mcpURL) skip = "STREAMMCP_URL is not set: run go test ./streammcp -run TestViewsInBrowser, which starts the server";
else if (!existsSync(chromiumPath)) {
  if (process.env.CI === "true") throw new Error(`chromium not found at ${chromiumPath}: run scripts/install/views.sh (Debian's chromium)`);
  skip = `chromium not found at ${chromiumPath} (scripts/install/views.sh installs it)`;
}

// The extension's restrictive default when _meta.ui.csp names no domain.
const CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'";

let server, port, browser, hostJS, mcp;
const html = new Map(); // view name → the HTML the server serves

before(async () => {
  if (skip) return;
  mkdirSync(artifacts, { recursive: true });
  const { Client, StreamableHTTPClientTransport } = await import(join(nodeModules(), "@modelcontextprotocol/client/dist/index.mjs"));
  mcp = new Client({ name: "mcpfleet-views-test-host", version: "1.0.0" }, { capabilities: { extensions: { [EXT]: { mimeTypes: [MIME] } } } });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(mcpURL)));
  for (const view of ["consumer-lag", "cluster-health", "change-preview"]) {
    const uri = `ui://streammcp/${view}`;
    const res = await mcp.readResource({ uri });
    assert.equal(res.contents.length, 1, uri);
    assert.equal(res.contents[0].mimeType, MIME, uri);
    html.set(view, res.contents[0].text);
  }
  const esbuild = requireDep("esbuild");
  const out = await esbuild.build({ entryPoints: [join(here, "host.js")], bundle: true, format: "iife", write: false, nodePaths: [nodeModules()], logLevel: "error" });
  hostJS = out.outputFiles[0].text;
  server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/favicon.ico") res.writeHead(204).end();
    else if (url.pathname === "/host.html")
      res.writeHead(200, { "content-type": "text/html" }).end('<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0;padding:8px"><script src="/host.js"></script></body></html>');
    else if (url.pathname === "/host.js") res.writeHead(200, { "content-type": "text/javascript" }).end(hostJS);
    else if (url.pathname.startsWith("/view/") && html.has(url.pathname.slice(6)))
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-security-policy": CSP }).end(html.get(url.pathname.slice(6)));
    else res.writeHead(404).end();
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
  await mcp?.close();
});

// call is a real tools/call to streammcp.
const call = (name, args) => mcp.callTool({ name, arguments: args });

async function open({ width = 420 } = {}) {
  const ctx = await browser.newContext({ viewport: { width: width + 16, height: 900 }, deviceScaleFactor: 1 });
  ctx.setDefaultTimeout(WAIT);
  const page = await ctx.newPage();
  const calls = [];
  const problems = [];
  // The host answers the view's tools/call through the real MCP client.
  await page.exposeFunction("hostCallTool", async (params) => {
    calls.push(params);
    return call(params.name, params.arguments);
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
    const start = await page.evaluate((p) => window.mountView(p), { url: `${viewOrigin}/view/${view}`, toolName, args, result, width, ...opts });
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
  // The picture is taken once the host applied the view's size-changed
  // (the iframe is of another origin: its height is measured inside it).
  const height = await frame.evaluate(() => document.documentElement.scrollHeight);
  await page.waitForFunction((h) => Math.abs(document.querySelector("iframe").getBoundingClientRect().height - h) <= 2, height);
  await page.setViewportSize({ width: page.viewportSize().width, height: Math.min(4000, height + 16) });
  const path = join(artifacts, name + ".png");
  await page.screenshot({ path });
  return path;
}

test("consumer-lag against streammcp: the fixture's groups by lag, refresh, dry-run reset", { skip }, async () => {
  const args = { cluster: CLUSTER };
  const first = await call("get_consumer_lag", args);
  assert.ok(!first.isError, JSON.stringify(first));
  assert.equal(first.structuredContent.reset_tool, "reset_consumer_group_offsets", "writes are allowed: the reset is offered");
  const { page, calls, mount, close } = await open();
  for (const theme of ["light", "dark"]) {
    const { frame } = await mount("consumer-lag", "get_consumer_lag", args, first, { theme });
    const groups = await frame.$$eval("li.group", (els) => els.map((e) => [e.dataset.group, e.classList.contains("high"), e.querySelector(".lag").textContent]));
    // The seeded scenario (fakekafka.SeedScenario) at threshold 1000.
    assert.deepEqual(groups.slice(0, 4), [
      ["orders-replay", true, "5,100"],
      ["orders-processor", true, "5,000"],
      ["payments-audit", false, "80"],
      ["audit-archiver", false, "0"],
    ]);
    assert.equal(await frame.$eval("h1", (e) => e.textContent), `Consumer lag — ${CLUSTER}`);
    await shoot(page, frame, `streammcp-consumer-lag-${theme}`);
  }
  const { frame } = await mount("consumer-lag", "get_consumer_lag", args, first);
  // Refresh, from the keyboard: a real second read of the same tool.
  await frame.focus("button[aria-label='Refresh the lag report']");
  await page.keyboard.press("Enter");
  await frame.waitForFunction(() => (document.querySelector("li[data-group='orders-replay'] .spark")?.getAttribute("aria-label") || "").includes("over 2 reads"));
  assert.deepEqual(calls, [{ name: "get_consumer_lag", arguments: args }]);
  assert.equal(await frame.$eval("li[data-group='orders-replay'] .spark", (e) => e.getAttribute("aria-label")), "lag of orders-replay over 2 reads: 5100, 5100");
  // The dry-run reset of orders-replay's orders[0]: the call is
  // reset_consumer_group_offsets' own schema, and the card is the real preview.
  await frame.click("li[data-group='orders-replay'] .parts button");
  await frame.waitForSelector("article.card.preview");
  assert.deepEqual(calls[1], {
    name: "reset_consumer_group_offsets",
    arguments: { cluster: CLUSTER, group_id: "orders-replay", topic: "orders", to_latest: true, dryRun: true },
  });
  // innerText collapses the preview's runs of spaces: compare words.
  const words = (t) => t.replace(/\s+/g, " ").trim();
  const card = words(await frame.$eval("article.card.preview", (e) => e.innerText));
  assert.match(card, /Dry run — nothing was changed/);
  assert.match(card, /reset_consumer_group_offsets/);
  const direct = await call("reset_consumer_group_offsets", calls[1].arguments);
  const preview = direct.structuredContent || JSON.parse(direct.content[0].text);
  assert.ok(card.includes(words(preview.summary)), `the card shows the server's summary ${JSON.stringify(preview.summary)}`);
  assert.ok(preview.commands.length > 0);
  for (const c of preview.commands) assert.ok(card.includes(words(c)), `the card shows the command ${c}`);
  await shoot(page, frame, "streammcp-consumer-lag-reset-preview");
  // Nothing was reset: the group still lags.
  const after = await call("get_consumer_lag", args);
  assert.equal(after.structuredContent.group_summary.find((g) => g.group_id === "orders-replay").total_lag, 5100);
  await close();
});

test("cluster-health against streammcp: brokers, controller, partitions; refresh", { skip }, async () => {
  const first = await call("get_cluster_health", {});
  assert.ok(!first.isError, JSON.stringify(first));
  const { page, calls, mount, close } = await open({ width: 560 });
  for (const theme of ["light", "dark"]) {
    const { frame } = await mount("cluster-health", "get_cluster_health", {}, first, { theme });
    const cards = await frame.$$eval("article.cluster", (els) => els.map((e) => e.dataset.cluster));
    assert.deepEqual(cards, [CLUSTER]);
    const text = await frame.$eval(`article[data-cluster='${CLUSTER}']`, (e) => e.innerText);
    assert.match(text, /3\/3\s+brokers online/);
    await shoot(page, frame, `streammcp-cluster-health-${theme}`);
  }
  const { frame } = await mount("cluster-health", "get_cluster_health", {}, first);
  // Refresh: a real second read; the view shows "Reading…" until it answers.
  await frame.click("button:text-is('Refresh')");
  await frame.waitForSelector("button:text-is('Refresh'):not([disabled])");
  assert.equal(calls.length, 1);
  assert.equal(await frame.$$eval("article.cluster", (els) => els.length), 1);
  assert.deepEqual(calls[0], { name: "get_cluster_health", arguments: {} });
  await close();
});

test("change-preview against streammcp: a real dry run as a card", { skip }, async () => {
  const args = { cluster: CLUSTER, group_id: "orders-replay", topic: "orders", to_latest: true, dryRun: true };
  const res = await call("reset_consumer_group_offsets", args);
  assert.ok(!res.isError, JSON.stringify(res));
  const { page, mount, close } = await open();
  const { frame } = await mount("change-preview", "reset_consumer_group_offsets", args, res);
  const card = await frame.$eval("article.card", (e) => e.innerText);
  assert.match(card, /Dry run — nothing was changed/);
  await shoot(page, frame, "streammcp-change-preview");
  await close();
});

test("first render of streammcp's views under 500 ms (median of 10, real results)", { skip }, async () => {
  const inputs = {
    "consumer-lag": ["get_consumer_lag", { cluster: CLUSTER }],
    "cluster-health": ["get_cluster_health", {}],
    "change-preview": ["reset_consumer_group_offsets", { cluster: CLUSTER, group_id: "orders-replay", topic: "orders", to_latest: true, dryRun: true }],
  };
  const { mount, close } = await open();
  const medians = {};
  for (const [view, [tool, args]] of Object.entries(inputs)) {
    const result = await call(tool, args);
    const times = [];
    for (let i = 0; i < 10; i++) {
      const { frame, start } = await mount(view, tool, args, result);
      times.push((await frame.evaluate(() => window.__firstRenderAt)) - start);
    }
    times.sort((a, b) => a - b);
    medians[view] = Math.round(((times[4] + times[5]) / 2) * 10) / 10;
  }
  writeFileSync(join(artifacts, "first-render-streammcp.json"), JSON.stringify(medians, null, 2) + "\n");
  console.log("streammcp first render, median of 10 (ms):", JSON.stringify(medians));
  for (const [view, ms] of Object.entries(medians)) assert.ok(ms < 500, `${view}: ${ms} ms`);
  await close();
});
