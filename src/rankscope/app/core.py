"""What every route shares: settings, templates, who is asking, errors as HTTP answers.

The application is assembled by :func:`rankscope.app.factory.create_app`
from the routes of :mod:`rankscope.app.pages`, :mod:`rankscope.app.pages_grading`,
:mod:`rankscope.app.pages_dashboards`, :mod:`rankscope.app.pages_llm` and
:mod:`rankscope.app.api`; each is a few lines over a service. Errors raised by
the services become answers here, once: :class:`~rankscope.errors.AuthError`
401 (a page redirects to ``/login``), :class:`~rankscope.errors.ForbiddenError` 403,
:class:`~rankscope.errors.NotFoundError` 404,
:class:`~rankscope.errors.ConflictError` 409, bad input 400; the API answers
``{"error": message}``, a page shows the message. A request its schema
refuses (an unknown JSON field, an id out of range, a text too long, a
grade that is not a number) is a 422 naming the field, never echoing the
value.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import annotated_types
from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from pydantic import StrictInt
from starlette.exceptions import HTTPException as StarletteHTTPException

from rankscope.app.security import COOKIE
from rankscope.errors import (
    AppError,
    AuthError,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    RankscopeError,
)
from rankscope.services.accounts import Actor
from rankscope.services.boundary import Boundary
from rankscope.services.limits import MAX_ID
from rankscope.services.sessions import LoginLimiter, resolve_session, resolve_token

if TYPE_CHECKING:
    from rankscope.store.db import Store

__all__ = [
    "ApiActor",
    "AppSettings",
    "BodyId",
    "Id",
    "LoginRequired",
    "MaybePageActor",
    "PageActor",
    "form_id",
    "render",
    "settings_of",
]


_ID_RANGE = annotated_types.Interval(ge=1, le=MAX_ID)

Id = Annotated[int, _ID_RANGE]
"""An id in a path, a query or a form (text, read as a number): 1 to 2^31 - 1 (else 422,
never a 500)."""

BodyId = Annotated[StrictInt, _ID_RANGE]
"""An id in a JSON body: a whole number (text, true or 1.0 is a 422), 1 to 2^31 - 1."""


def form_id(text: str, what: str) -> int | None:
    """An optional id typed in a form: None when empty, OptionError (400) when not an id.

    Examples
    --------
    >>> form_id(" 12 ", "the baseline"), form_id("", "the baseline")
    (12, None)
    """
    from rankscope.errors import OptionError

    text = text.strip()
    if not text:
        return None
    if not text.isdigit() or not 1 <= int(text) <= MAX_ID:
        raise OptionError(f"{what} is an evaluation's number, not {text[:40]!r}")
    return int(text)


@dataclass
class AppSettings:
    """What the routes need besides the request: the store, where files go, limits."""

    store: Store
    data_dir: Path
    boundary: Boundary
    """What the operator lets web users make the server do (files, variables, hosts)."""
    limiter: LoginLimiter = field(default_factory=LoginLimiter)
    runs: dict[int, threading.Thread] = field(default_factory=dict)
    """Evaluation runs going on in the background (pages start them, then poll)."""
    run_progress: dict[int, tuple[int, int]] = field(default_factory=dict)
    """Each background run's (queries answered, queries), which the status poll shows."""

    @property
    def irds(self) -> tuple[str, ...]:
        """The ir_datasets collections (name patterns) curators may use: query sets and
        embedded corpora named ``irds:NAME`` (``rankscope serve --irds``, the boundary's);
        none by default."""
        return self.boundary.irds


class LoginRequired(Exception):
    """A page needs a signed-in user: answered with a redirect to ``/login``.

    ``target`` is where the user comes back to after signing in: the page asked
    for; for a form sent (a POST), the page it was sent from unless ``exact``
    (a route naming the page itself, e.g. a grade kept for sending again).
    """

    def __init__(self, target: str, exact: bool = False) -> None:
        self.target = target
        self.exact = exact
        super().__init__(target)


def settings_of(request: Request) -> AppSettings:
    """The settings the app was made with."""
    settings: AppSettings = request.app.state.settings
    return settings


def page_actor(request: Request) -> Actor:
    """The user of a page (a session cookie), else a redirect to the sign-in page."""
    try:
        return resolve_session(settings_of(request).store, request.cookies.get(COOKIE))
    except AuthError:
        raise LoginRequired(request.url.path) from None


def api_actor(request: Request) -> Actor:
    """The user of an API call: ``Authorization: Bearer TOKEN`` (or a page's session)."""
    store = settings_of(request).store
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return resolve_token(store, header[7:].strip())
    if request.cookies.get(COOKIE):
        return resolve_session(store, request.cookies.get(COOKIE))
    raise AuthError("no credentials: send Authorization: Bearer TOKEN")


def maybe_page_actor(request: Request) -> Actor | None:
    """The user of a page, or None when the session has ended (the route says what next)."""
    try:
        return resolve_session(settings_of(request).store, request.cookies.get(COOKIE))
    except AuthError:
        return None


PageActor = Annotated[Actor, Depends(page_actor)]
MaybePageActor = Annotated[Actor | None, Depends(maybe_page_actor)]
ApiActor = Annotated[Actor, Depends(api_actor)]

_TEMPLATES: Jinja2Templates | None = None


def templates() -> Jinja2Templates:
    """The page templates (autoescaped), made once."""
    global _TEMPLATES
    if _TEMPLATES is None:
        folder = resources.files("rankscope.app") / "templates"
        _TEMPLATES = Jinja2Templates(directory=str(folder))
        _TEMPLATES.env.filters["markdown"] = markdown
        _TEMPLATES.env.filters["num"] = number
        _TEMPLATES.env.filters["http_url"] = http_url
        _TEMPLATES.env.filters["plural"] = plural
        _TEMPLATES.env.globals["scale_labels"] = scale_labels
    return _TEMPLATES


_URL_NOISE = str.maketrans("", "", "\t\n\r")


def http_url(value: Any) -> str:
    """A result's link as a page may use it: an http(s) URL, else "" (shown as text only).

    Browsers drop tabs and newlines anywhere in a URL and leading control
    characters and spaces, so ``java\tscript:`` and `` JaVaScRiPt:`` are the
    same scheme to them: the check runs on the URL as a browser reads it.

    Examples
    --------
    >>> http_url(" https://example.org/a?b=1")
    'https://example.org/a?b=1'
    >>> [http_url(u) for u in ("JaVaScRiPt:alert(1)", "java\tscript:x", "data:text/html,x",
    ...                         "vbscript:x", "/relative", "//evil.example/x")]
    ['', '', '', '', '', '']
    """
    if not isinstance(value, str):
        return ""
    text = value.translate(_URL_NOISE).strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b"
                                             "\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16"
                                             "\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
    scheme, sep, rest = text.partition(":")
    if sep and scheme.lower() in ("http", "https") and rest.startswith("//") and len(rest) > 2:
        return text
    return ""


def markdown(text: str | None) -> str:
    """Guidelines Markdown as HTML (raw HTML in the text is escaped, never passed through)."""
    from markdown_it import MarkdownIt
    from markupsafe import Markup

    renderer = MarkdownIt("commonmark", {"html": False}).enable("table")
    return Markup(renderer.render(text or ""))


def scale_labels(name: str | None) -> dict[str, str]:
    """The labels of a scale by grade (``{"0": "poor", ...}``); none for an unknown scale.

    Examples
    --------
    >>> scale_labels("binary")
    {'0': 'irrelevant', '1': 'relevant'}
    """
    from rankscope.errors import OptionError
    from rankscope.judgments.scales import get_scale

    try:
        scale = get_scale(name)
    except OptionError:
        return {}
    return {} if scale is None else {f"{g:g}": label for g, label in scale.labels}


def plural(count: Any, word: str, words: str | None = None) -> str:
    """A count and its noun, singular for one: ``1 result``, ``2 results``, ``0 queries``.

    Examples
    --------
    >>> plural(1, "result"), plural(2, "result"), plural(0, "query", "queries")
    ('1 result', '2 results', '0 queries')
    """
    return f"{count} {word if count == 1 else (words or word + 's')}"


def number(value: Any, digits: int = 4) -> str:
    """A metric for a page: 4 decimals, a dash for none."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def render(request: Request, name: str, context: dict[str, Any], status: int = 200,
           actor: Actor | None = None) -> HTMLResponse:
    """A page from its template, with the signed-in user."""
    return templates().TemplateResponse(request, name, {"actor": actor, **context},
                                        status_code=status)


_STATUS = ((AuthError, 401), (ForbiddenError, 403), (NotFoundError, 404), (ConflictError, 409))


def status_of(exc: RankscopeError) -> int:
    """The HTTP status of a service's error."""
    for kind, status in _STATUS:
        if isinstance(exc, kind):
            return status
    return 500 if isinstance(exc, AppError) else 400


def error_answer(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, RankscopeError):  # pragma: no cover - FastAPI passes ours only
        raise exc
    status = status_of(exc)
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": str(exc)}, status_code=status)
    if status == 401:
        return RedirectResponse(f"/login?next={request.url.path}", status_code=303)
    return render(request, "error.html", {"status": status, "message": str(exc)}, status)


def invalid_answer(request: Request, exc: Exception) -> Response:
    """A request the schema refuses: 422 naming each field and why, never echoing the value."""
    problems = []
    for error in getattr(exc, "errors", list)()[:10]:
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
        problems.append(f"{where or 'the body'}: {error.get('msg', 'invalid')}")
    message = "; ".join(problems) or "the request does not fit its schema"
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=422)
    return render(request, "error.html", {"status": 422, "message": message}, 422)


def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (no such route, a method not allowed): JSON under /api/,
    the app's error page for a browser."""
    status = exc.status_code if isinstance(exc, StarletteHTTPException) else 500
    detail = exc.detail if isinstance(exc, StarletteHTTPException) else "internal error"
    headers = getattr(exc, "headers", None)
    if request.url.path.startswith("/api/") or "text/html" not in request.headers.get(
            "accept", ""):
        return JSONResponse({"error": detail}, status_code=status, headers=headers)
    message = {404: f"There is no page at {request.url.path[:200]}.",
               405: "This address does not take that request."}.get(status, str(detail))
    return render(request, "error.html", {"status": status, "message": message}, status)


def _same_site_path(url: str | None, request: Request) -> str | None:
    """The path and query of a URL of this site (a Referer, htmx's current URL), else None."""
    from urllib.parse import urlsplit

    if not url:
        return None
    parts = urlsplit(url)
    if parts.netloc and parts.netloc != request.url.netloc:
        return None
    if not parts.path.startswith("/") or parts.path.startswith("//"):
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def login_redirect(request: Request, exc: Exception) -> Response:
    """To the sign-in page, then back where the user was: the page asked for, or for a
    form sent after the session ended, the page it was sent from (never a form's
    address, which a browser cannot open)."""
    from urllib.parse import quote

    target = exc.target if isinstance(exc, LoginRequired) else "/"
    exact = isinstance(exc, LoginRequired) and exc.exact
    htmx = bool(request.headers.get("hx-request"))
    if not exact and (htmx or request.method != "GET"):
        page = request.headers.get("hx-current-url") if htmx else request.headers.get("referer")
        target = _same_site_path(page, request) or ("/" if request.method != "GET" else target)
    login = f"/login?next={quote(target)}"
    if htmx:
        return Response(status_code=401, headers={"HX-Redirect": login})
    return RedirectResponse(login, status_code=303)
