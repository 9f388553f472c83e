// Time to first render of N nodes in headless Chromium for sigma.js and cytoscape.js.
// Usage: node bench/render10k.mjs [nodes] [edges]   (needs /usr/bin/chromium)
import { build } from "esbuild";
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
const n = Number(process.argv[2] ?? 10000);
const m = Number(process.argv[3] ?? 15000);
const out = await build({ entryPoints: [path.join(here, "bench-page.js")], bundle: true, write: false, format: "iife", minify: true });
const js = out.outputFiles[0].contents;
const html = await readFile(path.join(here, "index.html"));
const server = createServer((req, res) => {
  if (req.url === "/bench.js") { res.setHeader("content-type", "text/javascript"); res.end(js); }
  else { res.setHeader("content-type", "text/html"); res.end(html); }
}).listen(0, "127.0.0.1");
await new Promise((r) => server.once("listening", r));
const url = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
});
try {
  for (const lib of ["sigma", "cytoscape", "cytoscape-webgl"]) {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(url);
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await page.evaluate(([l, a, b]) => window.runBench(l, a, b), [lib, n, m]));
    const med = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[1];
    console.log(JSON.stringify({ lib, nodes: n, edges: m, firstRenderMs: runs.map((r) => r.firstRenderMs), medianMs: med("firstRenderMs"), panZoomFps: med("panZoomFps"), webgl: runs[0].webgl, errors }));
    await page.close();
  }
} finally {
  await browser.close();
  server.close();
}
