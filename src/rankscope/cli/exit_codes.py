"""The exit codes every ``rankscope`` command shares (``trec_eval`` keeps trec_eval's own).

===  =====================================================================
0    done
1    a check or gate failed (``check`` found a regression)
2    bad input or usage: nothing was done, or the input was refused
3    incomplete: work stopped by a budget or an interruption, or some items
     failed (``judge`` pairs, ``snapshot`` queries); the output so far is kept
4    an output could not be written (a full disk, a missing directory)
70   an internal error: one line, the traceback only with ``--debug``
===  =====================================================================

Errors map to codes here, once: a command raises, :func:`code_for` decides.
"""

from __future__ import annotations

from rankscope.errors import IncompleteError, OutputWriteError, RankscopeError

__all__ = [
    "EXIT_CHECK_FAILED",
    "EXIT_INCOMPLETE",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_OUTPUT",
    "EXIT_USAGE",
    "code_for",
]

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3
EXIT_OUTPUT = 4
EXIT_INTERNAL = 70


def code_for(exc: BaseException) -> int:
    """The exit code of a command that ended with ``exc``.

    Examples
    --------
    >>> from rankscope.errors import ParseError
    >>> code_for(ParseError("bad line")), code_for(IncompleteError("3 of 9 left"))
    (2, 3)
    >>> code_for(OutputWriteError("No space left on device", target="out.csv"))
    4
    >>> code_for(ZeroDivisionError())
    70
    """
    if isinstance(exc, IncompleteError):
        return EXIT_INCOMPLETE
    if isinstance(exc, OutputWriteError):
        return EXIT_OUTPUT
    if isinstance(exc, RankscopeError):
        return EXIT_USAGE
    return EXIT_INTERNAL
