// Builds the extension with esbuild:
//   dist/extension.js  the bundle VS Code loads (vscode stays external)
//   out/*.js           every module of src/ transpiled on its own, for the node:test suites
// Flags: --production (minify, no source map), --watch.
import * as esbuild from "esbuild";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const production = process.argv.includes("--production");
const watch = process.argv.includes("--watch");

const bundle = {
  entryPoints: [join(root, "src/extension.ts")],
  outfile: join(root, "dist/extension.js"),
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node18",
  external: ["vscode"],
  minify: production,
  sourcemap: production ? false : "linked",
  sourcesContent: false,
  logLevel: "warning",
};

const modules = {
  entryPoints: readdirSync(join(root, "src"))
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(root, "src", f)),
  outdir: join(root, "out"),
  bundle: false,
  platform: "node",
  format: "cjs",
  target: "node18",
  sourcemap: "linked",
  logLevel: "warning",
};

if (watch) {
  const contexts = await Promise.all([esbuild.context(bundle), esbuild.context(modules)]);
  await Promise.all(contexts.map((c) => c.watch()));
  console.log("esbuild: watching src/");
} else {
  const started = Date.now();
  await Promise.all([esbuild.build(bundle), esbuild.build(modules)]);
  console.log(`esbuild: built dist/extension.js and out/ in ${Date.now() - started} ms${production ? " (production)" : ""}`);
}
