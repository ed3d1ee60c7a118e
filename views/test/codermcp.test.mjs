// codermcp's change-preview view against the REAL server: the test host
// (AppBridge in Debian's chromium, test/host.js) loads the view from the
// server's own ui:// resource and is fed real tools/call results of a built
// codermcp over streamable HTTP, running the real Codex CLI against the
// codertest model endpoint. Run by codermcp's Go test (TestViewsInBrowser),
// which starts the endpoint and the server and sets CODERMCP_URL and
// CODERMCP_DIR (a workspace); screenshots and first-render-codermcp.json go
// to $VIEWS_ARTIFACTS (default views/test/artifacts).
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
const mcpURL = process.env.CODERMCP_URL;
const DIR = process.env.CODERMCP_DIR;
const EXT = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";
// Generous bounds: the machine runs many tests at once (load 15-30).
const WAIT = 60000;

let skip = false;
if (!mcpURL || !DIR) skip = "CODERMCP_URL or CODERMCP_DIR is not set: run go test ./codermcp -run TestViewsInBrowser, which starts the server";
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
  for (const view of ["change-preview"]) {
    const uri = `ui://codermcp/${view}`;
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

// call is a real tools/call to codermcp.
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

// innerText collapses runs of spaces: compare words.
const words = (t) => t.replace(/\s+/g, " ").trim();

test("change-preview against codermcp: a workspace-write dry run as a card, light and dark", { skip }, async () => {
  const args = { prompt: "add a README [[shell:echo hi > README.md]]", sandbox: "workspace-write", workingDirectory: DIR, dryRun: true };
  const res = await call("coder", args);
  assert.ok(!res.isError, JSON.stringify(res));
  const preview = res.structuredContent;
  assert.equal(preview.dryRun, true);
  const { page, mount, close } = await open({ width: 560 });
  for (const theme of ["light", "dark"]) {
    const { frame } = await mount("change-preview", "coder", args, res, { theme });
    const card = words(await frame.$eval("article.card", (e) => e.innerText));
    assert.match(card, /Dry run — nothing was changed/);
    assert.match(card, /coder/);
    assert.ok(card.includes(words(preview.summary)), `the card shows the server's summary ${JSON.stringify(preview.summary)}`);
    for (const c of preview.commands) assert.ok(card.includes(words(c)), `the card shows the command line ${c}`);
    await shoot(page, frame, `codermcp-change-preview-${theme}`);
  }
  await close();
});

// The outcome card shows the result's structuredContent (coder's: model,
// sessionId, threadId), not the reply text, which stays in the content the
// host shows beside the view.
test("change-preview against codermcp: a read-only call's outcome as a card", { skip }, async () => {
  const args = { prompt: "[[reply:the answer is 42]]", workingDirectory: DIR };
  const res = await call("coder", args);
  assert.ok(!res.isError, JSON.stringify(res));
  assert.equal(res.content[0].text, "the answer is 42");
  const { page, mount, close } = await open();
  const { frame } = await mount("change-preview", "coder", args, res);
  const card = words(await frame.$eval("body", (e) => e.innerText));
  assert.match(card, /coder — applied ok/);
  for (const k of ["model", "sessionId", "threadId"]) assert.ok(card.includes(`${k} ${res.structuredContent[k]}`), `the card shows ${k}: ${card}`);
  await shoot(page, frame, "codermcp-change-preview-reply");
  await close();
});

test("first render of codermcp's change-preview under 500 ms (median of 10, a real dry run)", { skip }, async () => {
  const args = { prompt: "render timing", sandbox: "workspace-write", workingDirectory: DIR, dryRun: true };
  const result = await call("coder", args);
  const { mount, close } = await open();
  const times = [];
  for (let i = 0; i < 10; i++) {
    const { frame, start } = await mount("change-preview", "coder", args, result);
    times.push((await frame.evaluate(() => window.__firstRenderAt)) - start);
  }
  times.sort((a, b) => a - b);
  const medians = { "change-preview": Math.round(((times[4] + times[5]) / 2) * 10) / 10 };
  writeFileSync(join(artifacts, "first-render-codermcp.json"), JSON.stringify(medians, null, 2) + "\n");
  console.log("codermcp first render, median of 10 (ms):", JSON.stringify(medians));
  assert.ok(medians["change-preview"] < 500, `${medians["change-preview"]} ms`);
  await close();
});
