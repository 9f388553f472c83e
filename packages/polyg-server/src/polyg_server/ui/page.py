"""The two HTML documents of /ui: the explorer shell and the login form."""

from __future__ import annotations

from html import escape

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data: blob:; connect-src 'self'; worker-src 'self' blob:; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def explorer_html(default_graph: str, *, logout: bool, version: str) -> str:
    """The explorer page; the bundle at /ui/static/ draws everything."""
    logout_form = (
        '<form method="post" action="/ui/logout" class="logout">'
        '<button type="submit">Log out</button></form>'
        if logout
        else ""
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>polyg explorer</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/static/app.css?v={escape(version)}">
</head>
<body data-default-graph="{escape(default_graph)}">
<header>
  <strong class="brand">polyg explorer</strong>
  <label>graph <select id="graph-select" aria-label="graph"></select></label>
  <div class="search"><input id="search" type="search" placeholder="Search by name…"
    aria-label="search by name" autocomplete="off"><ul id="search-results" role="listbox"></ul></div>
  <span id="layers"></span>
  <span id="status" role="status"></span>
  {logout_form}
</header>
<main>
  <div id="graph" aria-label="graph view"></div>
  <aside id="side">
    <section id="recall">
      <form id="recall-form"><input id="recall-question" type="text"
        placeholder="Ask: Why did the auth service fail?" aria-label="recall question">
        <button type="submit">Recall</button></form>
      <div id="recall-result"></div>
    </section>
    <section id="details"><p class="hint">Click a node to see its properties,
      neighbours and links.</p></section>
  </aside>
</main>
<footer id="timeline" aria-label="timeline"></footer>
<script src="/ui/static/app.js?v={escape(version)}"></script>
</body></html>
"""


def login_html(message: str | None = None) -> str:
    """The login form: the key is posted in the body and kept in an HttpOnly cookie."""
    note = f'<p class="error" role="alert">{escape(message)}</p>' if message else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>polyg explorer: log in</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/static/app.css">
</head><body class="login">
<form method="post" action="/ui/login" class="login-form">
  <h1>polyg explorer</h1>
  <p>This server needs its API key (<code>POLYG_API_KEY</code>).</p>
  {note}
  <label>API key <input name="key" type="password" autocomplete="current-password"
    required autofocus></label>
  <button type="submit">Log in</button>
</form>
</body></html>
"""
