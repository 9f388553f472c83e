// Colours of the four layers and of cross-links, shared by the graph, legend and timeline.
export const LAYER_COLORS = {
  entity: "#4c78a8",
  temporal: "#f58518",
  causal: "#e45756",
  semantic: "#54a24b",
};
export const CROSS_COLOR = "#a58bd8";
export const LAYERS = ["entity", "temporal", "causal", "semantic"];
export const DIM = "#e4e4e4";

// An "#rrggbb" colour with an alpha in [0, 1] as "rgba(...)".
export function withAlpha(hex, alpha) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${alpha.toFixed(3)})`;
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

export function formatTime(ms) {
  if (ms === null || ms === undefined) return "—";
  return new Date(ms).toISOString().replace("T", " ").replace(/:\d\d\.\d+Z$/, "Z");
}
