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
import { skipFor, startHost, connectServer, serverViews, shoot, firstRender } from "./harness.mjs";

const mcpURL = process.env.CODERMCP_URL;
const DIR = process.env.CODERMCP_DIR;
const run = "go test ./codermcp -run TestViewsInBrowser";
const skip = skipFor({ urlVar: "CODERMCP_URL", run }) || (!DIR && `CODERMCP_DIR is not set: run ${run}, which starts the server`);

let host, mcp;

before(async () => {
  if (skip) return;
  mcp = await connectServer(mcpURL);
  const html = await serverViews(mcp, "codermcp", ["change-preview"]);
  host = await startHost((view) => html.get(view));
});

after(async () => {
  await host?.close();
  await mcp?.close();
});

// call is a real tools/call to codermcp.
const call = (name, args) => mcp.callTool({ name, arguments: args });

// open is a host page whose view's tools/calls go through the real MCP client.
const open = ({ width = 420 } = {}) => host.open({ width, answer: (p) => call(p.name, p.arguments) });

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
  const inputs = { "change-preview": ["coder", args, await call("coder", args)] };
  const { mount, close } = await open();
  await firstRender(mount, inputs, "first-render-codermcp.json");
  await close();
});
