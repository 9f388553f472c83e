// Drives the explorer in headless Chromium: log in, search, select a node, recall, screenshot.
// Usage: POLYG_API_KEY=... node e2e/explorer.mjs <base-url> <screenshot.png> [question] [search]
// Prints one JSON object with what the page showed.
import { chromium } from "playwright-core";

const [base, screenshot, question = "Why did the auth service fail?", search = "auth service"] =
  process.argv.slice(2);
const key = process.env.POLYG_API_KEY || "";
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
});
const errors = [];
const result = { errors };
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.setDefaultTimeout(30000);
  await page.goto(`${base}/ui`);
  if (await page.locator('input[name="key"]').count()) {
    result.loginForm = true;
    await page.fill('input[name="key"]', key);
    await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
  }
  await page.waitForSelector("body[data-ready=true]");
  result.render = await page.evaluate(() => window.__polygRender);
  result.url = page.url();

  await page.fill("#search", search);
  const hit = page.locator(".search-hit").first();
  await hit.waitFor();
  result.searchHits = await page.locator(".search-hit .hit-name").allTextContents();
  await hit.click();
  await page.waitForSelector("#node-name");
  result.selected = await page.textContent("#node-name");
  result.neighbours = await page.locator(".neighbour").count();

  await page.fill("#recall-question", question);
  await page.click("#recall-form button[type=submit]");
  await page.waitForSelector("#recall-answer", { timeout: 90000 });
  result.answer = await page.textContent("#recall-answer");
  result.chain = await page.$$eval(".chain-step", (steps) =>
    steps.map((s) => ({
      cause: s.querySelector(".cause").textContent,
      effect: s.querySelector(".effect").textContent,
      confidence: s.querySelector(".conf").textContent,
    })),
  );
  result.highlighted = Number(await page.getAttribute("body", "data-highlighted"));
  result.timelineEvents = await page.locator(".timeline-event").count();
  result.timelineFacts = await page.locator(".timeline-fact").count();
  await page.waitForTimeout(400); // let the camera animation finish before the picture
  if (screenshot) await page.screenshot({ path: screenshot });
} catch (err) {
  result.failure = String(err);
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
