// Opens the explorer in headless Chromium and reports what it first shows: which graph (or
// the chooser), and every label drawn at the default zoom and after zooming in, with the
// pixels of the label layers, then the same once the most connected node is selected, so a
// test can check that no two labels overlap.
// Usage: POLYG_API_KEY=... node e2e/opening.mjs <base-url> <screenshot.png> [choose]
// With `choose`, a graph chooser is answered with its first graph before measuring.
// Prints one JSON object.
import { chromium } from "playwright-core";

const [base, screenshot, choose] = process.argv.slice(2);
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

// Runs in the page: the placed label boxes, how many painted pixels of the label canvas
// lie in each box and outside all of them, and the paint left on sigma's edge-label canvas
// (the placer draws every label on the label canvas).
function measureLabels() {
  const placed = window.__polygLabels();
  const painted = (canvas) => canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  const canvas = document.querySelector("canvas.sigma-labels");
  const ratio = canvas.width / canvas.clientWidth;
  const data = painted(canvas);
  const all = [...placed.nodes, ...placed.edges];
  const boxes = all.map((b) => ({
    x0: Math.floor(b.x * ratio),
    y0: Math.floor(b.y * ratio),
    x1: Math.ceil((b.x + b.w) * ratio),
    y1: Math.ceil((b.y + b.h) * ratio),
  }));
  const inBox = boxes.map(() => 0);
  let outside = 0;
  for (let y = 0; y < canvas.height; y++) {
    for (let x = 0; x < canvas.width; x++) {
      if (data[(y * canvas.width + x) * 4 + 3] === 0) continue;
      let hit = false;
      boxes.forEach((b, i) => {
        if (x >= b.x0 && x < b.x1 && y >= b.y0 && y < b.y1) {
          inBox[i]++;
          hit = true;
        }
      });
      if (!hit) outside++;
    }
  }
  const edgeLayer = painted(document.querySelector("canvas.sigma-edgeLabels"));
  let stray = 0;
  for (let i = 3; i < edgeLayer.length; i += 4) if (edgeLayer[i] !== 0) stray++;
  return { ...placed, pixels: { outside, inBox, edgeLayer: stray } };
}

const errors = [];
const result = { errors };
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.setDefaultTimeout(30000);
  await page.goto(`${base}/ui`);
  if (await page.locator('input[name="key"]').count()) {
    await page.fill('input[name="key"]', key);
    await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
  }
  await page.waitForSelector("body[data-ready=true], body[data-chooser=true]");
  result.chooser = await page.$$eval(".graph-choice", (bs) => bs.map((b) => b.dataset.graph));
  if (result.chooser.length && choose) {
    await page.click(".graph-choice");
    await page.waitForSelector("body[data-ready=true]");
  }
  result.selected = await page.$eval("#graph-select", (s) => s.value);
  result.hash = await page.evaluate(() => window.location.hash);
  if (await page.evaluate(() => document.body.dataset.ready === "true")) {
    result.render = await page.evaluate(() => window.__polygRender);
    result.note = await page.$eval("#graph-note", (n) => n.textContent).catch(() => null);
    await page.waitForTimeout(300);
    result.labels = await page.evaluate(measureLabels);
    if (screenshot) await page.screenshot({ path: screenshot });
    // Zoom in twice at the centre of the graph, let the camera settle, measure again.
    const box = await page.locator("#graph").boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    for (let i = 0; i < 2; i++) {
      await page.mouse.wheel(0, -240);
      await page.waitForTimeout(400);
    }
    await page.mouse.move(box.x + box.width / 2, box.y - 20); // off the graph: no hover box
    await page.waitForTimeout(400);
    result.zoomed = await page.evaluate(measureLabels);
    // Select the most connected named node that search finds (entities, causal nodes,
    // concepts) through the search box: it and its neighbours are named first.
    const hub = result.labels.nodes.find((b) => b.layer !== "temporal" && !b.text.endsWith("…"));
    await page.fill("#search", hub.text);
    const hit = page.locator(`.search-hit[data-id="${hub.id}"]`);
    await hit.waitFor();
    await hit.click();
    await page.waitForSelector("#node-name");
    await page.waitForTimeout(600); // the camera moves to the node
    result.selection = {
      id: hub.id,
      neighbours: await page.$$eval(".neighbour", (ns) => ns.map((n) => n.dataset.id)),
      labels: await page.evaluate(measureLabels),
    };
    // Hovering a node makes sigma redraw the edge labels alone: they are placed again.
    const target = result.selection.labels.nodes.find((b) => b.id !== hub.id) ?? hub;
    await page.mouse.move(box.x + target.node.x, box.y + target.node.y);
    await page.waitForTimeout(400);
    result.hovered = {
      id: target.id,
      cursor: await page.$eval("#graph", (g) => g.style.cursor),
      labels: await page.evaluate(measureLabels),
    };
  }
} catch (err) {
  result.failure = String(err);
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
