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
import { skipFor, startHost, connectServer, serverViews, shoot, firstRender } from "./harness.mjs";

const mcpURL = process.env.STREAMMCP_URL;
const CLUSTER = process.env.STREAMMCP_CLUSTER || "default";
const skip = skipFor({ urlVar: "STREAMMCP_URL", run: "go test ./streammcp -run TestViewsInBrowser" });

let host, mcp;

before(async () => {
  if (skip) return;
  mcp = await connectServer(mcpURL);
  const html = await serverViews(mcp, "streammcp", ["consumer-lag", "cluster-health", "change-preview"]);
  host = await startHost((view) => html.get(view));
});

after(async () => {
  await host?.close();
  await mcp?.close();
});

// call is a real tools/call to streammcp.
const call = (name, args) => mcp.callTool({ name, arguments: args });

// open is a host page whose view's tools/calls go through the real MCP client.
const open = ({ width = 420 } = {}) => host.open({ width, answer: (p) => call(p.name, p.arguments) });

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
  for (const [view, [tool, args]] of Object.entries(inputs)) inputs[view].push(await call(tool, args));
  const { mount, close } = await open();
  await firstRender(mount, inputs, "first-render-streammcp.json");
  await close();
});
