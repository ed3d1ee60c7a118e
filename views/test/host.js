// The test host: the official ext-apps SDK's host side (AppBridge and its
// PostMessageTransport) driving one view in an iframe, as Claude, VS Code or
// Goose do. Tool calls the view makes go to window.hostCallTool, which the
// Node side of the test answers (today from golden results; after the wiring,
// from the real server through an MCP client).
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const THEMES = {
  light: {
    "--color-background-primary": "#ffffff",
    "--color-text-primary": "#1f1f1f",
    "--font-sans": "DejaVu Sans, sans-serif",
  },
  dark: {
    "--color-background-primary": "#1e1f22",
    "--color-background-secondary": "#2b2d31",
    "--color-text-primary": "#ececec",
    "--font-sans": "DejaVu Sans, sans-serif",
  },
};

window.__downloads = [];

window.mountView = async ({ url, toolName, args, result, theme = "light", width = 380 }) => {
  document.body.replaceChildren();
  document.body.style.background = theme === "dark" ? "#111" : "#eee";
  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts allow-same-origin");
  iframe.title = toolName + " view";
  iframe.style.cssText = `border:0;display:block;width:${width}px;height:200px;background:transparent`;
  document.body.append(iframe);
  const start = performance.timeOrigin + performance.now();
  const bridge = new AppBridge(
    null,
    { name: "mcpfleet-test-host", version: "1.0.0" },
    { serverTools: {}, logging: {}, downloadFile: {} },
    {
      hostContext: {
        theme,
        styles: { variables: THEMES[theme] },
        displayMode: "inline",
        availableDisplayModes: ["inline"],
        containerDimensions: { width, maxHeight: 4000 },
        platform: "web",
        toolInfo: { tool: { name: toolName, inputSchema: { type: "object" } } },
      },
    },
  );
  bridge.oncalltool = async (params) => window.hostCallTool(params);
  bridge.ondownloadfile = async (params) => {
    window.__downloads.push(params);
    return {};
  };
  bridge.onsizechange = ({ height }) => {
    if (height) iframe.style.height = height + "px";
  };
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: args || {} });
    await bridge.sendToolResult(result);
  };
  iframe.src = url;
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  window.__bridge = bridge;
  return start;
};
