// Builds the extension with esbuild, after generating the wire types and validators from
// docs/protocol.schema.json (scripts/gen-protocol.mjs):
//   dist/extension.js  the bundle VS Code loads (vscode stays external)
//   out/*.js           every module of src/ (and src/generated/) transpiled on its own, for the
//                      node:test suites
// Flags: --production (minify, no source map), --watch.
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { generate } from "./gen-protocol.mjs";

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

await generate();
const sources = (dir) =>
  readdirSync(join(root, dir)).filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts")).map((f) => join(root, dir, f));

const modules = {
  entryPoints: [...sources("src"), ...sources("src/generated")],
  outbase: join(root, "src"),
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
  mkdirSync(join(root, "out", "generated"), { recursive: true });
  copyFileSync(join(root, "src", "generated", "validators.js"), join(root, "out", "generated", "validators.js"));
  console.log(`esbuild: built dist/extension.js and out/ in ${Date.now() - started} ms${production ? " (production)" : ""}`);
}
