"""The API's input models derived from the services' specs: one definition of each field.

A service's spec (:class:`~rankscope.services.campaigns.EvaluationSpec`,
:class:`~rankscope.services.llm_judges.JudgeSpec`) declares each field with
:func:`~rankscope.services.limits.spec_field`: its meaning, its text limit, its
most items, whether it is an id. :func:`schema_of` turns such a spec into the
pydantic model a JSON body is read with: the same names, types, defaults and
limits (a text too long, an unknown field, a number given as text: 422 naming
the field), the meaning as the field's description in the OpenAPI document. A
sequence of another spec (a batch's grades) is a list of that spec's model, as
long as the field's ``items`` allows.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StringConstraints,
    create_model,
)

from rankscope.app.core import BodyId

__all__ = ["Schema", "schema_of"]


class Schema(BaseModel):
    """Every request body: a field the schema does not name is refused (422), never ignored."""

    model_config = ConfigDict(extra="forbid")


def _text(limit: int | None, where: str) -> Any:
    if limit is None:
        raise TypeError(f"{where}: a text field of a spec needs its limit (spec_field(limit=))")
    return Annotated[str, StringConstraints(max_length=limit)]


def _annotation(kind: Any, meta: Mapping[str, Any], where: str) -> Any:
    args = typing.get_args(kind)
    if typing.get_origin(kind) in (typing.Union, types.UnionType) and type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        return _annotation(inner, meta, where) | None
    if kind is bool:
        return StrictBool
    if kind is int:
        return BodyId if meta.get("is_id") else StrictInt
    if kind is float:  # a number, whole or not; true is not one
        return StrictFloat | StrictInt
    if kind is str:
        return _text(meta.get("limit"), where)
    origin = typing.get_origin(kind)
    if origin in (Sequence, list, tuple) and args and args[0] is str:
        return list[_text(meta.get("limit"), where)]  # type: ignore[misc]
    if (origin in (Sequence, list, tuple) and args and isinstance(args[0], type)
            and dataclasses.is_dataclass(args[0])):
        return list[_model_of(args[0])]  # type: ignore[misc]
    if origin in (Mapping, dict) and args == (str, str):
        key = _text(meta.get("key_limit") or meta.get("limit"), where)
        return dict[key, _text(meta.get("limit"), where)]  # type: ignore[misc, valid-type]
    raise TypeError(f"{where}: no API type for {kind!r}")


_MODELS: dict[type, type[Schema]] = {}
"""Each spec's model, made once: a spec named by another (a batch's grades) is the same
model in the OpenAPI document as the body it is on its own."""


def _model_of(spec: type) -> type[Schema]:
    """The model of a spec inside another: the one made already, or one named after it
    (``GradeInput`` -> ``GradeIn``)."""
    if spec not in _MODELS:
        stem = spec.__name__.removesuffix("Spec").removesuffix("Input")
        schema_of(spec, f"{stem}In")
    return _MODELS[spec]


def schema_of(spec: type, name: str) -> type[Schema]:
    """The input model of a spec dataclass (every field declared with ``spec_field``).

    Examples
    --------
    >>> from rankscope.services.llm_judges import JudgeSpec
    >>> JudgeIn = schema_of(JudgeSpec, "JudgeIn")
    >>> JudgeIn(endpoint="http://127.0.0.1:8080/v1", model="m").max_calls
    200
    >>> JudgeIn.model_fields["model"].description
    "The model's name."
    """
    # a spec module names Sequence and Mapping for type checking only
    hints = typing.get_type_hints(spec, localns={"Sequence": Sequence, "Mapping": Mapping})
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(spec):
        meta = f.metadata
        if "doc" not in meta:
            raise TypeError(f"{spec.__name__}.{f.name} is not declared with spec_field")
        kind = _annotation(hints[f.name], meta, f"{spec.__name__}.{f.name}")
        options: dict[str, Any] = {"description": meta["doc"]}
        if meta.get("items") is not None:
            options["max_length"] = meta["items"]
        if f.default is not dataclasses.MISSING:
            default = f.default
            if isinstance(default, tuple):
                options["default_factory"] = lambda d=default: list(d)
            else:
                options["default"] = default
        elif f.default_factory is not dataclasses.MISSING:
            options["default_factory"] = f.default_factory
        fields[f.name] = (kind, Field(**options))
    model: type[Schema] = create_model(name, __base__=Schema, **fields)
    model.__doc__ = (spec.__doc__ or "").split("\n\n")[0]
    _MODELS.setdefault(spec, model)
    return model
