"""Every table of the store, gathered: what the alembic migrations build and are checked
against (:data:`metadata`).

Importing this module imports every model module; code that reads or writes a
few tables imports their own module instead.
"""

from __future__ import annotations

from sqlalchemy import MetaData

from rankscope.store import llm_cache, models, models_app
from rankscope.store.base import Base

__all__ = ["MODEL_MODULES", "metadata"]

MODEL_MODULES = (models, models_app, llm_cache)
"""The modules declaring the store's tables."""

metadata: MetaData = Base.metadata
"""The metadata of every table (the model modules above are imported)."""
