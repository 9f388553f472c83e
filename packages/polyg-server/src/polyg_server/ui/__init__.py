"""The web explorer served by the HTTP server at /ui, and its JSON API under /api/."""

from polyg_server.ui.routes import Explorer
from polyg_server.ui.session import COOKIE_NAME, SessionSigner

__all__ = ["COOKIE_NAME", "Explorer", "SessionSigner"]
