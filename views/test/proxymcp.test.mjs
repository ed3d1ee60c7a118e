// proxymcp's views against the REAL server: the test host (AppBridge in
// Debian's chromium, test/host.js) loads each view from the server's own
// ui:// resource, the tool result it is fed is a real tools/call, and every
// tools/call the view makes goes through a real MCP client (the official
// TypeScript SDK, declaring the MCP Apps extension and form elicitation) to
// a built proxymcp over streamable HTTP in front of a fleet of two real
// HAProxy instances (lb1, lb2), MCP_APPROVAL=change: the view's drain is
// approved, or not, by this client's elicitation handler, as a person in a
// host would. What HAProxy did is read from its runtime API (`show servers
// state`), not from proxymcp. Run by proxymcp's Go test
// (TestViewsInBrowser), which starts both HAProxy instances and the server
// and sets PROXYMCP_URL and PROXYMCP_SOCKETS ("lb1=/path,lb2=/path");
// screenshots and first-render-proxymcp.json go to $VIEWS_ARTIFACTS
// (default views/test/artifacts).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { requireDep, nodeModules } from "../build.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const artifacts = process.env.VIEWS_ARTIFACTS || join(here, "artifacts");
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
const mcpURL = process.env.PROXYMCP_URL;
const sockets = Object.fromEntries((process.env.PROXYMCP_SOCKETS || "").split(",").filter(Boolean).map((kv) => kv.split("=")));
const EXT = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";
// Generous bounds: the machine runs many tests at once (load 15-30).
const WAIT = 60000;

let skip = false;
if (!mcpURL) skip = "PROXYMCP_URL is not set: run go test ./proxymcp -run TestViewsInBrowser, which starts HAProxy and the server";
else if (!existsSync(chromiumPath)) {
  if (process.env.CI === "true") throw new Error(`chromium not found at ${chromiumPath}: run scripts/install/views.sh (Debian's chromium)`);
  skip = `chromium not found at ${chromiumPath} (scripts/install/views.sh installs it)`;
}

// The extension's restrictive default when _meta.ui.csp names no domain.
const CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'";

let server, port, browser, hostJS, mcp;
const html = new Map(); // view name → the HTML the server serves
// The person behind the client's elicitation: what they answer, and what
// they were shown.
let answer = "decline";
const asked = [];

before(async () => {
  if (skip) return;
  mkdirSync(artifacts, { recursive: true });
  const { Client, StreamableHTTPClientTransport } = await import(join(nodeModules(), "@modelcontextprotocol/client/dist/index.mjs"));
  mcp = new Client(
    { name: "mcpfleet-views-test-host", version: "1.0.0" },
    { capabilities: { extensions: { [EXT]: { mimeTypes: [MIME] } }, elicitation: { form: {} } } },
  );
  mcp.setRequestHandler("elicitation/create", async (req) => {
    asked.push(req.params.message);
    return answer === "accept" ? { action: "accept", content: {} } : { action: answer };
  });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(mcpURL)));
  for (const view of ["backend-pool", "change-preview"]) {
    const uri = `ui://proxymcp/${view}`;
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

// call is a real tools/call to proxymcp.
const call = (name, args) => mcp.callTool({ name, arguments: args });

// serversState is HAProxy's own `show servers state` of one instance, read
// from its runtime API: {"be_app/app1": {srv_admin_state, srv_uweight, ...}}.
function serversState(instance) {
  return new Promise((resolve, reject) => {
    const c = net.connect(sockets[instance], () => c.end("show servers state\n"));
    let out = "";
    c.setEncoding("utf8");
    c.on("data", (d) => (out += d));
    c.on("error", reject);
    c.on("end", () => {
      const lines = out.split("\n").filter((l) => l.trim());
      const head = lines.find((l) => l.startsWith("# "))?.slice(2).split(" ");
      if (!head) return reject(new Error(`${instance}: no header in show servers state: ${out}`));
      const rows = {};
      for (const l of lines) {
        if (l.startsWith("#") || !l.includes(" ")) continue;
        const v = l.split(" ");
        const r = Object.fromEntries(head.map((k, i) => [k, v[i]]));
        rows[`${r.be_name}/${r.srv_name}`] = r;
      }
      resolve(rows);
    });
  });
}

// drained tells HAProxy's forced-drain bit (SRV_ADMF_FDRAIN, 0x08) in
// srv_admin_state: what "set server ... state drain" sets.
const drained = (row) => (Number(row.srv_admin_state) & 0x08) !== 0;

async function open({ width = 560 } = {}) {
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

// rows are the pool's server rows as the view shows them.
const rows = (frame, server) =>
  frame.$$eval(server ? `tr[data-server='${server}']` : "tr[data-server]", (els) =>
    els.map((e) => [e.dataset.server, e.dataset.instance, e.dataset.status, e.classList.contains("diverges")]),
  );

test("backend-pool against proxymcp: a fleet of two HAProxy, the divergence highlighted; drain declined, then accepted, through elicitation", { skip }, async () => {
  const args = { backend: "be_app" };
  const first = await call("list_servers", args);
  assert.ok(!first.isError, JSON.stringify(first));
  assert.deepEqual(first.structuredContent.compared, ["lb1", "lb2"]);
  const { page, calls, mount, close } = await open();
  for (const theme of ["light", "dark"]) {
    const { frame } = await mount("backend-pool", "list_servers", args, first, { theme });
    const got = await rows(frame);
    // Both instances' servers, each row with its instance; only app2
    // differs (its weight was changed on lb2 behind proxymcp's back).
    assert.deepEqual(
      got.map(([s, i, , d]) => [s, i, d]),
      [
        ["be_app/app1", "lb1", false],
        ["be_app/app1", "lb2", false],
        ["be_app/app2", "lb1", true],
        ["be_app/app2", "lb2", true],
        ["be_app/app3", "lb1", false],
        ["be_app/app3", "lb2", false],
      ],
    );
    assert.match(await frame.$eval("section.message.warning", (e) => e.innerText), /1 server\(s\) differ between instances[\s\S]*be_app\/app2/);
    assert.deepEqual(await frame.$$eval("tr[data-server='be_app/app2'] td.num.diff", (els) => els.map((e) => e.textContent)), ["50", "30"]);
    assert.match(await frame.$eval(".meta", (e) => e.textContent), /2 instances \(lb1, lb2\)/);
    await shoot(page, frame, `proxymcp-backend-pool-${theme}`);
  }

  const { frame } = await mount("backend-pool", "list_servers", args, first);
  const before = { lb1: await serversState("lb1"), lb2: await serversState("lb2") };
  assert.ok(!drained(before.lb1["be_app/app1"]) && !drained(before.lb2["be_app/app1"]), "app1 serves on both at the start");

  // Decline: the view's Drain is set_server_state through the host, the
  // person is asked (elicitation), declines, and HAProxy is unchanged.
  answer = "decline";
  await frame.focus("button[aria-label='Drain be_app/app1']");
  await page.keyboard.press("Enter");
  await frame.waitForSelector("article.card.outcome.danger");
  await frame.waitForSelector("button:text-is('Refresh'):not([disabled])");
  assert.deepEqual(calls.slice(0, 2), [
    { name: "set_server_state", arguments: { backend: "be_app", server: "app1", state: "drain" } },
    { name: "list_servers", arguments: args },
  ]);
  assert.equal(asked.length, 1, "the person was asked once");
  assert.match(asked[0], /set_server_state/);
  assert.match(asked[0], /set server be_app\/app1 state drain/);
  assert.match(await frame.$eval("article.card.outcome.danger", (e) => e.innerText), /declined[\s\S]*nothing was changed/);
  for (const lb of ["lb1", "lb2"]) {
    const now = await serversState(lb);
    assert.equal(now["be_app/app1"].srv_admin_state, before[lb]["be_app/app1"].srv_admin_state, `${lb}: app1 unchanged after the decline`);
  }
  assert.equal((await rows(frame, "be_app/app1")).map((r) => r[2]).join(), "UP,UP");
  await shoot(page, frame, "proxymcp-backend-pool-declined");

  // Accept: the same button, the person accepts, HAProxy drains app1 on
  // both instances and the refreshed pool shows it.
  answer = "accept";
  await frame.focus("button[aria-label='Drain be_app/app1']");
  await page.keyboard.press("Enter");
  await frame.waitForSelector("article.card.outcome:not(.danger)");
  await frame.waitForFunction(() => [...document.querySelectorAll("tr[data-server='be_app/app1']")].map((e) => e.dataset.status).join() === "DRAIN,DRAIN");
  assert.deepEqual(calls.slice(2, 4), [
    { name: "set_server_state", arguments: { backend: "be_app", server: "app1", state: "drain" } },
    { name: "list_servers", arguments: args },
  ]);
  assert.equal(asked.length, 2, "the person was asked again");
  for (const lb of ["lb1", "lb2"]) {
    const now = await serversState(lb);
    assert.ok(drained(now["be_app/app1"]), `${lb}: app1 drained on HAProxy (srv_admin_state ${now["be_app/app1"].srv_admin_state})`);
    assert.ok(!drained(now["be_app/app2"]), `${lb}: app2 untouched`);
  }
  await shoot(page, frame, "proxymcp-backend-pool-after-drain");
  // No approve action anywhere in the view.
  assert.equal((await frame.$$eval("button", (els) => els.filter((b) => /approve|confirm/i.test(b.textContent)))).length, 0, "no approve button");

  // Back to ready, for the tests after this one (accepted as well).
  const ready = await call("set_server_state", { backend: "be_app", server: "app1", state: "ready" });
  assert.ok(!ready.isError, JSON.stringify(ready));
  await close();
});

test("change-preview against proxymcp: a real dry run of a fleet drain as a card", { skip }, async () => {
  const args = { backend: "be_app", server: "app1", state: "drain", dryRun: true };
  const res = await call("set_server_state", args);
  assert.ok(!res.isError, JSON.stringify(res));
  const { page, mount, close } = await open();
  const { frame } = await mount("change-preview", "set_server_state", args, res);
  const card = await frame.$eval("article.card", (e) => e.innerText);
  assert.match(card, /Dry run — nothing was changed/);
  assert.match(card, /lb1/);
  assert.match(card, /lb2/);
  await shoot(page, frame, "proxymcp-change-preview");
  for (const lb of ["lb1", "lb2"]) assert.ok(!drained((await serversState(lb))["be_app/app1"]), `${lb}: the dry run drained nothing`);
  await close();
});

test("first render of proxymcp's views under 500 ms (median of 10, real results)", { skip }, async () => {
  const inputs = {
    "backend-pool": ["list_servers", {}],
    "change-preview": ["set_server_state", { backend: "be_app", server: "app1", state: "drain", dryRun: true }],
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
  writeFileSync(join(artifacts, "first-render-proxymcp.json"), JSON.stringify(medians, null, 2) + "\n");
  console.log("proxymcp first render, median of 10 (ms):", JSON.stringify(medians));
  for (const [view, ms] of Object.entries(medians)) assert.ok(ms < 500, `${view}: ${ms} ms`);
  await close();
});
