// JSON calls to the explorer API. Cookies travel with same-origin requests; the key never
// appears in a URL.

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function call(path, options = {}) {
  const res = await fetch(path, { credentials: "same-origin", ...options });
  if (res.status === 401) {
    // The session expired: the page shows the login form again.
    window.location.assign("/ui");
    throw new ApiError(401, { message: "login needed" });
  }
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === "") continue;
    q.set(k, Array.isArray(v) ? v.join(",") : String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

export const api = {
  graphs: () => call("/api/graphs"),
  graph: (graph, opts) => call(`/api/graph${query({ graph, ...opts })}`),
  node: (graph, id) => call(`/api/node/${encodeURIComponent(id)}${query({ graph })}`),
  search: (graph, q) => call(`/api/search${query({ graph, q, limit: 10 })}`),
  timeline: (graph) => call(`/api/timeline${query({ graph, limit: 300 })}`),
  recall: (graph, question) =>
    call("/api/recall", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ graph, question }),
    }),
};
