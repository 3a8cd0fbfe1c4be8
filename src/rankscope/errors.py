"""The one exception hierarchy of rankscope.

Every error rankscope raises on purpose comes from this module, so callers can
catch :class:`RankscopeError` and the command line can turn any of them into a
one-line message and a non-zero exit code instead of a traceback::

    RankscopeError
    ├── InputError                  bad data: names the source, 1-based line, value
    │   ├── FileAccessError         missing, unreadable or binary file
    │   ├── ParseError              malformed line, non-numeric / non-finite value
    │   ├── DuplicateDocumentError  a document twice in one query's ranking
    │   ├── ScaleError              a grade outside the declared scale
    │   ├── ConfigError             a bad endpoint file or template (names the
    │   │                           file and the key)
    │   ├── OutboundError           a request the outbound rules refuse: a host
    │   │                           the server may not reach, a redirect that
    │   │                           would change the method or go too far
    │   └── NoOverlapError          no query of one input is in the other
    │                               (Q1 vs q1, 1.0 vs 1, an empty file)
    ├── OutputError                 a value the output format cannot hold
    │                               (a TREC id with whitespace)
    ├── OutputWriteError            an output could not be written (a full
    │                               disk, a missing directory): exit code 4
    ├── IncompleteError             work stopped before it was whole (a
    │                               budget, failed items): exit code 3
    ├── MetricError                 a metric that cannot be computed as asked
    │   ├── UnknownMetricError      a name no parser accepts ("did you mean")
    │   └── MetricParameterError    cut-off <= 0, p outside (0, 1), ...
    ├── OptionError                 an evaluation option with a bad value
    ├── DependencyError             an optional extra is not installed
    ├── JudgeError                  an LLM judging run cannot go on (endpoint
    │   │                           refuses or cannot be reached, bad prompt
    │   │                           template, unusable cache)
    │   ├── JudgeRequestError       one request failed after its retries
    │   └── JudgeUnreachableError   the endpoint stopped answering during a run
    ├── SearchError                 a search endpoint cannot be queried
    │   └── SearchRequestError      one query failed for good (names the query
    │                               and what the server said)
    ├── StoreError                  the store (the database) cannot be opened, or a
    │                               snapshot asked for is not in it
    ├── AppError                    the judging app refuses a request
    │   ├── AuthError               no or bad credentials (HTTP 401)
    │   ├── ForbiddenError          the user's role may not do this (HTTP 403)
    │   ├── NotFoundError           no such object among what the user may see (404)
    │   └── ConflictError           the state forbids it: a result graded enough,
    │                               a name taken (HTTP 409)
    └── TrecEvalExit                `rankscope trec_eval` stops as trec_eval would
                                    (exact stderr text and exit status)

    RankscopeWarning (UserWarning)  a documented, counted leniency
"""

from __future__ import annotations

__all__ = [
    "AppError",
    "AuthError",
    "ConfigError",
    "ConflictError",
    "DependencyError",
    "DuplicateDocumentError",
    "FileAccessError",
    "ForbiddenError",
    "IncompleteError",
    "InputError",
    "JudgeError",
    "JudgeRequestError",
    "JudgeUnreachableError",
    "MetricError",
    "MetricParameterError",
    "NoOverlapError",
    "NotFoundError",
    "OptionError",
    "OutboundError",
    "OutputError",
    "OutputWriteError",
    "ParseError",
    "RankscopeError",
    "RankscopeWarning",
    "ScaleError",
    "SearchError",
    "SearchRequestError",
    "StoreError",
    "TrecEvalExit",
    "UnknownMetricError",
]


class RankscopeError(Exception):
    """Base class of every error rankscope raises on purpose."""


class InputError(RankscopeError):
    """Bad input data.

    Parameters
    ----------
    message : str
        What is wrong, in words.
    source : str, optional
        The file name (or ``"<stdin>"``, ``"<dict>"``, ...).
    line : int, optional
        The 1-based line number in ``source``.
    value : str, optional
        The offending value or line, as read.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        value: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.value = value
        super().__init__(self._render())

    def _render(self) -> str:
        where = ""
        if self.source is not None:
            where = self.source
            if self.line is not None:
                where += f", line {self.line}"
            where += ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        text = where + self.message
        if self.value is not None:
            shown = self.value if len(self.value) <= 120 else self.value[:117] + "..."
            text += f": {shown!r}"
        return text


class FileAccessError(InputError):
    """A file that is missing, unreadable, a directory, or binary."""


class ParseError(InputError):
    """A malformed line or a value that is not what the format requires."""


class DuplicateDocumentError(InputError):
    """A document that appears twice in one query's ranking."""


class ScaleError(InputError):
    """A grade outside the declared grading scale."""


class ConfigError(InputError):
    """A bad endpoint file or template: names the file, the key and the value."""


class OutboundError(InputError):
    """A request the outbound rules refuse (see :mod:`rankscope.outbound`).

    A host the server's operator does not allow (a loopback, link-local,
    private or metadata address, by default, in the web app), or a redirect
    that would turn a POST into a GET (the engine would run another query),
    leave the http(s) schemes, or go on past the limit. Never retried.
    """


class NoOverlapError(InputError):
    """No query of one input is in the other, so every score would be a quiet 0.

    Raised by evaluation, comparison, reports, rank similarity and fusion
    (see :mod:`rankscope.data.overlap`); ``allow_no_overlap=True`` (on the
    command line ``--allow-no-overlap``) evaluates anyway.
    """


class OutputError(RankscopeError):
    """A value the output format cannot hold (e.g. a document id with a space in TREC).

    Parameters
    ----------
    message : str
        What cannot be written, and what to write instead.
    target : str, optional
        The file being written (``"<stdout>"`` for ``-``).
    """

    def __init__(self, message: str, *, target: str | None = None) -> None:
        self.target = target
        super().__init__(f"{target}: {message}" if target else message)


class OutputWriteError(RankscopeError):
    """An output that could not be written: the system refused (full disk, no such directory).

    Parameters
    ----------
    message : str
        What the system said.
    target : str, optional
        The file being written (``"<stdout>"`` for standard output).
    """

    def __init__(self, message: str, *, target: str | None = None) -> None:
        self.target = target
        super().__init__(f"cannot write {target}: {message}" if target else message)


class IncompleteError(RankscopeError):
    """Work that stopped before it was whole: a budget ran out, items failed.

    What was done is kept; the message says what is left and which option
    resumes it. The command line exits with code 3.
    """


class MetricError(RankscopeError):
    """A metric that cannot be computed as asked."""


class UnknownMetricError(MetricError):
    """A metric name that no parser accepts.

    Parameters
    ----------
    name : str
        The name as typed.
    suggestions : list of str
        Close known names, best first (may be empty).
    """

    def __init__(self, name: str, suggestions: list[str] | None = None, detail: str = "") -> None:
        self.name = name
        self.suggestions = list(suggestions or [])
        text = f"unknown metric {name!r}"
        if detail:
            text += f" ({detail})"
        if self.suggestions:
            text += "; did you mean " + " or ".join(repr(s) for s in self.suggestions[:3]) + "?"
        super().__init__(text)


class MetricParameterError(MetricError):
    """A metric parameter out of its range (cut-off <= 0, p outside (0, 1), ...)."""


class OptionError(RankscopeError):
    """An evaluation option with a value it cannot take."""


class DependencyError(RankscopeError):
    """An optional dependency (an extra) is needed but not installed."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{purpose} needs the optional package {package!r}: "
            f"pip install 'rankscope[{extra}]'"
        )


class JudgeError(RankscopeError):
    """An LLM judging run that cannot go on.

    The endpoint refuses every request (401, 403, 404), a prompt template does
    not compile or render, or the cache file is unusable. What was graded
    before the error is saved.
    """


class JudgeRequestError(JudgeError):
    """One request to a model endpoint failed after its retries.

    Parameters
    ----------
    message : str
        What went wrong (status and the start of the body, or the network error).
    status : int, optional
        The last HTTP status (None for a timeout or a connection error).
    attempts : int
        How many requests were sent.
    """

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        self.status = status
        self.attempts = attempts
        super().__init__(message)


class JudgeUnreachableError(JudgeError):
    """The endpoint stopped answering during a judging run.

    Raised after a number of requests in a row got no HTTP answer at all
    (connection refused or reset, timeouts) once the endpoint had answered:
    the run stops there instead of failing every pair left, keeps what it
    graded, and a rerun continues (the command line exits with code 3).
    """


class SearchError(RankscopeError):
    """A search endpoint that cannot be queried (or an engine index that cannot be built)."""


class SearchRequestError(SearchError):
    """One query failed for good: a non-retryable answer, or retries spent.

    Parameters
    ----------
    query_id : str
        The query that failed.
    message : str
        What happened, with what the server said (one line).
    status : int, optional
        The last HTTP status (None for a timeout or a connection error).
    attempts : int
        How many requests were sent for this query.
    """

    def __init__(
        self, query_id: str, message: str, *, status: int | None = None, attempts: int = 1
    ) -> None:
        self.query_id = query_id
        self.status = status
        self.attempts = attempts
        super().__init__(f"query {query_id}: {message}")


class StoreError(RankscopeError):
    """The store (the database) cannot be opened or migrated, or a snapshot is not in it."""


class AppError(RankscopeError):
    """The judging app (or a service under it) refuses a request."""


class AuthError(AppError):
    """No credentials, or credentials that do not sign anyone in."""


class ForbiddenError(AppError):
    """The signed-in user's role may not do this."""


class NotFoundError(AppError):
    """No such object among those the user may see (another project's objects included)."""


class ConflictError(AppError):
    """The current state forbids the change (a result already graded enough, a name taken)."""


class TrecEvalExit(RankscopeError):
    """trec_eval would stop here with ``status`` after writing ``stderr``.

    Parameters
    ----------
    stderr : str
        The complete text trec_eval writes to stderr (with its newlines; a
        few of trec_eval's messages lack the final one and are kept so).
    status : int
        The process exit status.
    """

    @classmethod
    def in_file(cls, message: str, path: str) -> TrecEvalExit:
        """A reader failure: its message, then trec_eval's ``Quit in file`` line (exit 2)."""
        return cls(f"{message}\ntrec_eval: Quit in file '{path}'\n", 2)

    def __init__(self, stderr: str, status: int) -> None:
        self.stderr = stderr
        self.status = status
        super().__init__(stderr.splitlines()[0] if stderr else f"exit status {status}")


class RankscopeWarning(UserWarning):
    """A documented leniency was applied (counted and shown, never silent)."""
