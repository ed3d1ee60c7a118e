// sqlmcp's query-result view against the REAL server: the test host
// (AppBridge in Debian's chromium, test/host.js) loads the view from the
// server's own ui:// resource, the tool result it is fed is a real
// tools/call, and every tools/call the view makes (fetch more) goes through
// a real MCP client (the official TypeScript SDK, declaring the MCP Apps
// extension) to a built sqlmcp over streamable HTTP, querying the
// Trino-protocol test engine (sqlmcp/internal/trinotest, DuckDB behind the
// real protocol). Run by sqlmcp's Go test (TestViewsInBrowser), which starts
// the engine and the server and sets SQLMCP_URL (and SQLMCP_PAGING_TAG, the
// comment that marks the paged query so the Go side can count the engine
// queries it started); screenshots and first-render-sqlmcp.json go to
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
const mcpURL = process.env.SQLMCP_URL;
const PAGING_TAG = process.env.SQLMCP_PAGING_TAG || "views-paging";
const EXT = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";
// Generous bounds: the machine runs many tests at once (load 15-30).
const WAIT = 60000;

let skip = false;
if (!mcpURL) skip = "SQLMCP_URL is not set: run go test ./sqlmcp -run TestViewsInBrowser, which starts the engine and the server";
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
  for (const view of ["query-result", "change-preview"]) {
    const uri = `ui://sqlmcp/${view}`;
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

// call is a real tools/call to sqlmcp.
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

const structured = (res) => {
  assert.ok(!res.isError, JSON.stringify(res));
  return res.structuredContent;
};
const waitFor = async (frame, fn, arg) => frame.waitForFunction(fn, arg, { timeout: WAIT });

test("query-result against sqlmcp: the customers' rows and column types in the grid, CSV through the host", { skip }, async () => {
  const args = { query: "SELECT * FROM customers ORDER BY id" };
  const res = await call("execute_query", args);
  const data = structured(res);
  assert.equal(data.row_count, 5);
  const { page, calls, mount, close } = await open({ width: 560 });
  for (const theme of ["light", "dark"]) {
    const { frame } = await mount("query-result", "execute_query", args, res, { theme });
    // sqlmcp/internal/cli/testdata/e2e/query.json.golden's columns and rows.
    assert.deepEqual(await frame.$$eval("thead th", (els) => els.map((e) => e.querySelector(".cname").textContent + ":" + e.querySelector(".ctype").textContent)), [
      "id:integer", "name:varchar", "email:varchar", "country:varchar", "signup_date:date", "vip:boolean", "balance:decimal(12,2)",
    ]);
    assert.deepEqual(await frame.$$eval("tbody tr", (els) => els.map((e) => [...e.children].map((c) => c.textContent).join("|"))), [
      "1|Alice Martin|alice@example.com|FR|2021-03-04|true|1250.50",
      "2|Bob Stone|bob@example.com|US|2022-07-19|false|0.00",
      "3|Chloé Dubois|NULL|FR|2023-01-02|NULL|99.99",
      "4|Dan O'Hara|dan@example.com|NULL|NULL|false|NULL",
      "5|山田 太郎|taro@example.jp|JP|2024-02-29|true|12345678.90",
    ]);
    assert.match(await frame.$eval(".meta", (e) => e.textContent), new RegExp(`^5 row\\(s\\) · complete · .* ms · ${data.query_id}$`));
    assert.equal(await frame.$$eval("figure.chart", (e) => e.length), 0, "no chart for seven columns");
    await shoot(page, frame, `sqlmcp-query-result-${theme}`);
  }
  const { frame } = await mount("query-result", "execute_query", args, res);
  await frame.click("text=Download CSV");
  await page.waitForFunction(() => window.__downloads.length === 1);
  const dl = (await page.evaluate(() => window.__downloads))[0].contents[0].resource;
  assert.equal(dl.mimeType, "text/csv");
  assert.equal(dl.uri, `file:///query-${data.query_id}.csv`);
  assert.equal(dl.text.split("\r\n")[0], "id,name,email,country,signup_date,vip,balance");
  assert.equal(dl.text.split("\r\n")[4], "4,Dan O'Hara,dan@example.com,,,false,");
  assert.deepEqual(calls, [], "showing and downloading call no tool");
  await close();
});

test("query-result against sqlmcp: a chart for a two-column numeric result", { skip }, async () => {
  const args = { query: "SELECT id, amount FROM orders WHERE amount IS NOT NULL ORDER BY id" };
  const res = await call("execute_query", args);
  assert.deepEqual(structured(res).columns.map((c) => c.type), ["bigint", "decimal(10,2)"]);
  const { page, mount, close } = await open({ width: 560 });
  for (const theme of ["light", "dark"]) {
    const { frame } = await mount("query-result", "execute_query", args, res, { theme });
    assert.equal(await frame.$eval("figure.chart svg", (e) => e.getAttribute("aria-label")), "amount by id, 7 points");
    assert.equal(await frame.$$eval("figure.chart polyline", (e) => e.length), 1);
    assert.equal((await frame.$eval("figure.chart polyline", (e) => e.getAttribute("points"))).split(" ").length, 7);
    await shoot(page, frame, `sqlmcp-query-result-chart-${theme}`);
  }
  await close();
});

test("query-result against sqlmcp: fetch more continues the same engine query through the host", { skip }, async () => {
  const args = { query: `SELECT id, level AS "${PAGING_TAG}" FROM warehouse.logs.events ORDER BY id`, limit: 3 };
  const res = await call("execute_query", args);
  const first = structured(res);
  assert.ok(first.next_cursor, "a cursor for the next page");
  assert.deepEqual(first.rows.map((r) => r[0]), [1, 2, 3]);
  const { page, calls, mount, close } = await open({ width: 560 });
  const { frame } = await mount("query-result", "execute_query", args, res);
  assert.match(await frame.$eval(".meta", (e) => e.textContent), /^3 row\(s\) · more rows available/);
  await frame.focus("button:text-is('Fetch more')");
  await page.keyboard.press("Enter");
  await waitFor(frame, () => document.querySelectorAll("tbody tr").length === 6);
  assert.equal(calls.length, 1);
  assert.deepEqual(calls[0], { name: "fetch_more", arguments: { cursor: first.next_cursor } });
  assert.deepEqual(await frame.$$eval("tbody tr td:first-child", (els) => els.map((e) => e.textContent)), ["1", "2", "3", "4", "5", "6"]);
  assert.match(await frame.$eval(".meta", (e) => e.textContent), /^6 row\(s\) · more rows available/);
  await frame.click("button:text-is('Fetch more')");
  await waitFor(frame, () => document.querySelectorAll("tbody tr").length === 9);
  assert.equal(calls.length, 2);
  assert.notEqual(calls[1].arguments.cursor, undefined);
  await shoot(page, frame, "sqlmcp-query-result-paged");
  await close();
});

test("query-result against sqlmcp: a DELETE's dry run is the preview card, and nothing is deleted", { skip }, async () => {
  const args = { query: "DELETE FROM orders WHERE id = 105", dryRun: true };
  const res = await call("execute_query", args);
  assert.ok(!res.isError, JSON.stringify(res));
  const { page, calls, mount, close } = await open({ width: 560 });
  const { frame } = await mount("query-result", "execute_query", args, res);
  const words = (t) => t.replace(/\s+/g, " ").trim();
  const card = words(await frame.$eval("article.card.preview", (e) => e.innerText));
  assert.match(card, /Dry run — nothing was changed/);
  assert.ok(card.includes(words(res.structuredContent.summary)), `the card shows the server's summary ${res.structuredContent.summary}`);
  assert.ok(card.includes("DELETE FROM orders WHERE id = 105"));
  assert.equal((await frame.$$("button")).length, 0, "the card has no action");
  assert.deepEqual(calls, []);
  await shoot(page, frame, "sqlmcp-query-result-delete-preview");
  const still = structured(await call("execute_query", { query: "SELECT count(*) AS n FROM orders WHERE id = 105" }));
  assert.deepEqual(still.rows, [[1]]);
  await close();
});

test("first render of sqlmcp's query-result under 500 ms (median of 10, real results)", { skip }, async () => {
  const args = { query: "SELECT * FROM customers ORDER BY id" };
  const result = await call("execute_query", args);
  const { mount, close } = await open({ width: 560 });
  const times = [];
  for (let i = 0; i < 10; i++) {
    const { frame, start } = await mount("query-result", "execute_query", args, result);
    times.push((await frame.evaluate(() => window.__firstRenderAt)) - start);
  }
  times.sort((a, b) => a - b);
  const medians = { "query-result": Math.round(((times[4] + times[5]) / 2) * 10) / 10 };
  writeFileSync(join(artifacts, "first-render-sqlmcp.json"), JSON.stringify(medians, null, 2) + "\n");
  console.log("sqlmcp first render, median of 10 (ms):", JSON.stringify(medians));
  assert.ok(medians["query-result"] < 500, `query-result: ${medians["query-result"]} ms`);
  await close();
});
