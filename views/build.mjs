// views/build.mjs — builds each view of views.json into one self-contained
// HTML file (script and styles inlined, nothing fetched) at its "out" path.
//
//   node views/build.mjs           build every view
//   node views/build.mjs --check   rebuild in memory; exit 1 naming every built file that differs
//
// The first comment of each file records the sha256 of the sources (src/,
// build.mjs, views.json, package-lock.json) and of the file's own content
// without that line, so a Go test (shared/apps) finds a stale or hand-edited
// file without Node. Dependencies come from scripts/install/views.sh's cache
// (VIEWS_NODE_MODULES overrides it).
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync, readdirSync, statSync, existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { homedir } from "node:os";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = dirname(here);
const MAX = 400 * 1024;

export function nodeModules() {
  if (process.env.VIEWS_NODE_MODULES) return process.env.VIEWS_NODE_MODULES;
  const cache = process.env.MCPFLEET_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "mcpfleet");
  for (const d of [join(cache, "views", "node_modules"), join(here, "node_modules")]) if (existsSync(join(d, "esbuild"))) return d;
  throw new Error("views: npm packages not installed; run scripts/install/views.sh");
}
export const requireDep = (name) => createRequire(join(nodeModules(), "x.js"))(name);

function files(dir) {
  return readdirSync(dir)
    .sort()
    .flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]));
}

// sourcesHash must stay equal to shared/apps' Go computation.
export function sourcesHash() {
  const h = createHash("sha256");
  const list = [...files(join(here, "src")), join(here, "build.mjs"), join(here, "views.json"), join(here, "package-lock.json")]
    .map((f) => relative(here, f).split("\\").join("/"))
    .sort();
  for (const f of list) h.update(f + "\0").update(readFileSync(join(here, f))).update("\0");
  return h.digest("hex");
}

export async function buildView(esbuild, name, title, srcHash) {
  const dir = join(here, "src", name);
  const js = await esbuild.build({
    entryPoints: [join(dir, "main.js")],
    bundle: true,
    format: "iife",
    minify: true,
    write: false,
    target: "es2022",
    legalComments: "none",
    charset: "utf8",
  });
  const css = await esbuild.transform(readFileSync(join(here, "src/lib/base.css"), "utf8") + "\n" + readFileSync(join(dir, "style.css"), "utf8"), {
    loader: "css",
    minify: true,
  });
  const script = js.outputFiles[0].text.trim().replace(/<\/(script)/gi, "<\\/$1");
  const body =
    `<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${title}</title><style>${css.code.trim()}</style></head>` +
    `<body><main id="app" aria-live="polite" aria-busy="true"><p class="muted">Waiting for the tool result…</p></main>` +
    `<script>${script}</script></body></html>\n`;
  const out = createHash("sha256").update(body).digest("hex");
  return `<!doctype html>\n<!-- mcpfleet view ${name}: built by views/build.mjs from views/src; do not edit. sources=${srcHash} output=${out} -->\n` + body;
}

export async function buildAll() {
  const esbuild = requireDep("esbuild");
  const { views } = JSON.parse(readFileSync(join(here, "views.json"), "utf8"));
  const srcHash = sourcesHash();
  const out = [];
  for (const [name, v] of Object.entries(views)) out.push({ name, path: join(repo, v.out), html: await buildView(esbuild, name, v.title, srcHash) });
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes("--check");
  const built = await buildAll();
  let bad = 0;
  for (const b of built) {
    const size = Buffer.byteLength(b.html);
    if (size > MAX) {
      console.error(`views: ${b.name} is ${size} bytes, over the ${MAX}-byte budget`);
      bad++;
    }
    const rel = relative(repo, b.path);
    if (check) {
      const cur = existsSync(b.path) ? readFileSync(b.path, "utf8") : "";
      if (cur !== b.html) {
        console.error(`views: ${rel} is stale against views/src: run node views/build.mjs and commit it`);
        bad++;
      }
    } else {
      mkdirSync(dirname(b.path), { recursive: true });
      writeFileSync(b.path, b.html);
      console.log(`${rel}\t${size} bytes`);
    }
  }
  process.exit(bad ? 1 : 0);
}
