"""The judging web app (``rankscope serve``): FastAPI, server-rendered pages, htmx.

Needs the ``app`` extra. Routes are thin over :mod:`rankscope.services`;
:func:`rankscope.app.factory.create_app` makes the ASGI application over an
open store::

    from rankscope.app.factory import create_app
    from rankscope.store.db import ThreadWriter, open_store

    app = create_app(open_store("judging.sqlite", writer=ThreadWriter()), data_dir=".")
"""

from rankscope.errors import DependencyError

try:  # every module of the app needs these; say which extra to install, once, here
    import fastapi as _fastapi  # noqa: F401
    import jinja2 as _jinja2  # noqa: F401
    import python_multipart as _multipart  # noqa: F401
except ImportError as _missing:
    raise DependencyError(_missing.name or "fastapi", "app", "the web app") from None
