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
import net from "node:net";
import { skipFor, startHost, connectServer, serverViews, shoot, firstRender, previewInstances } from "./harness.mjs";

const mcpURL = process.env.PROXYMCP_URL;
const sockets = Object.fromEntries((process.env.PROXYMCP_SOCKETS || "").split(",").filter(Boolean).map((kv) => kv.split("=")));
const skip = skipFor({ urlVar: "PROXYMCP_URL", run: "go test ./proxymcp -run TestViewsInBrowser (it starts two HAProxy)" });

let host, mcp;
// The person behind the client's elicitation: what they answer, and what
// they were shown.
let answer = "decline";
const asked = [];

before(async () => {
  if (skip) return;
  mcp = await connectServer(mcpURL, {
    onElicit: async (req) => {
      asked.push(req.params.message);
      return answer === "accept" ? { action: "accept", content: {} } : { action: answer };
    },
  });
  const html = await serverViews(mcp, "proxymcp", ["backend-pool", "change-preview"]);
  host = await startHost((view) => html.get(view));
});

after(async () => {
  await host?.close();
  await mcp?.close();
});

// call is a real tools/call to proxymcp.
const call = (name, args) => mcp.callTool({ name, arguments: args });

// open is a host page whose view's tools/calls go through the real MCP client.
const open = ({ width = 560 } = {}) => host.open({ width, answer: (p) => call(p.name, p.arguments) });

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

test("change-preview against proxymcp: a real dry run of a fleet drain, per instance, before → after", { skip }, async () => {
  const args = { backend: "be_app", server: "app1", state: "drain", dryRun: true };
  const res = await call("set_server_state", args);
  assert.ok(!res.isError, JSON.stringify(res));
  const haproxy = { lb1: await serversState("lb1"), lb2: await serversState("lb2") };
  const { page, mount, close } = await open();
  for (const theme of ["light", "dark"]) {
    const { frame } = await mount("change-preview", "set_server_state", args, res, { theme });
    const card = await frame.$eval("article.card", (e) => e.innerText);
    assert.match(card, /Dry run — nothing was changed/);
    assert.doesNotMatch(card, /[{}]/, "no JSON in the card");
    const got = await previewInstances(frame);
    assert.deepEqual(
      got.map((i) => i.instance),
      ["lb1", "lb2"],
    );
    for (const i of got) {
      const srv = haproxy[i.instance]["be_app/app1"];
      assert.deepEqual(i.sets, ["admin_state"], `${i.instance}: the drain sets the admin state only`);
      assert.equal(i.rows.admin_state, "ready → drain", `${i.instance}: admin state before → after`);
      assert.equal(i.rows.weight, String(Number(srv.srv_uweight)), `${i.instance}: the weight HAProxy has, unchanged`);
      assert.equal(i.rows.server, "app1");
      assert.equal(i.target, `${i.instance} (unix://${sockets[i.instance]})`, `${i.instance}: its own HAProxy`);
      assert.equal(i.rows.status, "UP");
      // What this instance is sent: its own of the preview's commands (each
      // has its own stats-page fallback), or all when they are the same.
      const cmds = res.structuredContent.commands;
      const own = cmds.filter((c) => c.startsWith(i.instance + ": ")).map((c) => c.slice(i.instance.length + 2));
      assert.deepEqual(i.sends, own.length ? own : cmds, `${i.instance}: its commands`);
      assert.equal(i.sends[0], "set server be_app/app1 state drain", `${i.instance} is sent the drain`);
    }
    assert.match(await frame.$eval("section.after", (e) => e.innerText), /After\s+the server gets no new sessions/i);
    await shoot(page, frame, theme === "light" ? "proxymcp-change-preview" : `proxymcp-change-preview-${theme}`);
  }
  for (const lb of ["lb1", "lb2"]) assert.ok(!drained((await serversState(lb))["be_app/app1"]), `${lb}: the dry run drained nothing`);
  await close();
});

test("change-preview against proxymcp: a fleet weight change where the instances differ, each instance's own before", { skip }, async () => {
  const args = { backend: "be_app", server: "app2", weight: 40, dryRun: true };
  const res = await call("set_server_weight", args);
  assert.ok(!res.isError, JSON.stringify(res));
  const { page, mount, close } = await open();
  const { frame } = await mount("change-preview", "set_server_weight", args, res);
  const got = await previewInstances(frame);
  // app2 weighs 50 on lb1 and 30 on lb2 (set behind proxymcp's back).
  assert.deepEqual(
    got.map((i) => [i.instance, i.sets, i.rows.weight]),
    [
      ["lb1", ["weight"], "50 → 40"],
      ["lb2", ["weight"], "30 → 40"],
    ],
  );
  for (const i of got) assert.equal(i.rows.admin_state, "ready", `${i.instance}: the admin state is shown, unchanged`);
  await shoot(page, frame, "proxymcp-change-preview-weight");
  const now = { lb1: await serversState("lb1"), lb2: await serversState("lb2") };
  assert.deepEqual([now.lb1["be_app/app2"].srv_uweight, now.lb2["be_app/app2"].srv_uweight], ["50", "30"], "the dry run changed no weight");
  await close();
});

test("first render of proxymcp's views under 500 ms (median of 10, real results)", { skip }, async () => {
  const inputs = {
    "backend-pool": ["list_servers", {}],
    "change-preview": ["set_server_state", { backend: "be_app", server: "app1", state: "drain", dryRun: true }],
  };
  for (const [view, [tool, args]] of Object.entries(inputs)) inputs[view].push(await call(tool, args));
  const { mount, close } = await open();
  await firstRender(mount, inputs, "first-render-proxymcp.json");
  await close();
});
