// The view's side of the MCP Apps protocol (io.modelcontextprotocol/ui,
// 2026-01-26), written directly on postMessage: the SDK's App class bundles
// to ~340 KB, this to ~2 KB. The host's AppBridge is the other end (tested in
// views/test with the official SDK).
const PROTOCOL = "2026-01-26";

export function connect({ name, onInput, onResult, onCancelled, onContext }) {
  let nextId = 1;
  const pending = new Map();
  let context = {};
  const post = (msg) => window.parent.postMessage({ jsonrpc: "2.0", ...msg }, "*");
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      post({ id, method, params });
    });
  const notify = (method, params) => post({ method, params });
  const applyContext = (partial) => {
    if (!partial) return;
    context = { ...context, ...partial };
    const root = document.documentElement;
    if (partial.theme === "light" || partial.theme === "dark") {
      root.dataset.theme = partial.theme;
      root.style.colorScheme = partial.theme;
    }
    const vars = partial.styles && partial.styles.variables;
    if (vars) for (const k of Object.keys(vars)) if (k.startsWith("--") && vars[k] != null) root.style.setProperty(k, vars[k]);
    onContext && onContext(context);
  };

  window.addEventListener("message", (ev) => {
    if (ev.source !== window.parent) return;
    const m = ev.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.method === undefined && m.id !== undefined) {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.error) p.reject(new Error(m.error.message || "request failed"));
      else p.resolve(m.result);
      return;
    }
    switch (m.method) {
      case "ui/notifications/tool-input":
        onInput && onInput((m.params && m.params.arguments) || {});
        break;
      case "ui/notifications/tool-result":
        onResult && onResult(m.params || {});
        break;
      case "ui/notifications/tool-cancelled":
        onCancelled && onCancelled((m.params && m.params.reason) || "cancelled");
        break;
      case "ui/notifications/host-context-changed":
        applyContext(m.params);
        break;
      case "ui/resource-teardown":
      case "ping":
        post({ id: m.id, result: {} });
        break;
      default:
        if (m.id !== undefined) post({ id: m.id, error: { code: -32601, message: "method not found: " + m.method } });
    }
  });

  let host = {};
  const ready = request("ui/initialize", {
    appInfo: { name, version: "1" },
    appCapabilities: { availableDisplayModes: ["inline"] },
    protocolVersion: PROTOCOL,
  }).then((res) => {
    host = res || {};
    applyContext(host.hostContext);
    notify("ui/notifications/initialized", {});
    return host;
  });

  // Report the content's size so a host with a flexible height fits it.
  let last = "";
  const report = () => {
    const el = document.documentElement;
    const size = { width: Math.ceil(el.scrollWidth), height: Math.ceil(el.scrollHeight) };
    const key = size.width + "x" + size.height;
    if (key !== last) {
      last = key;
      notify("ui/notifications/size-changed", size);
    }
  };
  let queued = false;
  new ResizeObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      ready.then(report);
    });
  }).observe(document.body);

  return {
    ready,
    context: () => context,
    capabilities: () => host.hostCapabilities || {},
    toolName: (fallback) => (context.toolInfo && context.toolInfo.tool && context.toolInfo.tool.name) || fallback,
    // Every action of a view is a tools/call through the host, and so through
    // the server's tool pipeline (validation, dry run, approval, audit).
    callTool: (name, args) => request("tools/call", { name, arguments: args }),
    downloadFile: (params) => request("ui/download-file", params),
    log: (level, data) => notify("notifications/message", { level, data }),
  };
}

// dataOf returns a tool result's data: structuredContent, or the JSON of its
// first text block; error is the text of an isError result.
export function dataOf(result) {
  const text = ((result.content || []).find((c) => c && c.type === "text") || {}).text || "";
  if (result.isError) return { error: text || "the tool failed" };
  if (result.structuredContent && typeof result.structuredContent === "object") return { data: result.structuredContent, text };
  try {
    return { data: JSON.parse(text), text };
  } catch {
    return { data: null, text };
  }
}
