// h builds an element: h("td.num", {title: "x"}, child, "text").
export function h(spec, attrs, ...children) {
  const [tag, ...classes] = spec.split(".");
  const el = document.createElement(tag || "div");
  if (classes.length) el.className = classes.join(" ");
  if (attrs && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export const svg = (tag, attrs, ...children) => {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v != null) el.setAttribute(k, String(v));
  for (const c of children) if (c != null) el.append(c);
  return el;
};

export const fmt = (n) => (typeof n === "number" ? n.toLocaleString("en-US") : n == null ? "—" : String(n));

// render replaces the view's content, keeping keyboard focus on the control
// that had it (found again by its aria-label, or its text).
export function render(root, ...children) {
  const a = document.activeElement;
  const key = a && a !== document.body && root.contains(a) ? [a.tagName, a.getAttribute("aria-label") || a.textContent] : null;
  root.replaceChildren(...children.flat().filter((c) => c != null && c !== false));
  if (key) {
    const again = [...root.querySelectorAll(key[0])].find((e) => (e.getAttribute("aria-label") || e.textContent) === key[1]);
    if (again) again.focus();
  }
  root.setAttribute("aria-busy", "false");
  document.documentElement.dataset.rendered = "1";
  // When data was first on screen (the test host's first-render figure).
  if (!window.__firstRenderAt) window.__firstRenderAt = performance.timeOrigin + performance.now();
}

export function badge(status) {
  const s = String(status || "unknown").toLowerCase();
  const kind = /critical|down|offline|error|fail|destructive|maint/.test(s)
    ? "danger"
    : /warning|drain|nolb|stopping|change|high/.test(s)
      ? "warning"
      : /healthy|up|ok|online|read|ready|running/.test(s)
        ? "success"
        : "neutral";
  return h("span.badge." + kind, status == null || status === "" ? "unknown" : String(status));
}

// sparkline draws successive values as a small line chart.
export function sparkline(values, { width = 96, height = 24, label = "" } = {}) {
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  const pts = values.map((v, i) => `${(i * step).toFixed(1)},${(height - 2 - (v / max) * (height - 4)).toFixed(1)}`).join(" ");
  return svg(
    "svg",
    { class: "spark", width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label },
    values.length > 1 ? svg("polyline", { points: pts, fill: "none", stroke: "currentColor", "stroke-width": 1.5 }) : svg("circle", { cx: 2, cy: pts.split(",")[1], r: 2, fill: "currentColor" }),
  );
}

export function messageView(title, text, kind = "neutral") {
  return h("section.message." + kind, { role: kind === "danger" ? "alert" : "status" }, h("strong", title), text ? h("p", text) : null);
}
