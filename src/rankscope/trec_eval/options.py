"""trec_eval's command line, read exactly as GNU ``getopt_long`` reads it.

Short options ``hvqm:cl:nD:JN:M:R:T:oZ:``: values may be attached (``-l2``,
``-mP.5``) or separate (``-m P.5``), flags may be grouped (``-qc``), options
may follow the file names (argument permutation), ``--`` ends the options and
a lone ``-`` is a file name (the run on stdin). Long options take
``--name=value`` or ``--name value`` and any unambiguous prefix of the name.
Options act in the order given: ``-v`` exits at once, a bad ``-m`` exits at
once, ``-h`` acts after all options are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rankscope.data.cnum import LONG_MAX, atol
from rankscope.engine.options import EvalOptions
from rankscope.trec_eval.catalog import expand
from rankscope.trec_eval.exits import TrecEvalExit

__all__ = ["USAGE", "VERSION", "Options", "parse_args"]

VERSION = "10.0-rc3"  # what trec_eval 10.0 prints: its Makefile was never bumped
USAGE = (
    "Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file\n"
    "   -h: Give full help information, including other options\n"
    "   -q: In addition to summary evaluation, give evaluation for each query\n"
    "   -m: calculate and print measures indicated by 'measure'\n"
    "       ('-m all_qrels' prints all qrels measures, '-m official' is default)\n"
)
_PROG = "trec_eval"
_SHORT_WITH_VALUE = set("mlDNMRTZ")
_SHORT_FLAGS = set("hvqcnJo")
# (long name, takes a value, short equivalent), in trec_eval's table order.
_LONG: tuple[tuple[str, bool, str], ...] = (
    ("help", False, "h"),
    ("version", False, "v"),
    ("query_eval_wanted", False, "q"),
    ("measure", True, "m"),
    ("complete_rel_info_wanted", False, "c"),
    ("level_for_rel", True, "l"),
    ("nosummary", False, "n"),
    ("Debug_level", True, "D"),
    ("Judged_docs_only", False, "J"),
    ("Number_docs_in_coll", True, "N"),
    ("Max_retrieved_per_topic", True, "M"),
    ("Rel_info_format", True, "R"),
    ("Results_format", True, "T"),
    ("Output_old_results_format", True, "o"),
    ("Zscore", True, "Z"),
)


@dataclass
class Options:
    """Everything trec_eval's options set (defaults as in trec_eval 10.0)."""

    query: bool = False
    complete: bool = False
    level: int = 1
    summary: bool = True
    debug_level: int = 0
    debug_query: str | None = None
    judged_only: bool = False
    n_docs: int = 0
    max_ret: int = LONG_MAX
    rel_format: str = "qrels"
    results_format: str = "trec_results"
    zscore_file: str | None = None
    help: bool = False
    marked: set[str] = field(default_factory=set)
    measure_params: dict[str, str] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)

    def evaluation(self) -> EvalOptions:
        """The options every driver shares, as ``-c``, ``-J`` and ``-l`` set them.

        Ties are trec_eval's; ``-c`` evaluates every qrels query (a query the
        run lacks gets trec_eval's stand-in ranking), without it a query the
        run lacks stops the command when reached; ``-J`` is ``condensed``;
        ``-l`` is the relevance threshold.
        """
        return EvalOptions(
            ties="trec",
            unjudged="condensed" if self.judged_only else "nonrelevant",
            queries="qrels" if self.complete else "intersection",
            rel=self.level,  # an int: exact even for levels beyond 2**53
        )

    def mark(self, text: str) -> None:
        """Apply one ``-m`` value: split off parameters, mark the measure(s).

        Raises
        ------
        TrecEvalExit
            ``illegal measure`` (status 1) for an unknown name or an empty
            parameter string, as trec_eval does while reading options.
        """
        name, dot, params = text.partition(".")
        message = ""
        if dot:
            if not params:
                message = f"{_PROG}: improper measure in parameter '{name}'\n"
                raise TrecEvalExit(message + f"{_PROG}: illegal measure '{name}'\n", 1)
            # The first parameters given for a name win.
            self.measure_params.setdefault(name, params)
        members = expand(name)
        if members is None:
            raise TrecEvalExit(f"{_PROG}: illegal measure '{name}'\n", 1)
        self.marked.update(members)


def _usage_error(message: str) -> TrecEvalExit:
    return TrecEvalExit(f"{_PROG}: {message}\n{USAGE}", 1)


def _apply(opts: Options, short: str, value: str | None) -> None:
    if short == "h":
        opts.help = True
    elif short == "v":
        raise TrecEvalExit(f"trec_eval version {VERSION}\n", 0)
    elif short == "q":
        opts.query = True
    elif short == "c":
        opts.complete = True
    elif short == "n":
        opts.summary = False
    elif short == "J":
        opts.judged_only = True
    elif short == "o":
        pass  # obsolete in trec_eval; accepted and ignored
    elif value is not None:
        _apply_value(opts, short, value)


def _apply_value(opts: Options, short: str, value: str) -> None:
    if short == "m":
        opts.mark(value)
    elif short == "l":
        opts.level = atol(value)
    elif short == "D":
        level, dot, query = value.partition(".")
        opts.debug_query = query if dot else None
        opts.debug_level = atol(level)
    elif short == "N":
        opts.n_docs = atol(value)
    elif short == "M":
        opts.max_ret = atol(value)
    elif short == "R":
        opts.rel_format = value
    elif short == "T":
        opts.results_format = value
    elif short == "Z":
        opts.zscore_file = value


def _long_option(arg: str) -> tuple[str, bool, str]:
    body = arg[2:]
    name = body.split("=", 1)[0]
    exact = [opt for opt in _LONG if opt[0] == name]
    if exact:
        return exact[0]
    found = [opt for opt in _LONG if opt[0].startswith(name)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise _usage_error(f"unrecognized option '{arg}'")
    choices = " ".join(f"'--{opt[0]}'" for opt in found)
    raise _usage_error(f"option '--{name}' is ambiguous; possibilities: {choices}")


def parse_args(argv: list[str]) -> Options:
    """Read trec_eval's arguments (without the program name).

    Raises
    ------
    TrecEvalExit
        For ``-v`` (status 0, the version on stderr) and for every error
        getopt or trec_eval reports while reading options (status 1).
    """
    opts = Options()
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            opts.files.extend(argv[i:])
            break
        if arg.startswith("--"):
            long_name, wants_value, short = _long_option(arg)
            _name, eq, attached = arg[2:].partition("=")
            value: str | None = None
            if wants_value:
                if eq:
                    value = attached
                elif i < len(argv):
                    value = argv[i]
                    i += 1
                else:
                    raise _usage_error(f"option '--{long_name}' requires an argument")
            elif eq:
                raise _usage_error(f"option '--{long_name}' doesn't allow an argument")
            _apply(opts, short, value)
            continue
        if not arg.startswith("-") or arg == "-":
            opts.files.append(arg)
            continue
        j = 1
        while j < len(arg):
            c = arg[j]
            j += 1
            if c in _SHORT_FLAGS:
                _apply(opts, c, None)
            elif c in _SHORT_WITH_VALUE:
                if j < len(arg):
                    value = arg[j:]
                elif i < len(argv):
                    value = argv[i]
                    i += 1
                else:
                    raise _usage_error(f"option requires an argument -- '{c}'")
                _apply(opts, c, value)
                break
            else:
                raise _usage_error(f"invalid option -- '{c}'")
    return opts
