"""Student's t distribution worked out by scipy in a helper process.

A paired t-test's p-value is ``2 * scipy.special.stdtr(n - 1, -|t|)`` and its
interval takes ``scipy.special.stdtrit``. Importing :mod:`scipy.special` costs
about 0.26 s of CPU (most of it scipy's ``array_api_compat`` reading every
attribute of numpy, which imports ``numpy.f2py``, ``numpy.ma`` and
``numpy.testing``). On a thread of the comparing process that import holds the
interpreter lock beside the thread measuring the runs: a command comparing a
track's worth of runs spent about 0.1 s of its wall time on it.
:func:`serving` starts a second Python process that imports
:mod:`scipy.special` meanwhile (while this one imports its own modules and
reads the runs) and then answers ``stdtr`` and ``stdtrit`` for arrays sent
over a pipe (it loads only the extension module of :mod:`scipy.special` that
defines them, whose ufuncs ``scipy.special.stdtr`` and ``stdtrit`` are): the
values are scipy's, computed by the same ufunc loop on the same float64
arguments and returned as their bytes, so they are the bits an
import in this process would give. A comparison asks for a metric's values
in one request (:meth:`THelper.prefetch`) before testing its pairs one by one; a
comparison of several metrics asks for all of them at once, as soon as the runs are
measured (while the bootstrap intervals are worked out), and then finds them kept.

When the helper cannot start, cannot import scipy or stops answering,
:meth:`THelper.values` answers ``None`` and the caller imports scipy.special
itself (which raises :class:`~rankscope.errors.DependencyError` without
scipy). Library calls never start a helper by themselves: a second process
pays its own imports (about 0.2 s of CPU) and only pays off once in a
command; the command line's ``compare`` and ``report`` open one around their
work.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["THelper", "current", "serving"]

# The helper's program: "R" once scipy.special is imported (or "E" if it cannot be),
# then for each request ("p" for stdtr or "i" for stdtrit, n as 8 bytes little-endian,
# n degrees of freedom and n points as float64) the n values as float64; it ends at the
# end of its input, without the interpreter's teardown (nothing to clean up). Whatever goes
# wrong in it (an import, a stand-in scipy would have needed) makes it answer "E" or
# end, and the comparing process imports scipy.special itself.
_PROGRAM = """\
import os, sys
SKIPPED = ("f2py", "testing", "ma", "random", "polynomial", "ctypeslib", "fft", "char",
           "rec", "strings")
def serve():
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    try:
        import types
        import numpy as np
        # scipy's array_api_compat copies every public attribute of numpy at import, which
        # imports these submodules of numpy (0.1 s of CPU) though stdtr uses none of them:
        # here they are empty stand-ins (an import of one by name still loads the real one)
        for name in SKIPPED:
            if "numpy." + name not in sys.modules:
                setattr(np, name, types.ModuleType("numpy." + name))
        try:
            # the module of scipy.special that defines the two ufuncs, without the package's
            # __init__ (its other functions and their array-API wrappers: 0.05 s of CPU);
            # scipy.special.stdtr is this ufunc (tests/compare/test_t_helper.py)
            import scipy
            special = types.ModuleType("scipy.special")
            special.__path__ = [os.path.join(os.path.dirname(scipy.__file__), "special")]
            sys.modules["scipy.special"] = special
            from scipy.special._ufuncs import stdtr, stdtrit
        except BaseException:  # another layout: the whole package
            for name in [m for m in sys.modules if m.startswith("scipy.special")]:
                del sys.modules[name]
            from scipy.special import stdtr, stdtrit
    except BaseException:
        out.write(b"E")
        out.flush()
        return
    out.write(b"R")
    out.flush()
    while True:
        head = inp.read(9)
        if len(head) != 9 or head[:1] not in (b"p", b"i"):
            return
        n = int.from_bytes(head[1:], "little")
        body = inp.read(16 * n)
        if len(body) != 16 * n:
            return
        args = np.frombuffer(body, dtype=np.float64).reshape(2, n)
        values = (stdtr if head[:1] == b"p" else stdtrit)(args[0], args[1])
        out.write(np.ascontiguousarray(values, dtype=np.float64).tobytes())
        out.flush()
try:
    serve()
finally:
    os._exit(0)
"""

_OPS = {"stdtr": b"p", "stdtrit": b"i"}
_current: THelper | None = None


class THelper:
    """A running helper process answering ``stdtr`` and ``stdtrit`` (see the module docstring).

    Values asked for ahead (:meth:`prefetch`: one request for many) are kept and answered
    from memory; the others cost a request each.
    """

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process
        self._ready: bool | None = None  # None: its first byte not read yet
        self._known: dict[tuple[str, bytes], float] = {}

    def prefetch(self, name: str, df: Any, x: Any) -> None:
        """Ask for ``name(df, x)`` (``"stdtr"`` or ``"stdtrit"``, 1-D arrays) in one request
        and keep the values for :meth:`values`; pairs known already (or given twice) are
        not asked again, and nothing is asked when all are known."""
        import numpy as np

        args = np.stack((np.asarray(df, dtype=np.float64), np.asarray(x, dtype=np.float64)))
        keys = dict.fromkeys(pair.tobytes() for pair in args.T)  # in order, once each
        wanted = [key for key in keys if (name, key) not in self._known]
        if not wanted:
            return
        if len(wanted) < args.shape[1]:
            args = np.frombuffer(b"".join(wanted), dtype=np.float64).reshape(-1, 2).T
        got = self._ask(name, args)
        if got is not None:
            for key, value in zip(wanted, got.tolist(), strict=True):
                self._known[name, key] = value

    def values(self, name: str, df: Any, x: Any) -> Any:
        """``name(df, x)`` as scipy.special's ufunc gives it (broadcast; a float64 scalar
        for scalars); None if the helper cannot answer."""
        import numpy as np

        d, p = np.broadcast_arrays(np.asarray(df, dtype=np.float64),
                                   np.asarray(x, dtype=np.float64))
        args = np.stack((d.ravel(), p.ravel()))
        keys = [(name, pair.tobytes()) for pair in args.T]
        if not all(key in self._known for key in keys):
            self.prefetch(name, args[0], args[1])
            if not all(key in self._known for key in keys):
                return None
        out = np.array([self._known[key] for key in keys], dtype=np.float64).reshape(d.shape)
        return out[()]

    def _ask(self, name: str, args: Any) -> Any:
        import numpy as np

        process = self._process
        if self._ready is False or process.stdin is None or process.stdout is None:
            return None
        n = args.shape[1]
        try:
            if self._ready is None:
                self._ready = process.stdout.read(1) == b"R"
                if not self._ready:
                    return None
            process.stdin.write(_OPS[name] + n.to_bytes(8, "little")
                                + np.ascontiguousarray(args).tobytes())
            process.stdin.flush()
            reply = process.stdout.read(8 * n)
        except (OSError, ValueError):  # it ended: a closed pipe
            reply = b""
        if len(reply) != 8 * n:
            self._ready = False
            return None
        return np.frombuffer(reply, dtype=np.float64)

    def close(self) -> None:
        """End the helper (the end of its input) and wait for it; killed if it does not end."""
        process = self._process
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _start() -> THelper | None:
    try:
        process = subprocess.Popen(
            [sys.executable, "-P", "-c", _PROGRAM], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True)
    except (OSError, ValueError):
        return None
    return THelper(process)


@contextlib.contextmanager
def serving(start: bool = True) -> Iterator[THelper | None]:
    """Within the block, :func:`current` is a helper process started here (if ``start``
    and scipy.special is not loaded yet); it is ended on leaving."""
    global _current
    helper = _start() if start and "scipy.special" not in sys.modules else None
    previous, _current = _current, helper
    try:
        yield helper
    finally:
        _current = previous
        if helper is not None:
            helper.close()


def current() -> THelper | None:
    """The helper of the innermost :func:`serving` block, if any."""
    return _current
