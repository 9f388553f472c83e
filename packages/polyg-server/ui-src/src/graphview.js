// The graph drawn with sigma.js (WebGL) over a graphology graph: layer colours, distinct
// cross-links, causal edges sized, faded and labelled by confidence, highlights. Nodes are
// sized by their number of links; labels go through the placer (labels.js), which never
// lets two overlap.
import Graph from "graphology";
import Sigma from "sigma";
import forceAtlas2 from "graphology-layout-forceatlas2";
import { LabelPlacer } from "./labels.js";
import { CROSS_COLOR, DIM, LAYER_COLORS, LAYERS, withAlpha } from "./style.js";

const CENTERS = { entity: [0, 0], temporal: [1, 0.15], causal: [-1, 0.15], semantic: [0, -1] };
const SYNC_LAYOUT_MAX = 1500; // below this many nodes the layout runs before the first frame
const FRAME_BUDGET_MS = 12; // layout work per animation frame for larger graphs

function nodeSize(layer, degree) {
  return Math.min((layer === "entity" ? 6 : 4) + 1.3 * Math.sqrt(degree), 16);
}

function edgeStyle(e) {
  if (e.layer === "cross") {
    return { color: withAlpha(CROSS_COLOR, 0.55), size: 0.8, type: "line" };
  }
  if (e.type === "C_CAUSES") {
    const c = e.confidence ?? 0.5;
    return {
      color: withAlpha(LAYER_COLORS.causal, 0.25 + 0.75 * c),
      size: 1 + 5 * c,
      type: "arrow",
      label: c.toFixed(2),
      forceLabel: true,
    };
  }
  const base = LAYER_COLORS[e.layer] ?? "#999999";
  return { color: withAlpha(base, 0.45), size: 1, type: "arrow", label: e.label ?? undefined };
}

export class GraphView {
  constructor(container, { onSelect }) {
    this.container = container;
    this.onSelect = onSelect;
    this.graph = new Graph({ multi: true, type: "directed" });
    this.renderer = null;
    this.selected = null;
    this.neighbours = new Set();
    this.highlight = null; // {nodes:Set, edges:Set} from a recall
    this.layoutFrames = 0;
    this.hovered = null;
    this.placer = new LabelPlacer({
      font: "system-ui, sans-serif",
      isHovered: (node) => node === this.hovered,
    });
  }

  clear() {
    this.graph.clear();
    this.selected = null;
    this.neighbours = new Set();
    this.highlight = null;
  }

  _place(node, index) {
    // A golden-angle spiral per layer: even, deterministic, no overlap before layout.
    const [cx, cy] = CENTERS[node.layer] ?? [0, 0];
    const r = 0.02 * Math.sqrt(index + 1);
    const a = index * 2.39996;
    return { x: cx * 2 + r * Math.cos(a), y: cy * 2 + r * Math.sin(a) };
  }

  addNode(node) {
    if (this.graph.hasNode(node.id)) return false;
    const count = this.graph.order;
    const perLayer = (this._perLayer ??= {});
    const i = (perLayer[node.layer] = (perLayer[node.layer] ?? 0) + 1);
    const { x, y } = this._place(node, i + (count % 7));
    this.graph.addNode(node.id, {
      x,
      y,
      size: nodeSize(node.layer, 0),
      centrality: 0,
      color: LAYER_COLORS[node.layer] ?? "#999999",
      label: node.name,
      layer: node.layer,
      nodeLabel: node.label,
      kind: node.kind,
    });
    return true;
  }

  addEdge(e) {
    if (!this.graph.hasNode(e.source) || !this.graph.hasNode(e.target)) return;
    const key = `${e.source}|${e.type}|${e.target}`;
    if (this.graph.hasEdge(key)) return;
    this.graph.addDirectedEdgeWithKey(key, e.source, e.target, {
      ...edgeStyle(e),
      layer: e.layer,
      relType: e.type,
      confidence: e.confidence,
    });
  }

  // Nodes brought in by a recall start next to the nodes they link to, at the scale of the
  // current layout (not on their layer's seed spiral, where they would land in one pile far
  // from everything they are linked to); the layout then settles them.
  placeNear(ids) {
    const fresh = new Set(ids.filter((id) => this.graph.hasNode(id)));
    if (!fresh.size) return;
    let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
    this.graph.forEachNode((id, a) => {
      if (fresh.has(id)) return;
      minX = Math.min(minX, a.x); maxX = Math.max(maxX, a.x);
      minY = Math.min(minY, a.y); maxY = Math.max(maxY, a.y);
    });
    const known = Number.isFinite(minX);
    const span = known ? Math.max(maxX - minX, maxY - minY, 1e-3) : 1;
    const centre = known ? [(minX + maxX) / 2, (minY + maxY) / 2] : [0, 0];
    let i = 0;
    for (const id of fresh) {
      const anchors = this.graph.neighbors(id).filter((n) => !fresh.has(n));
      let [x, y] = centre;
      if (anchors.length) {
        x = anchors.reduce((sum, n) => sum + this.graph.getNodeAttribute(n, "x"), 0) / anchors.length;
        y = anchors.reduce((sum, n) => sum + this.graph.getNodeAttribute(n, "y"), 0) / anchors.length;
      }
      const a = ++i * 2.39996;
      const r = span * (0.04 + 0.01 * Math.sqrt(i));
      this.graph.mergeNodeAttributes(id, { x: x + r * Math.cos(a), y: y + r * Math.sin(a) });
    }
  }

  // Moves the camera so that every given node is in the picture (a recall's answer).
  focus(ids) {
    if (!this.renderer) return;
    const points = ids
      .filter((id) => this.graph.hasNode(id))
      .map((id) => this.renderer.getNodeDisplayData(id))
      .filter(Boolean);
    if (!points.length) return;
    const xs = points.map((p) => p.x);
    const ys = points.map((p) => p.y);
    const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    const ratio = Math.min(Math.max(Math.max(maxX - minX, maxY - minY) * 1.5, 0.12), 1.2);
    this.renderer
      .getCamera()
      .animate({ x: (minX + maxX) / 2, y: (minY + maxY) / 2, ratio, angle: 0 }, { duration: 400 });
  }

  // For tests and tools: how many of the highlighted nodes are inside the graph's box and
  // how many carry a drawn label.
  highlightReport() {
    if (!this.highlight || !this.renderer) return { nodes: 0, inView: 0, labelled: 0 };
    const { width, height } = this.renderer.getDimensions();
    const ids = [...this.highlight.nodes].filter((id) => this.graph.hasNode(id));
    const labelled = new Set(this.placer.placed.nodes.map((n) => n.id));
    let inView = 0;
    for (const id of ids) {
      const a = this.graph.getNodeAttributes(id);
      const p = this.renderer.graphToViewport({ x: a.x, y: a.y });
      if (p.x >= 0 && p.x <= width && p.y >= 0 && p.y <= height) inView++;
    }
    return { nodes: ids.length, inView, labelled: ids.filter((id) => labelled.has(id)).length };
  }

  addPage(page) {
    for (const n of page.nodes) this.addNode(n);
    for (const e of page.edges) this.addEdge(e);
  }

  _sizeByDegree() {
    // The most connected nodes are drawn larger and named first.
    this.graph.forEachNode((id, a) => {
      const degree = this.graph.degree(id);
      if (degree !== a.centrality) {
        this.graph.mergeNodeAttributes(id, { centrality: degree, size: nodeSize(a.layer, degree) });
      }
    });
  }

  render() {
    const n = this.graph.order;
    this._sizeByDegree();
    if (n > 0 && n <= SYNC_LAYOUT_MAX) {
      forceAtlas2.assign(this.graph, {
        iterations: n < 200 ? 300 : 80,
        settings: { ...forceAtlas2.inferSettings(this.graph), barnesHutOptimize: n > 300 },
      });
    }
    if (!this.renderer) {
      this.renderer = new Sigma(this.graph, this.container, {
        renderEdgeLabels: true,
        defaultEdgeType: "arrow",
        labelRenderedSizeThreshold: n > 2000 ? 12 : 4,
        // The grid proposes up to two labels per 80 px cell; the placer keeps those that fit.
        labelDensity: 2,
        labelGridCellSize: 80,
        labelSize: 13,
        labelWeight: "500",
        labelFont: "system-ui, sans-serif",
        zIndex: true,
        // A container laid out at zero size (a phone's first frame) must not stop the page:
        // sigma draws once it has a size.
        allowInvalidContainer: true,
        ...this.placer.settings(),
        nodeReducer: (node, data) => this._nodeReducer(node, data),
        edgeReducer: (edge, data) => this._edgeReducer(edge, data),
      });
      // Sigma drew its first frame while being built; its labels wait in the placer.
      this.placer.attach(this.renderer);
      this.placer.draw();
      this.renderer.on("clickNode", ({ node }) => this.onSelect(node));
      this.renderer.on("enterNode", ({ node }) => {
        this.hovered = node;
        this.container.style.cursor = "pointer";
      });
      this.renderer.on("leaveNode", () => {
        this.hovered = null;
        this.container.style.cursor = "default";
      });
    } else {
      this.renderer.refresh();
    }
    if (n > SYNC_LAYOUT_MAX) this._layoutInFrames();
  }

  _layoutInFrames() {
    // Larger graphs are drawn at once and laid out a few iterations per frame, so the page
    // stays responsive while the picture settles.
    const token = ++this.layoutFrames;
    const settings = { ...forceAtlas2.inferSettings(this.graph), barnesHutOptimize: true };
    let rounds = 0;
    const step = () => {
      if (token !== this.layoutFrames || rounds > 60) return;
      const t0 = performance.now();
      forceAtlas2.assign(this.graph, { iterations: 1, settings });
      rounds++;
      if (performance.now() - t0 < FRAME_BUDGET_MS * 4) requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  }

  select(id) {
    this.selected = id;
    this.neighbours = new Set(id && this.graph.hasNode(id) ? this.graph.neighbors(id) : []);
    if (id && this.graph.hasNode(id) && this.renderer) {
      const pos = this.renderer.getNodeDisplayData(id);
      if (pos) this.renderer.getCamera().animate({ x: pos.x, y: pos.y }, { duration: 300 });
    }
    this.renderer?.refresh();
  }

  setHighlight(nodes, edges) {
    this.highlight = nodes ? { nodes: new Set(nodes), edges: new Set(edges ?? []) } : null;
    this.renderer?.refresh();
  }

  edgeKeys(source, target) {
    return this.graph.hasNode(source) && this.graph.hasNode(target)
      ? this.graph.edges(source, target)
      : [];
  }

  _nodeReducer(node, data) {
    const res = { ...data };
    if (this.highlight) {
      if (this.highlight.nodes.has(node)) {
        res.highlighted = true;
        res.zIndex = 2;
        res.forceLabel = true;
        res.labelRank = 2;
        res.size = data.size * 1.5;
      } else {
        res.color = DIM;
        res.label = "";
        res.zIndex = 0;
      }
    }
    if (this.selected) {
      if (node === this.selected) {
        res.highlighted = true;
        res.forceLabel = true;
        res.zIndex = 3;
        res.labelRank = 3;
      } else if (this.neighbours.has(node)) {
        res.forceLabel = true;
        res.labelRank = Math.max(res.labelRank ?? 0, 1);
      }
    }
    return res;
  }

  _edgeReducer(edge, data) {
    const res = { ...data };
    if (this.highlight && !this.highlight.edges.has(edge)) {
      res.color = DIM;
      res.label = "";
      res.forceLabel = false;
    } else if (this.highlight) {
      res.size = data.size + 1.5;
      res.zIndex = 2;
    }
    if (this.selected) {
      const [s, t] = this.graph.extremities(edge);
      if (s !== this.selected && t !== this.selected && !this.highlight) res.label = "";
    }
    return res;
  }

  // The labels drawn in the last frame: boxes in CSS pixels of the graph container.
  labels() {
    return this.placer.placed;
  }

  stats() {
    const counts = Object.fromEntries(LAYERS.map((l) => [l, 0]));
    this.graph.forEachNode((_, a) => (counts[a.layer] = (counts[a.layer] ?? 0) + 1));
    return counts;
  }
}
