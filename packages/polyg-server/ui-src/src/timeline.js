// The timeline strip: events as points, facts as validity intervals (open ones run to the
// right edge). Wheel zooms around the pointer; the buttons fit the events or everything.
import { LAYER_COLORS, el, formatTime } from "./style.js";

const SVG = "http://www.w3.org/2000/svg";
const LANES = 4;

function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

export class Timeline {
  constructor(container, { onSelect }) {
    this.container = container;
    this.onSelect = onSelect;
    this.data = { events: [], facts: [] };
    this.domain = null;
  }

  set(data) {
    this.data = data;
    this.domain = this._fit(true);
    this.draw();
  }

  _fit(eventsFirst) {
    const ev = this.data.events.map((e) => e.time).filter((t) => t !== null);
    const facts = this.data.facts.flatMap((f) => [f.valid_from, f.valid_to]).filter((t) => t !== null);
    const pts = eventsFirst && ev.length > 1 ? ev : [...ev, ...facts];
    if (pts.length === 0) return null;
    let lo = Math.min(...pts);
    let hi = Math.max(...pts);
    if (hi === lo) {
      lo -= 3600e3;
      hi += 3600e3;
    }
    const pad = (hi - lo) * 0.04;
    return [lo - pad, hi + pad];
  }

  draw() {
    const box = this.container;
    box.replaceChildren();
    const head = el(
      "div",
      { class: "timeline-head" },
      el("span", { class: "timeline-title", text: "Timeline" }),
      el("button", { type: "button", text: "Fit events", onclick: () => this._refit(true) }),
      el("button", { type: "button", text: "Fit all", onclick: () => this._refit(false) }),
      el("span", {
        class: "timeline-legend",
        text: `${this.data.events.length} events · ${this.data.facts.length} facts (bars: valid time)`,
      }),
    );
    box.append(head);
    if (!this.domain) {
      box.append(el("p", { class: "hint", text: "No events or facts in this graph." }));
      return;
    }
    const width = Math.max(box.clientWidth - 16, 200);
    const height = 24 + LANES * 11 + 18;
    const [lo, hi] = this.domain;
    const x = (t) => ((t - lo) / (hi - lo)) * width;
    const root = svg("svg", { width, height, class: "timeline-svg", role: "img" });
    root.addEventListener("wheel", (ev) => this._zoom(ev, width), { passive: false });
    // Facts: one bar per validity interval, packed into lanes.
    const laneEnd = new Array(LANES).fill(-Infinity);
    for (const f of this.data.facts) {
      if (f.valid_from === null) continue;
      const x0 = Math.max(x(f.valid_from), -5);
      const x1 = f.valid_to === null ? width + 5 : Math.min(x(f.valid_to), width + 5);
      if (x1 < 0 || x0 > width) continue;
      let lane = laneEnd.findIndex((end) => end < x0);
      if (lane < 0) lane = LANES - 1;
      laneEnd[lane] = x1 + 4;
      const rect = svg("rect", {
        x: x0,
        y: 24 + lane * 11,
        width: Math.max(x1 - x0, 2),
        height: 8,
        rx: 2,
        fill: LAYER_COLORS.temporal,
        "fill-opacity": f.valid_to === null ? 0.45 : 0.25,
        class: "timeline-fact",
      });
      const title = svg("title");
      title.textContent = `${f.name}\nvalid ${formatTime(f.valid_from)} → ${f.valid_to === null ? "now" : formatTime(f.valid_to)}`;
      rect.append(title);
      rect.addEventListener("click", () => this.onSelect(f.id));
      root.append(rect);
    }
    // Events: points on the top row.
    root.append(svg("line", { x1: 0, x2: width, y1: 12, y2: 12, stroke: "#ccc" }));
    for (const e of this.data.events) {
      if (e.time === null) continue;
      const cx = x(e.time);
      if (cx < -4 || cx > width + 4) continue;
      const dot = svg("circle", { cx, cy: 12, r: 5, fill: LAYER_COLORS.temporal, class: "timeline-event" });
      const title = svg("title");
      title.textContent = `${formatTime(e.time)}  ${e.name}`;
      dot.append(title);
      dot.addEventListener("click", () => this.onSelect(e.id));
      root.append(dot);
    }
    const axisY = height - 4;
    for (const [pos, anchor, t] of [[2, "start", lo], [width - 2, "end", hi]]) {
      const label = svg("text", { x: pos, y: axisY, "text-anchor": anchor, class: "timeline-axis" });
      label.textContent = formatTime(t);
      root.append(label);
    }
    box.append(root);
  }

  _refit(eventsFirst) {
    this.domain = this._fit(eventsFirst);
    this.draw();
  }

  _zoom(ev, width) {
    if (!this.domain) return;
    ev.preventDefault();
    const [lo, hi] = this.domain;
    const at = lo + (ev.offsetX / width) * (hi - lo);
    const k = ev.deltaY > 0 ? 1.25 : 0.8;
    this.domain = [at - (at - lo) * k, at + (hi - at) * k];
    this.draw();
  }
}
