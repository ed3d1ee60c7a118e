// views/test/harness.mjs — the Node side every browser test of the views
// shares (views.test.mjs on committed files; <server>.test.mjs against a
// real server): when to skip, the test host page (host.js, the ext-apps
// SDK's AppBridge, bundled here) and the views served from another origin
// with the extension's restrictive CSP, Debian's chromium driven by
// playwright-core, a page whose recorded tools/calls are answered by the
// test, screenshots, the first-render figure, and the real MCP client (the
// official TypeScript SDK declaring the MCP Apps extension).
//
//   import { skipFor, startHost, connectServer, serverViews, shoot, firstRender } from "./harness.mjs";
//
// With CI=true a missing chromium fails (throws at import of the test),
// never skips.
import assert from "node:assert/strict";
import http from "node:http";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { requireDep, nodeModules } from "../build.mjs";

const here = dirname(fileURLToPath(import.meta.url));
export const artifacts = process.env.VIEWS_ARTIFACTS || join(here, "artifacts");
export const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
export const EXT = "io.modelcontextprotocol/ui";
export const MIME = "text/html;profile=mcp-app";
// Generous bounds: the machine runs many tests at once (load 15-30).
export const WAIT = 60000;

// The extension's restrictive default when _meta.ui.csp names no domain
// (what every view declares).
export const CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'";

// skipFor returns why the tests skip (false: they run). urlVar names the
// environment variable with the server's MCP URL (its Go test sets it; run
// says how); without urlVar only chromium is needed. A missing chromium
// throws with CI=true.
export function skipFor({ urlVar, run } = {}) {
  if (urlVar && !process.env[urlVar]) return `${urlVar} is not set: run ${run}, which starts the server`;
  if (!existsSync(chromiumPath)) {
    if (process.env.CI === "true") throw new Error(`chromium not found at ${chromiumPath}: run scripts/install/views.sh (Debian's chromium)`);
    return `chromium not found at ${chromiumPath} (scripts/install/views.sh installs it)`;
  }
  return false;
}

// startHost serves the test host (127.0.0.1) and the views (localhost: a
// second origin, as a host's sandbox is) with the extension's CSP, and
// starts chromium. viewHTML(name) is the HTML of view name (undefined: 404).
export async function startHost(viewHTML) {
  mkdirSync(artifacts, { recursive: true });
  const esbuild = requireDep("esbuild");
  const out = await esbuild.build({ entryPoints: [join(here, "host.js")], bundle: true, format: "iife", write: false, nodePaths: [nodeModules()], logLevel: "error" });
  const hostJS = out.outputFiles[0].text;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    const view = url.pathname.startsWith("/view/") ? viewHTML(url.pathname.slice(6)) : undefined;
    if (url.pathname === "/favicon.ico") res.writeHead(204).end();
    else if (url.pathname === "/host.html")
      res.writeHead(200, { "content-type": "text/html" }).end('<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0;padding:8px"><script src="/host.js"></script></body></html>');
    else if (url.pathname === "/host.js") res.writeHead(200, { "content-type": "text/javascript" }).end(hostJS);
    else if (view != null) res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-security-policy": CSP }).end(view);
    else res.writeHead(404).end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const port = server.address().port;
  const { chromium } = requireDep("playwright-core");
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const hostOrigin = `http://127.0.0.1:${port}`;
  const viewOrigin = `http://localhost:${port}`;

  // open gives a host page whose view's tools/calls are recorded in calls
  // and answered by answer(params). close fails when the view fetched
  // anything, broke a CSP rule or logged an error.
  async function open({ answer, width = 380 } = {}) {
    const ctx = await browser.newContext({ viewport: { width: width + 16, height: 900 }, deviceScaleFactor: 1 });
    ctx.setDefaultTimeout(WAIT);
    const page = await ctx.newPage();
    const calls = [];
    const problems = [];
    await page.exposeFunction("hostCallTool", async (params) => {
      calls.push(params);
      return answer(params);
    });
    page.on("request", (r) => {
      const u = r.url();
      if (!u.startsWith(hostOrigin) && !u.startsWith(viewOrigin + "/view/") && !u.startsWith("data:") && !u.startsWith("blob:")) problems.push("request to " + u);
    });
    page.on("console", (m) => {
      if (m.type() === "error" || /Content Security Policy/.test(m.text())) problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push("page error: " + e.message));
    await page.goto(`${hostOrigin}/host.html`);
    // mount loads view into the host, sends it the tool's input and result,
    // and waits for its first render; start is when the host began.
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

  return {
    open,
    async close() {
      await browser.close();
      server.close();
    },
  };
}

// shoot writes artifacts/<name>.png of the host page, once the host applied
// the view's size-changed (the iframe is of another origin: its height is
// measured inside it).
export async function shoot(page, frame, name) {
  const height = await frame.evaluate(() => document.documentElement.scrollHeight);
  await page.waitForFunction((h) => Math.abs(document.querySelector("iframe").getBoundingClientRect().height - h) <= 2, height);
  await page.setViewportSize({ width: page.viewportSize().width, height: Math.min(4000, height + 16) });
  const path = join(artifacts, name + ".png");
  await page.screenshot({ path });
  return path;
}

// previewInstances reads the per-instance sections of a fleet's preview
// (change-preview, or any view's preview card) as a person reads them: the
// instance, its target, what it is sent, each row of its state (field → the
// text of its value, "ready → drain" for a field the change sets), the
// fields the change sets, and the error of an instance that could not be read.
export const previewInstances = (frame) =>
  frame.$$eval("section.instance", (els) =>
    els.map((e) => ({
      instance: e.querySelector("h3").innerText,
      target: e.querySelector("dl.facts dd").innerText,
      sends: [...e.querySelectorAll("ol.commands li")].map((li) => li.innerText),
      rows: Object.fromEntries([...e.querySelectorAll("table.kv > tbody > tr")].map((r) => [r.querySelector("th").innerText, r.querySelector("td").innerText.replace(/\s+/g, " ").trim()])),
      sets: [...e.querySelectorAll("table.kv > tbody > tr.sets")].map((r) => r.querySelector("th").innerText),
      error: e.querySelector("[role=alert]")?.innerText ?? null,
    })),
  );

// firstRender mounts each view of inputs ({view: [tool, args, result]}) ten
// times, writes the medians of its first render (ms) to artifacts/file and
// fails when one is 500 ms or more.
export async function firstRender(mount, inputs, file) {
  const medians = {};
  for (const [view, [tool, args, result]] of Object.entries(inputs)) {
    const times = [];
    for (let i = 0; i < 10; i++) {
      const { frame, start } = await mount(view, tool, args, result);
      times.push((await frame.evaluate(() => window.__firstRenderAt)) - start);
    }
    times.sort((a, b) => a - b);
    medians[view] = Math.round(((times[4] + times[5]) / 2) * 10) / 10;
  }
  writeFileSync(join(artifacts, file), JSON.stringify(medians, null, 2) + "\n");
  console.log(`${file}: first render, median of 10 (ms):`, JSON.stringify(medians));
  for (const [view, ms] of Object.entries(medians)) assert.ok(ms < 500, `${view}: ${ms} ms`);
  return medians;
}

// connectServer connects the official TypeScript MCP client, declaring the
// MCP Apps extension (and form elicitation, answered by onElicit, when
// given), to a server over streamable HTTP.
export async function connectServer(url, { onElicit } = {}) {
  const { Client, StreamableHTTPClientTransport } = await import(join(nodeModules(), "@modelcontextprotocol/client/dist/index.mjs"));
  const capabilities = { extensions: { [EXT]: { mimeTypes: [MIME] } } };
  if (onElicit) capabilities.elicitation = { form: {} };
  const mcp = new Client({ name: "mcpfleet-views-test-host", version: "1.0.0" }, { capabilities });
  if (onElicit) mcp.setRequestHandler("elicitation/create", onElicit);
  await mcp.connect(new StreamableHTTPClientTransport(new URL(url)));
  return mcp;
}

// serverViews reads ui://<server>/<view> of each view from the server, as
// a host does, checking it is one text/html;profile=mcp-app document.
export async function serverViews(mcp, server, views) {
  const html = new Map();
  for (const view of views) {
    const uri = `ui://${server}/${view}`;
    const res = await mcp.readResource({ uri });
    assert.equal(res.contents.length, 1, uri);
    assert.equal(res.contents[0].mimeType, MIME, uri);
    html.set(view, res.contents[0].text);
  }
  return html;
}
