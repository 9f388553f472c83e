// Drives the explorer in headless Chromium: log in, search, select a node, recall, screenshot;
// then the same page on a 390 px wide phone screen.
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
  await page.waitForTimeout(600); // let the camera animation finish before the picture
  // The answer's nodes: inside the graph's box after the camera moved, and named.
  result.recallView = await page.evaluate(() => window.__polygHighlight());
  if (screenshot) await page.screenshot({ path: screenshot });

  // A phone (390 px wide): the graph is drawn, with a real size, and the recall form works.
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  phone.on("pageerror", (e) => errors.push(`390px: ${e}`));
  phone.on("console", (m) => m.type() === "error" && errors.push(`390px: ${m.text()}`));
  phone.setDefaultTimeout(30000);
  await phone.goto(`${base}/ui`);
  if (await phone.locator('input[name="key"]').count()) {
    await phone.fill('input[name="key"]', key);
    await Promise.all([phone.waitForNavigation(), phone.click('button[type="submit"]')]);
  }
  await phone.waitForSelector("body[data-ready=true]");
  const box = await phone.locator("#graph").boundingBox();
  const canvas = await phone.locator("#graph canvas").first().boundingBox();
  result.phone = {
    render: await phone.evaluate(() => window.__polygRender),
    graphBox: box && { width: Math.round(box.width), height: Math.round(box.height) },
    canvasBox: canvas && { width: Math.round(canvas.width), height: Math.round(canvas.height) },
    labels: await phone.evaluate(() => window.__polygLabels().nodes.length),
    pageWidth: await phone.evaluate(() => document.documentElement.scrollWidth),
  };
  await phone.fill("#recall-question", question);
  await phone.click("#recall-form button[type=submit]");
  await phone.waitForSelector("#recall-answer", { timeout: 90000 });
  await phone.waitForTimeout(600);
  result.phone.recallView = await phone.evaluate(() => window.__polygHighlight());
  if (screenshot) await phone.screenshot({ path: screenshot.replace(/\.png$/, "-390.png"), fullPage: true });

  // Only the first 5 nodes loaded: the recall brings the rest of its answer into the picture.
  const paged = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  paged.on("pageerror", (e) => errors.push(`paged: ${e}`));
  paged.setDefaultTimeout(30000);
  await paged.goto(`${base}/ui?limit=5`);
  if (await paged.locator('input[name="key"]').count()) {
    await paged.fill('input[name="key"]', key);
    await Promise.all([paged.waitForNavigation(), paged.click('button[type="submit"]')]);
    await paged.goto(`${base}/ui?limit=5`);
  }
  await paged.waitForSelector("body[data-ready=true]");
  const before = await paged.evaluate(() => window.__polygRender.nodes);
  await paged.fill("#recall-question", question);
  await paged.click("#recall-form button[type=submit]");
  await paged.waitForSelector("#recall-answer", { timeout: 90000 });
  await paged.waitForTimeout(600);
  result.paged = {
    before,
    after: await paged.evaluate(() => Number(document.getElementById("status").textContent.split(" ")[0])),
    recallView: await paged.evaluate(() => window.__polygHighlight()),
  };
  if (screenshot) await paged.screenshot({ path: screenshot.replace(/\.png$/, "-paged.png") });
} catch (err) {
  result.failure = String(err);
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
