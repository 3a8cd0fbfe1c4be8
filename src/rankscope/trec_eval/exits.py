"""How the drop-in command stops: trec_eval's exit status and stderr text.

Scripts that call ``trec_eval`` test its exit status and often show its first
stderr line, so every failure of ``rankscope trec_eval`` carries both, exactly
as trec_eval 10.0 prints them (see ``docs/trec_eval.md`` for the table).
"""

from __future__ import annotations

from rankscope.errors import RankscopeError

__all__ = ["TrecEvalExit", "quit_in_file"]


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

    def __init__(self, stderr: str, status: int) -> None:
        self.stderr = stderr
        self.status = status
        super().__init__(stderr.splitlines()[0] if stderr else f"exit status {status}")


def quit_in_file(message: str, path: str) -> TrecEvalExit:
    """A reader failure: its message, then trec_eval's ``Quit in file`` line (exit 2)."""
    return TrecEvalExit(f"{message}\ntrec_eval: Quit in file '{path}'\n", 2)
