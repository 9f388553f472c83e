// Opens the explorer page (no API key) and prints what window.__polygRender recorded:
// nodes and edges drawn, fetch time, render time (graph built + first frame), and the
// time since navigation. Usage: node bench/page.mjs <base-url> [limit] [runs]
import { chromium } from "playwright-core";

const [base, limit = "10000", runs = "3"] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
});
try {
  for (let i = 0; i < Number(runs); i++) {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${base}/ui?limit=${limit}`);
    await page.waitForSelector("body[data-ready=true]", { timeout: 120000 });
    const r = await page.evaluate(() => window.__polygRender);
    // Responsiveness after the first frame: how long a click on the page takes to be handled.
    const t0 = Date.now();
    await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => ok())));
    r.nextFrameMs = Date.now() - t0;
    console.log(JSON.stringify(r));
    await page.close();
  }
} finally {
  await browser.close();
}
