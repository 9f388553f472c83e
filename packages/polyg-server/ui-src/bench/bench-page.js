// Renders a synthetic graph with one library and reports the time to first render.
import Graph from "graphology";
import Sigma from "sigma";
import cytoscape from "cytoscape";

const COLORS = ["#4c78a8", "#f58518", "#e45756", "#54a24b"];

function synthetic(n, m) {
  let seed = 42;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const nodes = [];
  for (let i = 0; i < n; i++) {
    nodes.push({ id: "n" + i, x: rand() * 1000, y: rand() * 1000, layer: i % 4 });
  }
  const edges = [];
  for (let j = 0; j < m; j++) {
    edges.push({ id: "e" + j, s: "n" + Math.floor(rand() * n), t: "n" + Math.floor(rand() * n) });
  }
  return { nodes, edges };
}

function nextFrame() {
  return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
}

async function runSigma(el, data) {
  const t0 = performance.now();
  const g = new Graph({ multi: true });
  for (const n of data.nodes) g.addNode(n.id, { x: n.x, y: n.y, size: 3, color: COLORS[n.layer], label: n.id });
  for (const e of data.edges) g.addEdgeWithKey(e.id, e.s, e.t, { size: 0.5, color: "#ccc" });
  const renderer = new Sigma(g, el, window.SIGMA_OPTS || { renderLabels: true, labelRenderedSizeThreshold: 8 });
  await nextFrame();
  return { first: performance.now() - t0, renderer };
}

async function runCy(el, data, webgl) {
  const t0 = performance.now();
  const elements = [];
  for (const n of data.nodes) elements.push({ data: { id: n.id, layer: n.layer }, position: { x: n.x, y: n.y } });
  for (const e of data.edges) elements.push({ data: { id: e.id, source: e.s, target: e.t } });
  const cy = cytoscape({
    container: el,
    elements,
    layout: { name: "preset" },
    renderer: webgl ? { name: "canvas", webgl: true } : { name: "canvas" },
    style: [
      { selector: "node", style: { width: 6, height: 6, "background-color": (n) => COLORS[n.data("layer")] } },
      { selector: "edge", style: { width: 0.5, "line-color": "#ccc" } },
    ],
  });
  await nextFrame();
  return { first: performance.now() - t0, renderer: cy };
}

async function frameRate(step, ms) {
  // Frames per second while the view is being panned/zoomed continuously.
  let frames = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    step(frames);
    await new Promise((r) => requestAnimationFrame(r));
    frames++;
  }
  return (frames * 1000) / (performance.now() - t0);
}

window.runBench = async (lib, n, m) => {
  const el = document.getElementById("g");
  el.innerHTML = "";
  const data = synthetic(n, m);
  let res;
  let fps;
  if (lib === "sigma") {
    res = await runSigma(el, data);
    const cam = res.renderer.getCamera();
    fps = await frameRate((i) => cam.setState({ x: 0.5 + 0.1 * Math.sin(i / 10), ratio: 1 + 0.5 * Math.sin(i / 20) }), 2000);
    res.renderer.kill();
  } else {
    res = await runCy(el, data, lib === "cytoscape-webgl");
    const cy = res.renderer;
    fps = await frameRate((i) => { cy.zoom(1 + 0.5 * Math.sin(i / 20)); cy.pan({ x: 50 * Math.sin(i / 10), y: 0 }); }, 2000);
    cy.destroy();
  }
  const gl = document.createElement("canvas").getContext("webgl2") ? "webgl2" : "none";
  return { lib, nodes: n, edges: m, firstRenderMs: Math.round(res.first), panZoomFps: Math.round(fps), webgl: gl };
};
