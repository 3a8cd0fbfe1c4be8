"""The Arrow string views of a polars string Series, read as numpy bytes.

Polars holds strings as Arrow's variable-size binary views: 16 bytes a
string, its length (a 32-bit integer) then, for a string of at most 12 bytes,
the string itself, the rest zero (the Arrow format's rule for inline views);
longer strings hold a prefix and where the rest lies. Reading the views
through the Arrow C stream interface (``Series.__arrow_c_stream__``, polars'
public export: no copy of the strings) costs about 20 us for ten thousand
strings, where polars' own expressions (their byte lengths, their text
joined) cost 60-300 us each: :func:`string_views` gives them as one array.
"""

from __future__ import annotations

import ctypes

import numpy as np
import numpy.typing as npt
import polars as pl

__all__ = ["INLINE_BYTES", "VIEW_BYTES", "string_views"]

VIEW_BYTES = 16
"""Bytes of one view."""
INLINE_BYTES = 12
"""Longest string a view holds itself (after its 4-byte length)."""
_UTF8_VIEW = b"vu"
"""The Arrow C data interface's format of a UTF-8 view array."""


class _Schema(ctypes.Structure):
    """The Arrow C data interface's ``struct ArrowSchema``."""

    _fields_ = [("format", ctypes.c_char_p), ("name", ctypes.c_char_p),
                ("metadata", ctypes.c_char_p), ("flags", ctypes.c_int64),
                ("n_children", ctypes.c_int64), ("children", ctypes.c_void_p),
                ("dictionary", ctypes.c_void_p), ("release", ctypes.c_void_p),
                ("private_data", ctypes.c_void_p)]


class _Array(ctypes.Structure):
    """The Arrow C data interface's ``struct ArrowArray``."""

    _fields_ = [("length", ctypes.c_int64), ("null_count", ctypes.c_int64),
                ("offset", ctypes.c_int64), ("n_buffers", ctypes.c_int64),
                ("n_children", ctypes.c_int64), ("buffers", ctypes.POINTER(ctypes.c_void_p)),
                ("children", ctypes.c_void_p), ("dictionary", ctypes.c_void_p),
                ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p)]


_RELEASE_SCHEMA = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Schema))
_RELEASE_ARRAY = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Array))


class _Stream(ctypes.Structure):
    """The Arrow C stream interface's ``struct ArrowArrayStream``."""

    _fields_ = [("get_schema", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p,
                                                ctypes.POINTER(_Schema))),
                ("get_next", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p,
                                              ctypes.POINTER(_Array))),
                ("get_last_error", ctypes.c_void_p), ("release", ctypes.c_void_p),
                ("private_data", ctypes.c_void_p)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def string_views(strings: pl.Series) -> npt.NDArray[np.uint8] | None:
    """The views of ``strings`` (a String Series without nulls), one row of
    :data:`VIEW_BYTES` bytes each, in order.

    Parameters
    ----------
    strings : polars.Series
        A String Series; a null's view holds nothing meaningful (the caller
        leaves out Series with nulls).

    Returns
    -------
    numpy.ndarray or None
        A (len, 16) uint8 array, a copy: bytes 0-3 each string's length in
        bytes (native byte order), 4-15 a string of at most
        :data:`INLINE_BYTES` bytes then zeros, or for a longer string its
        first 4 bytes and where the rest lies. None when polars exports
        another layout than UTF-8 views (or has no Arrow C stream export).
    """
    export = getattr(strings, "__arrow_c_stream__", None)  # absent from early polars 1.x
    if export is None:
        return None
    capsule = export()
    at = _capsule_pointer(capsule, b"arrow_array_stream")
    stream = _Stream.from_address(at)
    schema = _Schema()
    if stream.get_schema(at, ctypes.byref(schema)):
        return None
    layout = schema.format
    _RELEASE_SCHEMA(schema.release)(ctypes.byref(schema))
    if layout != _UTF8_VIEW:
        return None
    parts = []
    while True:  # one array a chunk; the capsule releases the stream when let go
        array = _Array()
        if stream.get_next(at, ctypes.byref(array)):
            return None
        if not array.release:  # the end of the stream
            break
        try:
            if array.length:
                first, n = array.offset, array.length
                held = (ctypes.c_uint8 * (VIEW_BYTES * (first + n))).from_address(
                    array.buffers[1])
                parts.append(np.frombuffer(held, np.uint8).reshape(-1, VIEW_BYTES)[first:].copy())
        finally:
            _RELEASE_ARRAY(array.release)(ctypes.byref(array))
    if not parts:
        return np.zeros((0, VIEW_BYTES), np.uint8)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)
