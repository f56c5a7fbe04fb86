// Builds the web client into the Python package (src/shard/daemon/web/static/), which is committed:
// `./shard daemon` never needs Node. Fixed names for the entry points (the page and the browser
// tests import them by path), content-hashed names for the chunks they share. Writes bundle.json:
// the SHA-256 of every source the bundle is made from (tests/daemon/web/test_bundle.py recomputes
// it, so a bundle older than its sources fails the suite) and of every file written.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, copyFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import * as esbuild from "esbuild";

const web = dirname(fileURLToPath(import.meta.url));
const out = join(web, "..", "src", "shard", "daemon", "web", "static");

// The inputs of the bundle, in the order the Python test hashes them: every file under src/ and
// public/, then these (paths relative to web/, "/"-separated, sorted).
const INPUTS = ["build.mjs", "index.html", "package-lock.json", "tsconfig.json"];
const TREES = ["src", "public"];

function walk(dir) {
  let found = [];
  if (!existsSync(dir)) return found;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found = found.concat(walk(path));
    else found.push(path);
  }
  return found;
}

export function sourcesHash() {
  const files = TREES.flatMap((t) => walk(join(web, t))).map((p) => relative(web, p).split("\\").join("/"));
  const hash = createHash("sha256");
  for (const name of [...files.sort(), ...INPUTS]) {
    hash.update(name + "\0");
    hash.update(readFileSync(join(web, name)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

async function build() {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  await esbuild.build({
    absWorkingDir: web,
    entryPoints: {
      // the page; and the modules the browser tests exercise one by one (tests/browser/test_modules.py)
      "js/main": "src/main.ts",
      "js/connection": "src/connection.ts",
      "js/controls": "src/controls.ts",
      "js/store": "src/store/index.ts",
      "js/words": "src/words.ts",
      "js/render/agents": "src/render/AgentList.tsx",
      "js/render/descriptors": "src/render/descriptors.ts",
      "js/render/conversation": "src/render/conversation.tsx",
      app: "src/app.css",
    },
    outdir: out,
    bundle: true,
    splitting: true,
    format: "esm",
    target: "es2022",
    minify: true,
    chunkNames: "js/chunk-[hash]",
    jsx: "automatic",
    jsxImportSource: "preact",
    legalComments: "eof",
    logLevel: "warning",
  });
  copyFileSync(join(web, "index.html"), join(out, "index.html"));
  for (const file of walk(join(web, "public"))) {
    const target = join(out, relative(join(web, "public"), file));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(file, target);
  }
  const files = {};
  let bytes = 0;
  let gzip = 0;
  for (const file of walk(out).sort()) {
    const body = readFileSync(file);
    files[relative(out, file).split("\\").join("/")] = createHash("sha256").update(body).digest("hex");
    bytes += body.length;
    gzip += gzipSync(body).length;
  }
  const manifest = { sources: sourcesHash(), bytes, gzip_bytes: gzip, files };
  writeFileSync(join(out, "bundle.json"), JSON.stringify(manifest, null, 2) + "\n");
  console.log(`web: ${Object.keys(files).length} files, ${(bytes / 1024).toFixed(1)} KiB (${(gzip / 1024).toFixed(1)} KiB gzipped) in ${relative(process.cwd(), out) || "."}`);
}

await build();
