"""How the drop-in command stops: trec_eval's exit status and stderr text.

Scripts that call ``trec_eval`` test its exit status and often show its first
stderr line, so every failure of ``rankscope trec_eval`` carries both, exactly
as trec_eval 10.0 prints them (see ``docs/trec_eval.md`` for the table).
"""

from __future__ import annotations

from rankscope.errors import TrecEvalExit

__all__ = ["TrecEvalExit", "quit_in_file"]


def quit_in_file(message: str, path: str) -> TrecEvalExit:
    """A reader failure: its message, then trec_eval's ``Quit in file`` line (exit 2)."""
    return TrecEvalExit.in_file(message, path)
