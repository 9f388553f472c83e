// Bundles src/ into one JS and one CSS file inside the polyg-server package.
// Usage: npm ci && npm run build   (or scripts/build_ui.sh from the repository root);
// `node build.mjs DIR` writes the bundle to DIR instead (the tests compare it with the
// committed one).
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { copyFile, mkdir, stat } from "node:fs/promises";

const here = path.dirname(fileURLToPath(import.meta.url));
const outdir = process.argv[2] ?? path.join(here, "..", "src", "polyg_server", "ui", "static");
await mkdir(outdir, { recursive: true });
await build({
  entryPoints: [path.join(here, "src", "main.js")],
  outfile: path.join(outdir, "app.js"),
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2020"],
  legalComments: "eof",
  logLevel: "warning",
});
await copyFile(path.join(here, "src", "app.css"), path.join(outdir, "app.css"));
for (const name of ["app.js", "app.css"]) {
  const { size } = await stat(path.join(outdir, name));
  console.log(`${name}: ${(size / 1024).toFixed(1)} KiB`);
}
