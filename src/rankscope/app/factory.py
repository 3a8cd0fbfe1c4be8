"""The app factory: the ASGI application, assembled from the routers over an open store.

A page (or a group of them) is a module with a FastAPI ``router`` of thin routes over
the services and its templates in ``app/templates/``; :data:`ROUTERS` lists the
modules, in the order their routes are matched (docs/extending.md, "A web page").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from rankscope.app import (
    api,
    api_tries,
    pages,
    pages_dashboards,
    pages_grading,
    pages_llm,
    pages_tries,
)
from rankscope.app.core import (
    AppSettings,
    LoginRequired,
    error_answer,
    http_error,
    invalid_answer,
    login_redirect,
)
from rankscope.app.security import BodyLimit, CrossOriginGuard, SecurityHeaders
from rankscope.errors import RankscopeError
from rankscope.services.boundary import Boundary
from rankscope.services.exchange import MAX_UPLOAD
from rankscope.services.sessions import LoginLimiter

if TYPE_CHECKING:
    from rankscope.store.db import Store

__all__ = ["ROUTERS", "create_app"]

ROUTERS = (api, api_tries, pages, pages_grading, pages_dashboards, pages_llm, pages_tries)
"""The modules whose ``router`` the app includes, in this order: the API's first (every API
call would otherwise try the pages' patterns one by one; no address matches two modules)."""


def create_app(store: Store, data_dir: str | Path, *, boundary: Boundary | None = None,
               limiter: LoginLimiter | None = None, max_upload: int = MAX_UPLOAD + 1024 * 1024,
               forwarded_allow_ips: str | None = None, irds: Sequence[str] = ()) -> Any:
    """The ASGI application over an open store (SQLite: give it a ThreadWriter).

    Parameters
    ----------
    store : Store
        Where everything is kept.
    data_dir : path
        The app's own files (the LLM answer cache).
    boundary : Boundary, optional
        What web users may make the server do (default: endpoints' files
        inside ``data_dir``, no environment variable, public hosts only).
    limiter : LoginLimiter, optional
        Sign-in attempts allowed (default 5 per account and address, 20 per
        address, in 5 minutes).
    max_upload : int
        The largest request body accepted (bytes).
    forwarded_allow_ips : str, optional
        The proxies whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are
        believed (comma-separated addresses or ranges, ``*`` for any); None:
        nobody's, the client is the connection's peer.
    irds : sequence of str
        Patterns of the ir_datasets collections curators may name (``beir/*``);
        given, they replace the boundary's (:attr:`Boundary.irds`).
    """
    app = FastAPI(title="rankscope", docs_url=None, redoc_url=None,
                  openapi_url="/api/openapi.json",
                  description="The judging app's JSON API: `Authorization: Bearer TOKEN` "
                  "(`rankscope user token NAME`).")
    if boundary is None:
        boundary = Boundary.for_server(store, data_dir)
    if irds:
        boundary = dataclasses.replace(boundary, irds=tuple(irds))
    app.state.settings = AppSettings(store=store, data_dir=Path(data_dir), boundary=boundary,
                                     limiter=limiter or LoginLimiter())
    static = resources.files("rankscope.app") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    app.add_exception_handler(RankscopeError, error_answer)
    app.add_exception_handler(RequestValidationError, invalid_answer)
    app.add_exception_handler(LoginRequired, login_redirect)
    app.add_exception_handler(StarletteHTTPException, http_error)
    for module in ROUTERS:
        app.include_router(module.router)
    app.include_router(api.docs_router)
    # outermost first: headers on every answer, the client's address from a trusted
    # proxy only, then refuse oversized bodies, then cross-origin writes
    guarded: Any = BodyLimit(CrossOriginGuard(app), max_upload)
    if forwarded_allow_ips:
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

        guarded = ProxyHeadersMiddleware(guarded, trusted_hosts=forwarded_allow_ips)
    return SecurityHeaders(guarded)
