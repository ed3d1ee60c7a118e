// task.mjs — runs one MCP task end to end with the official TypeScript SDK
// client (@modelcontextprotocol/sdk, installed by scripts/install/ts-sdk.sh;
// run with NODE_PATH=<that dir>/node_modules), so a second client
// implementation checks our servers' tasks.
//
//   node task.mjs <server /mcp URL> <tool> '<arguments JSON>'
//
// It lists the tools (the SDK learns which ones take tasks from
// execution.taskSupport), calls the tool with task augmentation through
// client.experimental.tasks.callToolStream, polls with tasks/get while the
// stream runs, and prints one JSON object on stdout: the tool's declared
// taskSupport, the stream's messages (taskCreated, taskStatus, result or
// error) and the statusMessages seen while polling. Exit status 0 when a
// result arrived, 1 otherwise. Diagnostics go to stderr.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// ES modules ignore NODE_PATH: load the SDK from the install directory.
const sdkDir = process.env.MCP_TS_SDK;
if (!sdkDir) {
  console.error('set MCP_TS_SDK to the directory scripts/install/ts-sdk.sh prints');
  process.exit(2);
}
const sdk = (p) => import(pathToFileURL(join(sdkDir, 'node_modules/@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');

const [url, tool, argsJSON = '{}'] = process.argv.slice(2);
if (!url || !tool) {
  console.error('usage: node task.mjs <server /mcp URL> <tool> [arguments JSON]');
  process.exit(2);
}

const client = new Client({ name: 'mcpfleet-ts-task', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
const out = { protocolVersion: transport.protocolVersion ?? null, messages: [], polled: [] };
try {
  const { tools } = await client.listTools();
  out.taskSupport = tools.find((t) => t.name === tool)?.execution?.taskSupport ?? null;
  let taskId = null;
  let done = false;
  const poller = (async () => {
    while (!done) {
      if (taskId) {
        const t = await client.experimental.tasks.getTask(taskId);
        out.polled.push({ status: t.status, statusMessage: t.statusMessage ?? null });
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  const stream = client.experimental.tasks.callToolStream(
    { name: tool, arguments: JSON.parse(argsJSON) },
    undefined,
    { task: { ttl: 60000 } },
  );
  for await (const m of stream) {
    if (m.type === 'taskCreated') taskId = m.task.taskId;
    out.messages.push(m.type === 'error' ? { type: 'error', error: String(m.error?.message ?? m.error) } : m);
  }
  done = true;
  await poller;
  out.listed = (await client.experimental.tasks.listTasks()).tasks.map((t) => ({ taskId: t.taskId, status: t.status }));
} finally {
  await client.close();
}
console.log(JSON.stringify(out));
process.exit(out.messages.some((m) => m.type === 'result') ? 0 : 1);
