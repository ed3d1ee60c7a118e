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
import { skipFor, startHost, connectServer, serverViews, shoot, firstRender, WAIT } from "./harness.mjs";

const mcpURL = process.env.SQLMCP_URL;
const PAGING_TAG = process.env.SQLMCP_PAGING_TAG || "views-paging";
const skip = skipFor({ urlVar: "SQLMCP_URL", run: "go test ./sqlmcp -run TestViewsInBrowser" });

let host, mcp;

before(async () => {
  if (skip) return;
  mcp = await connectServer(mcpURL);
  const html = await serverViews(mcp, "sqlmcp", ["query-result", "change-preview"]);
  host = await startHost((view) => html.get(view));
});

after(async () => {
  await host?.close();
  await mcp?.close();
});

// call is a real tools/call to sqlmcp.
const call = (name, args) => mcp.callTool({ name, arguments: args });

// open is a host page whose view's tools/calls (fetch more) go through the
// real MCP client.
const open = ({ width = 420 } = {}) => host.open({ width, answer: (p) => call(p.name, p.arguments) });

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
  const inputs = { "query-result": ["execute_query", args, await call("execute_query", args)] };
  const { mount, close } = await open({ width: 560 });
  await firstRender(mount, inputs, "first-render-sqlmcp.json");
  await close();
});
