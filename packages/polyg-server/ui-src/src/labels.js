// Label placement. Sigma proposes the labels worth drawing (its label grid, plus forced
// labels); the placer draws them most important first (selected, highlighted, then the
// most connected) and drops any label whose box would touch one already drawn, so a dense
// cluster shows its hubs' names at the default zoom and the rest as the user zooms in.
// Edge labels (a causal edge's confidence, a relation's name) are placed after the node
// labels, around them, and drawn on the same canvas, above the nodes, so no disc hides them.
// The boxes drawn last are kept in `placed` (CSS pixels of the graph container) so the page
// can show, and tests can check, what was drawn.
import { drawDiscNodeHover } from "sigma/rendering";

export const MAX_LABEL_CHARS = 32; // longer names are cut with "…"; the details panel has them whole
const NODE_FONT_PX = 13;
const EDGE_FONT_PX = 11;
const GAP_PX = 3; // between a node's disc and its label
const HALO_PX = 3; // the white outline that keeps text readable over edges
const PAD_PX = 2; // room kept around each box, halo included
const HIGHLIGHT_RING_PX = 5; // a highlighted node's white ring and shadow, past its disc

function shorten(text) {
  const s = String(text ?? "").trim();
  return s.length > MAX_LABEL_CHARS ? `${s.slice(0, MAX_LABEL_CHARS - 1)}…` : s;
}

function overlaps(a, b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

export class LabelPlacer {
  constructor({ font = "system-ui, sans-serif", isHovered = () => false } = {}) {
    this.font = font;
    this.isHovered = isHovered;
    this.nodeCandidates = [];
    this.edgeCandidates = [];
    this.placed = { nodes: [], edges: [], candidates: 0 };
    this.metrics = new Map();
    this.obstacles = []; // discs of highlighted nodes, which sigma draws above the labels
  }

  // -- sigma settings: collect instead of drawing ------------------------------------------

  settings() {
    return {
      defaultDrawNodeLabel: (ctx, data) => {
        this.nodeContext = ctx;
        if (data.label) this.nodeCandidates.push(data);
      },
      defaultDrawEdgeLabel: (_ctx, edge, source, target) => {
        if (edge.label) this.edgeCandidates.push({ edge, source, target });
      },
      // Sigma draws highlighted nodes on its hover layer with their label in a box; only the
      // node under the pointer keeps that box, the others get a ring and the placed label.
      defaultDrawNodeHover: (ctx, data, settings) => {
        if (this.isHovered(data.key)) {
          drawDiscNodeHover(ctx, data, settings);
          return;
        }
        ctx.beginPath();
        ctx.arc(data.x, data.y, data.size + 2, 0, Math.PI * 2);
        ctx.closePath();
        ctx.fillStyle = "#fff";
        ctx.shadowBlur = 6;
        ctx.shadowColor = "rgba(0,0,0,0.6)";
        ctx.fill();
        ctx.shadowBlur = 0;
      },
    };
  }

  attach(renderer) {
    this.renderer = renderer;
    let rendering = false;
    renderer.on("beforeRender", () => {
      rendering = true;
      this.nodeCandidates = [];
    });
    renderer.on("afterRender", () => {
      rendering = false;
      this.draw();
    });
    // On hover sigma redraws the edge labels alone (no render events): place them again
    // around the node labels already drawn.
    const renderEdgeLabels = renderer.renderEdgeLabels.bind(renderer);
    renderer.renderEdgeLabels = () => {
      this.edgeCandidates = [];
      renderEdgeLabels();
      if (!rendering && this.nodeContext) {
        // The boxes never overlap, so clearing the old edge boxes leaves node labels whole.
        for (const b of this.placed.edges) {
          const x = Math.floor(b.x);
          const y = Math.floor(b.y);
          this.nodeContext.clearRect(x, y, Math.ceil(b.x + b.w) - x, Math.ceil(b.y + b.h) - y);
        }
        const nodeBoxes = this.placed.nodes.map(({ x, y, w, h }) => ({ x, y, w, h }));
        const edges = this._placeEdges([...this.obstacles, ...nodeBoxes]);
        this.placed = { ...this.placed, edges };
      }
      return renderer;
    };
  }

  // -- placement ---------------------------------------------------------------------------

  _measure(ctx, text, font) {
    const key = `${font}\u0000${text}`;
    let m = this.metrics.get(key);
    if (!m) {
      ctx.font = font;
      const t = ctx.measureText(text);
      m = {
        left: t.actualBoundingBoxLeft,
        right: t.actualBoundingBoxRight,
        ascent: t.actualBoundingBoxAscent,
        descent: t.actualBoundingBoxDescent,
      };
      if (this.metrics.size > 20000) this.metrics.clear();
      this.metrics.set(key, m);
    }
    return m;
  }

  _box(x, baseline, m) {
    const pad = PAD_PX + HALO_PX / 2;
    return {
      x: x - m.left - pad,
      y: baseline - m.ascent - pad,
      w: m.left + m.right + 2 * pad,
      h: m.ascent + m.descent + 2 * pad,
    };
  }

  _fits(box, taken, view, owner) {
    // Whole on screen (a label cut by the edge is not readable) and touching no other, nor
    // the disc of a highlighted node other than its own (those are drawn above the labels).
    if (box.x < 0 || box.y < 0 || box.x + box.w > view.width || box.y + box.h > view.height) {
      return false;
    }
    for (const other of taken) {
      if ((other.owner === undefined || other.owner !== owner) && overlaps(box, other)) return false;
    }
    return true;
  }

  _text(ctx, text, x, y, color, font) {
    ctx.font = font;
    ctx.lineJoin = "round";
    ctx.lineWidth = HALO_PX;
    ctx.strokeStyle = "rgba(252,252,252,0.92)";
    ctx.strokeText(text, x, y);
    ctx.fillStyle = color;
    ctx.fillText(text, x, y);
  }

  draw() {
    const taken = [];
    const view = this.renderer.getDimensions();
    const nodes = [];
    const ctx = this.nodeContext;
    if (ctx) {
      const font = `500 ${NODE_FONT_PX}px ${this.font}`;
      const ranked = this.nodeCandidates.slice().sort(
        (a, b) =>
          (b.labelRank ?? 0) - (a.labelRank ?? 0) ||
          (b.centrality ?? 0) - (a.centrality ?? 0) ||
          b.size - a.size ||
          (a.key < b.key ? -1 : 1),
      );
      for (const d of ranked) {
        if (!d.highlighted) continue;
        const r = d.size + HIGHLIGHT_RING_PX;
        taken.push({ x: d.x - r, y: d.y - r, w: 2 * r, h: 2 * r, owner: d.key });
      }
      this.obstacles = taken.slice();
      for (const d of ranked) {
        const text = shorten(d.label);
        if (!text) continue;
        const m = this._measure(ctx, text, font);
        const baseline = d.y + NODE_FONT_PX / 3;
        // To the right of the disc, else to its left.
        const right = d.x + d.size + GAP_PX;
        const left = d.x - d.size - GAP_PX - m.right;
        let placed = null;
        for (const x of [right, left]) {
          const box = this._box(x, baseline, m);
          if (this._fits(box, taken, view, d.key)) {
            placed = { x, box };
            break;
          }
        }
        if (!placed) continue;
        taken.push(placed.box);
        this._text(ctx, text, placed.x, baseline, "#1f2328", font);
        nodes.push({ id: d.key, text, layer: d.layer, ...placed.box, node: { x: d.x, y: d.y } });
      }
    }
    const edges = this._placeEdges(taken);
    this.placed = {
      nodes,
      edges,
      candidates: this.nodeCandidates.length + this.edgeCandidates.length,
    };
  }

  _placeEdges(taken) {
    const view = this.renderer.getDimensions();
    const edges = [];
    const ectx = this.nodeContext;
    if (ectx) {
      const font = `${EDGE_FONT_PX}px ${this.font}`;
      const ranked = this.edgeCandidates.slice().sort(
        (a, b) =>
          (b.edge.forceLabel ? 1 : 0) - (a.edge.forceLabel ? 1 : 0) ||
          (b.edge.confidence ?? 0) - (a.edge.confidence ?? 0) ||
          (a.edge.key < b.edge.key ? -1 : 1),
      );
      for (const { edge, source, target } of ranked) {
        const text = shorten(edge.label);
        const m = this._measure(ectx, text, font);
        // Centred on the middle of the edge, level, so the box is exact.
        const x = (source.x + target.x) / 2 - (m.right - m.left) / 2;
        const baseline = (source.y + target.y) / 2 + (m.ascent - m.descent) / 2;
        const box = this._box(x, baseline, m);
        if (!this._fits(box, taken, view)) continue;
        taken.push(box);
        this._text(ectx, text, x, baseline, "#7a1f1f", font);
        edges.push({ id: edge.key, text, ...box });
      }
    }
    return edges;
  }
}
