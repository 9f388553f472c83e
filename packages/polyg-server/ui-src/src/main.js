// The polyg explorer: namespace switcher, graph, search, node details, recall, timeline.
import { api, ApiError } from "./api.js";
import { GraphView } from "./graphview.js";
import { Timeline } from "./timeline.js";
import { CROSS_COLOR, LAYER_COLORS, LAYERS, el, formatTime } from "./style.js";

const params = new URLSearchParams(window.location.search);
const PAGE = Math.min(Math.max(Number(params.get("limit")) || 2000, 1), 10000);

const state = {
  graph: document.body.dataset.defaultGraph,
  layers: new Set(LAYERS),
  nextOffset: null,
  total: 0,
};

const $ = (id) => document.getElementById(id);
const status = (text) => ($("status").textContent = text);
const showError = (where, err) => {
  const msg = err instanceof ApiError || err instanceof Error ? err.message : String(err);
  where.replaceChildren(el("p", { class: "error", role: "alert", text: msg }));
};

const view = new GraphView($("graph"), { onSelect: (id) => selectNode(id) });
const timeline = new Timeline($("timeline"), { onSelect: (id) => selectNode(id) });

// -- graph pages ------------------------------------------------------------------------

function note(...children) {
  $("graph-note")?.remove();
  if (children.length) $("graph").append(el("div", { id: "graph-note", class: "overlay" }, ...children));
}

async function loadGraph() {
  const t0 = performance.now();
  note();
  view.clear();
  $("details").replaceChildren(el("p", { class: "hint", text: "Click a node to see its properties, neighbours and links." }));
  $("recall-result").replaceChildren();
  status("loading…");
  try {
    const page = await api.graph(state.graph, { limit: PAGE, offset: 0, layer: [...state.layers] });
    const fetched = performance.now();
    view.addPage(page);
    view.render();
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const drawn = performance.now();
    window.__polygRender = {
      graph: state.graph,
      nodes: view.graph.order,
      edges: view.graph.size,
      fetchMs: Math.round(fetched - t0),
      renderMs: Math.round(drawn - fetched),
      sinceNavigationMs: Math.round(drawn),
    };
    // The labels drawn in the last frame (boxes in CSS pixels of #graph), for tests and tools.
    window.__polygLabels = () => view.labels();
    window.__polygHighlight = () => view.highlightReport();
    state.nextOffset = page.next_offset;
    state.total = page.total;
    updateStatus();
    if (page.total === 0) {
      note(
        el("p", { text: `The graph "${state.graph}" holds no memory yet.` }),
        el("p", { class: "hint", text: "Load the example data with `polyg demo` (graph \"demo\"), or write with the remember tool, then pick the graph above." }),
      );
    }
    document.body.dataset.ready = "true";
  } catch (err) {
    status("");
    showError($("details"), err);
  }
  api
    .timeline(state.graph)
    .then((t) => timeline.set(t))
    .catch((err) => showError($("timeline"), err));
}

async function loadMore() {
  if (state.nextOffset === null) return;
  const page = await api.graph(state.graph, { limit: PAGE, offset: state.nextOffset, layer: [...state.layers] });
  view.addPage(page);
  view.render();
  state.nextOffset = page.next_offset;
  updateStatus();
}

function updateStatus() {
  const box = $("status");
  box.replaceChildren(`${view.graph.order} of ${state.total} nodes · ${view.graph.size} edges`);
  if (state.nextOffset !== null) {
    box.append(" ", el("button", { type: "button", text: "load more", onclick: () => loadMore() }));
  }
}

// -- namespace switcher and layer filter --------------------------------------------------

// Opens the graph named in the URL (#graph=...), else the one the server suggests: the
// default when it holds memory, else the only graph that does. When several do and the
// default is empty, the page asks which one to show (returns false).
async function loadGraphs() {
  const select = $("graph-select");
  let open = true;
  try {
    const res = await api.graphs();
    const fromHash = new URLSearchParams(window.location.hash.slice(1)).get("graph");
    if (fromHash && res.graphs.includes(fromHash)) state.graph = fromHash;
    else if (res.start) state.graph = res.start;
    else open = false;
    const size = (g) => (res.nodes[g] === null || res.nodes[g] === undefined ? "" : ` (${res.nodes[g]})`);
    select.replaceChildren(...res.graphs.map((g) => el("option", { value: g, text: `${g}${size(g)}` })));
    select.value = state.graph;
    if (!open) showChooser(res);
  } catch (err) {
    showError($("details"), err);
  }
  select.addEventListener("change", () => chooseGraph(select.value));
  return open;
}

function chooseGraph(graph) {
  state.graph = graph;
  $("graph-select").value = graph;
  window.location.hash = `graph=${encodeURIComponent(graph)}`;
  delete document.body.dataset.chooser;
  loadGraph();
}

function showChooser(res) {
  const filled = res.graphs.filter((g) => res.nodes[g]);
  note(
    el("p", { text: `The default graph "${res.default}" is empty; these graphs hold memory:` }),
    el(
      "ul",
      { class: "graph-choices" },
      ...filled.map((g) =>
        el(
          "li",
          {},
          el(
            "button",
            { type: "button", class: "graph-choice", "data-graph": g, onclick: () => chooseGraph(g) },
            el("span", { class: "hit-name", text: g }),
            el("span", { class: "hit-meta", text: `${res.nodes[g]} nodes` }),
          ),
        ),
      ),
    ),
  );
  document.body.dataset.chooser = "true";
  status("choose a graph");
}

function layerToggles() {
  const box = $("layers");
  for (const layer of LAYERS) {
    const input = el("input", { type: "checkbox", checked: "", "data-layer": layer });
    input.addEventListener("change", () => {
      if (input.checked) state.layers.add(layer);
      else state.layers.delete(layer);
      loadGraph();
    });
    const swatch = el("span", { class: "swatch" });
    swatch.style.background = LAYER_COLORS[layer];
    box.append(el("label", { class: "layer-toggle" }, input, swatch, layer));
  }
  const cross = el("span", { class: "swatch line" });
  cross.style.background = CROSS_COLOR;
  box.append(el("span", { class: "layer-toggle", title: "cross-links between graphs" }, cross, "cross-link"));
}

// -- search ------------------------------------------------------------------------------

function setupSearch() {
  const input = $("search");
  const list = $("search-results");
  let timer = null;
  let seq = 0;
  const run = async () => {
    const q = input.value.trim();
    const mine = ++seq;
    if (!q) {
      list.replaceChildren();
      return;
    }
    try {
      const res = await api.search(state.graph, q);
      if (mine !== seq) return;
      if (res.hits.length === 0) {
        list.replaceChildren(el("li", { class: "empty", text: `no match for "${q}"` }));
        return;
      }
      list.replaceChildren(
        ...res.hits.map((h) => {
          const swatch = el("span", { class: "swatch" });
          swatch.style.background = LAYER_COLORS[h.layer];
          return el(
            "li",
            {
              class: "search-hit",
              role: "option",
              "data-id": h.id,
              onclick: () => {
                list.replaceChildren();
                selectNode(h.id);
              },
            },
            swatch,
            el("span", { class: "hit-name", text: h.name }),
            el("span", { class: "hit-meta", text: `${h.layer} · ${h.similarity.toFixed(2)}` }),
          );
        }),
      );
    } catch (err) {
      list.replaceChildren(el("li", { class: "error", text: err.message }));
    }
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(run, 200);
  });
  input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") {
      ev.preventDefault();
      clearTimeout(timer);
      const first = list.querySelector(".search-hit");
      if (first) first.click();
      else run();
    } else if (ev.key === "Escape") list.replaceChildren();
  });
}

// -- node details ------------------------------------------------------------------------

function propertyRows(props) {
  const rows = [];
  for (const [k, v] of Object.entries(props)) {
    if (v === null || v === undefined || k.endsWith("_key") || k === "key") continue;
    let text = typeof v === "object" ? JSON.stringify(v) : String(v);
    if (/(_at|valid_from|valid_to)$/.test(k) && typeof v === "number") text = formatTime(v);
    rows.push(el("tr", {}, el("th", { text: k }), el("td", { text })));
  }
  return el("table", { class: "props" }, ...rows);
}

async function selectNode(id) {
  const box = $("details");
  box.replaceChildren(el("p", { class: "hint", text: "loading…" }));
  try {
    const d = await api.node(state.graph, id);
    let added = view.addNode(d.node);
    for (const nb of d.neighbours) {
      added = view.addNode(nb.node) || added;
      view.addEdge(nb.edge);
    }
    if (added) view.render();
    view.select(id);
    const swatch = el("span", { class: "swatch" });
    swatch.style.background = LAYER_COLORS[d.node.layer];
    const neighbours = d.neighbours.map((nb) => {
      const e = nb.edge;
      const rel = e.label ? `${e.type} (${e.label})` : e.type;
      const conf = e.confidence !== null ? el("span", { class: "conf", text: e.confidence.toFixed(2) }) : null;
      return el(
        "li",
        { class: `neighbour ${e.layer === "cross" ? "cross" : ""}`, "data-id": nb.node.id },
        el("span", { class: "dir", text: nb.direction === "out" ? "→" : "←" }),
        el("span", { class: "rel", text: rel }),
        conf,
        el("a", { href: "#", text: nb.node.name, onclick: (ev) => { ev.preventDefault(); selectNode(nb.node.id); } }),
        el("span", { class: "hit-meta", text: nb.node.layer }),
      );
    });
    box.replaceChildren(
      el("h2", { class: "node-title" }, swatch, el("span", { id: "node-name", text: d.node.name })),
      el("p", { class: "hit-meta", text: `${d.node.label} · ${d.node.layer}${d.node.kind ? " · " + d.node.kind : ""}` }),
      propertyRows(d.properties),
      el("h3", { text: `Neighbours and links (${d.neighbours.length}${d.truncated ? "+" : ""})` }),
      el("ul", { class: "neighbours" }, ...neighbours),
    );
  } catch (err) {
    showError(box, err);
  }
}

// -- recall ------------------------------------------------------------------------------

function setupRecall() {
  const form = $("recall-form");
  const out = $("recall-result");
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const question = $("recall-question").value.trim();
    if (!question) return;
    out.replaceChildren(el("p", { class: "hint", text: "recalling…" }));
    try {
      const r = await api.recall(state.graph, question);
      showRecall(r);
    } catch (err) {
      showError(out, err);
    }
  });
}

function showRecall(r) {
  const out = $("recall-result");
  // Bring the nodes the answer used into the picture, then highlight them and their edges.
  const added = [];
  for (const n of r.nodes) {
    if (view.addNode({ id: n.uuid, label: n.label, layer: n.graph, name: n.text, kind: null })) added.push(n.uuid);
  }
  for (const e of r.edges) {
    view.addEdge({ source: e.source, target: e.target, type: e.type, layer: e.type.startsWith("X_") ? "cross" : layerOfEdge(e.type), label: e.label, confidence: e.confidence });
  }
  if (added.length) {
    view.placeNear(added);
    view.render();
    updateStatus();
  }
  const used = new Set([...r.context.node_ids, ...r.sources]);
  const edges = r.edges.filter((e) => used.has(e.source) && used.has(e.target)).flatMap((e) => view.edgeKeys(e.source, e.target));
  view.setHighlight([...used], edges);
  view.focus([...used]);
  document.body.dataset.highlighted = String(used.size);

  const chain = r.reasoning.causal_chain.map((s, i) =>
    el(
      "li",
      { class: "chain-step" },
      el("span", { class: "hop", text: `${i + 1}` }),
      el("span", { class: "cause", text: s.cause }),
      el("span", { class: "arrow", text: " → " }),
      el("span", { class: "effect", text: s.effect }),
      el("span", { class: "conf", title: "confidence of this hop", text: s.confidence.toFixed(2) }),
    ),
  );
  out.replaceChildren(
    el("p", { class: "answer", id: "recall-answer", text: r.answer }),
    el("p", { class: "hit-meta", text: `confidence ${r.confidence.toFixed(2)} · ${r.intent.type ?? ""} · ${used.size} nodes used${r.degraded ? " · rule-based (no LLM)" : ""}` }),
    chain.length ? el("h3", { text: "Causal chain" }) : null,
    chain.length ? el("ol", { class: "chain", id: "causal-chain" }, ...chain) : null,
    el("button", { type: "button", text: "clear highlight", onclick: () => view.setHighlight(null) }),
  );
}

function layerOfEdge(type) {
  if (type === "C_CAUSES" || type === "C_SOLVED_BY") return "causal";
  if (type === "T_BEFORE") return "temporal";
  if (type === "E_RELATES") return "entity";
  return "semantic";
}

layerToggles();
setupSearch();
setupRecall();
loadGraphs().then((open) => open && loadGraph());
window.addEventListener("resize", () => timeline.draw());
// The graph's box changes without a window resize too (the page's columns stacking on a
// narrow screen): sigma is told so it draws at the new size.
new ResizeObserver(() => view.renderer?.scheduleRefresh()).observe($("graph"));
