"""Starlette routes of the explorer: the page at /ui, its assets, login, and the JSON API.

Authentication is the HTTP server's: `SecurityMiddleware` lets a request through with
the bearer token or, on /ui and /api/ only, the session cookie set by POST /ui/login.
/ui itself, its assets and the login form are open and carry no data. The key is
never read from a URL.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, TypeVar, cast
from urllib.parse import parse_qs

from polyg_core.errors import (
    InvalidInput,
    NodeNotFound,
    PolygError,
    QueryTimeout,
    StorageUnavailable,
)
from polyg_core.resolve import NameResolver
from polyg_shared.tools import RecallInput
from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import Scope

from polyg_server.context import ServerContext
from polyg_server.errors import polyg_error_text, validation_error_text
from polyg_server.http import AUTH_SCOPE_KEY
from polyg_server.ui import queries
from polyg_server.ui.models import (
    MAX_ID_CHARS,
    GraphPageInput,
    GraphsInput,
    GraphsOutput,
    NodeInput,
    SearchInput,
    TimelineInput,
)
from polyg_server.ui.page import SECURITY_HEADERS, explorer_html, login_html
from polyg_server.ui.session import COOKIE_NAME, SessionSigner

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

KEY_PARAMS = frozenset({"key", "api_key", "apikey", "token", "access_token", "password"})
LIST_PARAMS = frozenset({"layer"})
MAX_LOGIN_BODY = 4096
CONTENT_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}


def _error(status: int, error: str, message: str) -> JSONResponse:
    return JSONResponse(
        {"error": error, "message": message},
        status_code=status,
        headers={"Cache-Control": "no-store"},
    )


class ApiError(Exception):
    """An error answered as JSON `{"error", "message"}` with an HTTP status."""

    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message


def _query_args(request: Request) -> dict[str, Any]:
    params = request.query_params
    if KEY_PARAMS & set(params.keys()):
        raise ApiError(
            400,
            "key_in_url",
            "the API key is never accepted in a URL (it would end up in logs and history); "
            "send 'Authorization: Bearer <key>' or log in at /ui",
        )
    args: dict[str, Any] = {}
    for name in params:
        values = params.getlist(name)
        if name in LIST_PARAMS:
            args[name] = [v.strip() for raw in values for v in raw.split(",") if v.strip()]
        else:
            args[name] = values[0] if len(values) == 1 else values
    return args


def _validate(model: type[M], endpoint: str, args: dict[str, Any]) -> M:
    try:
        return model.model_validate(args)
    except ValidationError as exc:
        text = validation_error_text(endpoint, exc, model)
        raise ApiError(422, "invalid_arguments", text.replace("call the tool", "send it")) from exc


def _polyg_error(exc: PolygError) -> ApiError:
    text = polyg_error_text(exc)
    if isinstance(exc, NodeNotFound):
        return ApiError(404, "not_found", text)
    if isinstance(exc, StorageUnavailable):
        return ApiError(503, "storage_unavailable", text)
    if isinstance(exc, QueryTimeout):
        return ApiError(504, "query_timeout", text)
    if isinstance(exc, InvalidInput | LookupError):
        return ApiError(400, "invalid_input", text)
    return ApiError(500, "error", text)


def _json(model: BaseModel) -> JSONResponse:
    return JSONResponse(model.model_dump(mode="json"), headers={"Cache-Control": "no-store"})


def _load_assets() -> dict[str, tuple[bytes, str]]:
    root = resources.files("polyg_server.ui") / "static"
    assets: dict[str, tuple[bytes, str]] = {}
    if not root.is_dir():
        return assets
    for item in root.iterdir():
        suffix = "." + item.name.rsplit(".", 1)[-1] if "." in item.name else ""
        if item.is_file() and suffix in CONTENT_TYPES:
            assets[item.name] = (item.read_bytes(), CONTENT_TYPES[suffix])
    return assets


@dataclass
class Explorer:
    """The explorer's routes for one server context.

    Args:
        ctx: the server's context (store, memory, default namespace).
        api_key: the server's API key; None serves the explorer without login.
        version: appended to asset URLs so a new release is not served from cache.
    """

    ctx: ServerContext
    api_key: str | None = None
    version: str = "0"
    signer: SessionSigner | None = field(init=False)
    assets: dict[str, tuple[bytes, str]] = field(init=False)

    def __post_init__(self) -> None:
        self.signer = SessionSigner(self.api_key) if self.api_key else None
        self.assets = _load_assets()
        if "app.js" not in self.assets:
            logger.warning(
                "the explorer's assets are missing from polyg_server/ui/static; "
                "build them with scripts/build_ui.sh"
            )

    @property
    def open_paths(self) -> frozenset[str]:
        """Paths served without authentication: the page shell, login, logout, assets."""
        static = {f"/ui/static/{name}" for name in self.assets}
        return frozenset({"/ui", "/ui/login", "/ui/logout", *static})

    def authenticates(self, scope: Scope) -> bool:
        """True for a /ui or /api/ request carrying a valid session cookie."""
        return self.signer is not None and self.signer.authenticates(scope)

    def routes(self) -> list[Route]:
        """The routes to add to the HTTP app."""
        return [
            Route("/ui", self.page, methods=["GET"]),
            Route("/ui/login", self.login, methods=["GET", "POST"]),
            Route("/ui/logout", self.logout, methods=["POST"]),
            Route("/ui/static/{name}", self.static, methods=["GET"]),
            Route("/api/graphs", self._api(self.graphs), methods=["GET"]),
            Route("/api/graph", self._api(self.graph), methods=["GET"]),
            Route("/api/node/{id}", self._api(self.node), methods=["GET"]),
            Route("/api/search", self._api(self.search), methods=["GET"]),
            Route("/api/timeline", self._api(self.timeline), methods=["GET"]),
            Route("/api/recall", self._api(self.recall), methods=["POST"]),
        ]

    # -- page, login, assets ---------------------------------------------------------------

    def _authenticated(self, request: Request) -> bool:
        return bool(request.scope.get(AUTH_SCOPE_KEY, self.api_key is None))

    async def page(self, request: Request) -> Response:
        if KEY_PARAMS & set(request.query_params.keys()):
            return HTMLResponse(
                login_html("The key is never accepted in a URL: type it in this form."),
                status_code=400,
                headers=SECURITY_HEADERS,
            )
        if not self._authenticated(request):
            return HTMLResponse(login_html(), headers=SECURITY_HEADERS)
        html = explorer_html(
            self.ctx.default_namespace, logout=self.signer is not None, version=self.version
        )
        return HTMLResponse(html, headers=SECURITY_HEADERS)

    async def login(self, request: Request) -> Response:
        if request.method == "GET":
            return RedirectResponse("/ui", status_code=303)
        if self.signer is None:
            return RedirectResponse("/ui", status_code=303)
        body = await request.body()
        key = ""
        if len(body) <= MAX_LOGIN_BODY:
            if request.headers.get("content-type", "").startswith("application/json"):
                try:
                    data = json.loads(body)
                    fields = cast(dict[str, Any], data) if isinstance(data, dict) else {}
                    key = str(fields.get("key", ""))
                except ValueError:
                    key = ""
            else:
                key = parse_qs(body.decode("utf-8", "replace")).get("key", [""])[0]
        if not key or not self.signer.key_matches(key):
            logger.info("explorer login refused")
            return HTMLResponse(
                login_html("Wrong key. Use the value of POLYG_API_KEY the server runs with."),
                status_code=401,
                headers=SECURITY_HEADERS,
            )
        response = RedirectResponse("/ui", status_code=303)
        response.set_cookie(
            COOKIE_NAME,
            self.signer.issue(),
            max_age=self.signer.max_age_s,
            path="/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return response

    async def logout(self, request: Request) -> Response:
        response = RedirectResponse("/ui", status_code=303)
        response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="strict")
        return response

    async def static(self, request: Request) -> Response:
        asset = self.assets.get(str(request.path_params["name"]))
        if asset is None:
            return _error(404, "not_found", "no such asset; rebuild with scripts/build_ui.sh")
        content, media_type = asset
        return Response(
            content,
            media_type=media_type,
            headers={"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"},
        )

    # -- JSON API --------------------------------------------------------------------------

    def _api(self, handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            try:
                return await handler(request)
            except ApiError as exc:
                return _error(exc.status, exc.error, exc.message)
            except PolygError as exc:
                err = _polyg_error(exc)
                logger.info("%s failed: %s", request.url.path, exc)
                return _error(err.status, err.error, err.message)
            except Exception:
                ref = uuid.uuid4().hex[:8]
                logger.exception("%s raised an unexpected error [ref %s]", request.url.path, ref)
                return _error(
                    500,
                    "internal_error",
                    f"internal error (logged, ref {ref}); retry, and report the reference "
                    "if it happens again",
                )

        return endpoint

    async def graphs(self, request: Request) -> Response:
        _validate(GraphsInput, "/api/graphs", _query_args(request))
        existing = await self.ctx.store.list_graphs()
        default = self.ctx.default_namespace
        names = sorted({*existing, default})
        # The default first, so it is always sized however many namespaces there are.
        sizes = await queries.memory_sizes(
            self.ctx.store, [default, *(n for n in names if n != default)], existing
        )
        return _json(
            GraphsOutput(
                graphs=names,
                default=default,
                nodes={name: sizes[name] for name in names},
                start=queries.opening_graph(default, sizes),
            )
        )

    async def graph(self, request: Request) -> Response:
        inp = _validate(GraphPageInput, "/api/graph", _query_args(request))
        ns = self.ctx.namespace(inp.graph)
        layers = list(dict.fromkeys(inp.layer))
        page = await queries.graph_page(
            self.ctx.store, ns, layers, offset=inp.offset, limit=inp.limit, max_edges=inp.max_edges
        )
        return _json(page)

    async def node(self, request: Request) -> Response:
        node_id = str(request.path_params["id"]).strip()
        if not node_id or len(node_id) > MAX_ID_CHARS:
            raise ApiError(
                422,
                "invalid_arguments",
                f"a node id is a uuid of at most {MAX_ID_CHARS} characters; "
                "find one with /api/search?q=<name>",
            )
        inp = _validate(NodeInput, "/api/node", _query_args(request))
        ns = self.ctx.namespace(inp.graph)
        try:
            detail = await queries.node_detail(self.ctx.store, ns, node_id, inp.limit)
        except NodeNotFound as exc:
            raise ApiError(
                404,
                "not_found",
                f"no node with uuid {node_id!r} in graph {ns!r}; find one with "
                "/api/search?q=<name>",
            ) from exc
        return _json(detail)

    async def search(self, request: Request) -> Response:
        inp = _validate(SearchInput, "/api/search", _query_args(request))
        ns = self.ctx.namespace(inp.graph)
        memory = self.ctx.memory_or_none()
        resolver = (
            memory.resolver
            if memory is not None
            else NameResolver(self.ctx.store, self.ctx.embedder)
        )
        return _json(await queries.search(resolver, ns, inp.q.strip() or inp.q, inp.limit))

    async def timeline(self, request: Request) -> Response:
        inp = _validate(TimelineInput, "/api/timeline", _query_args(request))
        ns = self.ctx.namespace(inp.graph)
        return _json(await queries.timeline(self.ctx.store, ns, inp.limit))

    async def recall(self, request: Request) -> Response:
        _query_args(request)
        if not request.headers.get("content-type", "").startswith("application/json"):
            raise ApiError(
                415,
                "unsupported_media_type",
                "send the recall as JSON with 'Content-Type: application/json', e.g. "
                '{"question": "Why did the auth service fail?"}',
            )
        try:
            data = json.loads(await request.body())
        except ValueError as exc:
            raise ApiError(
                400,
                "invalid_json",
                f'the body is not valid JSON ({exc}); send {{"question": "...", "graph": "..."}}',
            ) from exc
        except RecursionError as exc:  # json.loads recurses once per nesting level
            raise ApiError(
                400,
                "invalid_json",
                "the body nests too deeply to read; send a flat JSON object like "
                '{"question": "...", "graph": "..."}',
            ) from exc
        if not isinstance(data, dict):
            raise ApiError(
                400, "invalid_json", 'the body must be a JSON object like {"question": "..."}'
            )
        inp = _validate(RecallInput, "/api/recall", dict(cast(dict[str, Any], data)))
        memory = self.ctx.require_memory()
        result = await memory.recall(
            inp.question,
            graph=self.ctx.namespace(inp.graph),
            reference_time=inp.reference_time,
            max_tokens=inp.max_tokens,
        )
        return _json(result)
