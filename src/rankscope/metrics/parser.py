"""One parser for every metric spelling users bring.

Accepted, case-insensitively where the source tool is:

- canonical / ir_measures: ``nDCG@10``, ``P(rel=2)@5``, ``AP``, ``RR@10``,
  ``R@1000``, ``Judged@10``, ``ERR@20``, ``RBP(p=0.8)``,
  ``nDCG(dcg='exp-log2')@10``, ``F(beta=2)@10``, ``Best@5``, ``R_cap@100``;
- ranx: ``ndcg@10``, ``map@100``, ``mrr@10``, ``precision@5``, ``hits@10``,
  ``hit_rate@5``, ``f1@10``, ``r_precision``, ``bpref``, ``rbp.95``,
  ``dcg_burges@10``, ``ndcg_burges@10``, ``ndcg@10-l2`` (threshold suffix);
- trec_eval: ``ndcg_cut_10``, ``map_cut_100``, ``P_5``, ``recall_100``,
  ``recip_rank``, ``Rprec``, ``success_1``, ``set_F`` and the ``-m`` forms
  ``ndcg_cut.10,20`` and ``P.5,10`` (one name, several metrics).

Parameters are read with a restricted walk over :mod:`ast` literals; nothing is
ever evaluated. Unknown names get a "did you mean".
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable
from typing import Any

from rankscope.errors import MetricParameterError, UnknownMetricError
from rankscope.metrics import base
from rankscope.metrics.base import Metric, make_metric

__all__ = ["known_names", "parse_metric", "parse_metrics", "register_name"]

Builder = Callable[[dict[str, Any], "int | None"], Metric]

# name -> builder(params, k). Exact-case table first, then a lowercase one.
_EXACT: dict[str, Builder] = {}
_LOWER: dict[str, Builder] = {}
# trec_eval style "<base>_<k>" and "<base>.<k1>,<k2>" families.
_TREC_CUTOFF: dict[str, Callable[[int], Metric]] = {}
# Names that expand to several metrics (trec_eval nicknames, see trec_eval_names).
_EXPANSIONS: dict[str, Callable[[str], list[tuple[str, Metric]]]] = {}
# builder id -> the parameter a lone positional value binds to: RBP(0.9).
_FIRST: dict[int, str] = {}
# builder id -> the parameter "@x" binds to instead of a cut-off: IPrec@0.5 (a recall).
_AT: dict[int, str] = {}


def register_name(
    name: str, builder: Builder, *, case_sensitive: bool = False, first: str | None = None,
    at: str | None = None,
) -> None:
    """Teach the parser a spelling; ``builder(params, k)`` returns the metric.

    ``first`` names the parameter a single positional value binds to; ``at``
    the parameter ``@x`` sets instead of a cut-off.
    """
    if first is not None:
        _FIRST[id(builder)] = first
    if at is not None:
        _AT[id(builder)] = at
    _EXACT[name] = builder
    if not case_sensitive:
        _LOWER.setdefault(name.lower(), builder)


def register_trec_cutoff(base_name: str, build: Callable[[int], Metric]) -> None:
    """Teach the parser a trec_eval ``<base>_<k>`` / ``<base>.<k>,<k>`` spelling."""
    _TREC_CUTOFF[base_name] = build


def register_expansion(name: str, expand: Callable[[str], list[tuple[str, Metric]]]) -> None:
    """Teach the parser a name that stands for several metrics."""
    _EXPANSIONS[name] = expand


def _simple(family: str, **fixed: Any) -> Builder:
    def build(params: dict[str, Any], k: int | None) -> Metric:
        merged = {**fixed, **params}
        return make_metric(family, k=k, **merged)

    return build


def _ir_ndcg(params: dict[str, Any], k: int | None) -> Metric:
    """ir_measures' nDCG: ``dcg`` in {log2, exp-log2}, ``gains``, ``judged_only``."""
    params = dict(params)
    dcg = params.pop("dcg", None)
    if dcg is not None:
        choices = {"log2": "linear", "exp-log2": "exp"}
        if dcg not in choices:
            raise MetricParameterError(f"nDCG: dcg must be 'log2' or 'exp-log2', not {dcg!r}")
        params["gain"] = choices[dcg]
    return make_metric("nDCG", k=k, **params)


def _ir_num_ret(params: dict[str, Any], k: int | None) -> Metric:
    """ir_measures' NumRet: with ``rel`` it counts relevant retrieved (NumRet(rel=1))."""
    if "rel" in params:
        return make_metric("num_rel_ret", k=k, **params)
    return make_metric("num_ret", k=k, **params)


def _install_defaults() -> None:
    # Canonical names (and ir_measures', which they follow).
    for fam in ("P", "R", "R_cap", "Hits", "Success", "RPrec", "AP", "RR", "bpref",
                "Judged", "CG", "DCG", "ERR", "Best", "num_ret", "num_rel", "num_rel_ret"):
        register_name(fam, _simple(fam))
    register_name("F", _simple("F"), first="beta")
    register_name("nDCG", _ir_ndcg)
    # ir_measures' own spellings.
    for name, fam in (("Rprec", "RPrec"), ("Bpref", "bpref"), ("NumRel", "num_rel"),
                      ("NumRelRet", "num_rel_ret"), ("SetP", "P"), ("SetR", "R")):
        register_name(name, _simple(fam), case_sensitive=True)
    register_name("NumRet", _ir_num_ret, case_sensitive=True)
    register_name("RBP", _simple("RBP", gain="binary"), case_sensitive=True, first="p")
    # ranx (lowercase, as ranx spells them).
    for name, fam, fixed in (
        ("precision", "P", {}), ("recall", "R", {}), ("hits", "Hits", {}),
        ("hit_rate", "Success", {}), ("f1", "F", {}), ("r_precision", "RPrec", {}),
        ("mrr", "RR", {}), ("map", "AP", {}), ("dcg", "DCG", {}),
        ("dcg_burges", "DCG", {"gain": "exp"}), ("ndcg", "nDCG", {}),
        ("ndcg_burges", "nDCG", {"gain": "exp"}),
        ("success", "Success", {}), ("r_cap", "R_cap", {}), ("best", "Best", {}),
        ("cg", "CG", {}), ("err", "ERR", {}), ("judged", "Judged", {}),
    ):
        register_name(name, _simple(fam, **fixed))
    register_name("rbp", _simple("RBP", gain="grade"), case_sensitive=True, first="p")
    # trec_eval names without a cut-off.
    for name, fam in (("recip_rank", "RR"), ("Rprec", "RPrec"), ("bpref", "bpref"),
                      ("set_P", "P"), ("set_recall", "R")):
        register_name(name, _simple(fam), case_sensitive=True)
    for base_name, fam, fixed in (
        ("P", "P", {}), ("recall", "R", {}), ("ndcg_cut", "nDCG", {}),
        ("map_cut", "AP", {}), ("success", "Success", {}), ("num_rel_ret", "num_rel_ret", {}),
    ):
        register_trec_cutoff(base_name, _cutoff_builder(fam, fixed))


def _cutoff_builder(fam: str, fixed: dict[str, Any]) -> Callable[[int], Metric]:
    def build(k: int) -> Metric:
        return make_metric(fam, k=k, **fixed)

    return build


_FORM = re.compile(
    r"""^(?P<name>[A-Za-z_][A-Za-z0-9_]*)
        (?:\((?P<args>.*)\))?
        (?:@(?P<k>[^@]+?))?
        (?:-l(?P<lvl>[0-9]+(?:\.[0-9]+)?))?$""",
    re.VERBOSE,
)
_TREC_FORM = re.compile(r"^(?P<base>[A-Za-z_]+?)_(?P<k>[0-9]+)$")
_TREC_DOTTED = re.compile(r"^(?P<base>[A-Za-z_]+)\.(?P<ks>[0-9]+(?:,[0-9]+)*)$")
_RANX_P = re.compile(r"^rbp\.(?P<p>[0-9]+)(?:-l(?P<lvl>[0-9]+(?:\.[0-9]+)?))?$", re.IGNORECASE)
# Hyphenated names other tools accept (ranx: "r-precision"), mapped to ours.
_HYPHENATED = {"r-precision": "r_precision", "hit-rate": "hit_rate", "dcg-burges": "dcg_burges",
               "ndcg-burges": "ndcg_burges",
               # ndeval's intent-aware names
               "err-ia": "err_ia", "nerr-ia": "nerr_ia", "alpha-dcg": "alpha_dcg",
               "alpha-ndcg": "alpha_ndcg", "p-ia": "p_ia", "map-ia": "map_ia"}


def _literal(node: ast.AST, text: str) -> Any:
    """Value of a literal node: constants, negated numbers, dicts/tuples of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str | bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _literal(node.operand, text)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Dict):
        return {
            _literal(k, text): _literal(v, text)
            for k, v in zip(node.keys, node.values, strict=True)
            if k is not None
        }
    if isinstance(node, ast.Name):  # bare words: nDCG(gain=exp)
        return node.id
    raise UnknownMetricError(text, detail="parameters must be literal values like p=0.9")


def _parse_args(args: str, text: str) -> tuple[list[Any], dict[str, Any]]:
    if not args.strip():
        return [], {}
    # Bare hyphenated words (dcg=exp-log2) are quoted before parsing.
    quoted = re.sub(r"=\s*([A-Za-z][A-Za-z0-9_]*-[A-Za-z0-9_\-]+)", r"='\1'", args)
    try:
        tree = ast.parse(f"_({quoted})", mode="eval")
    except SyntaxError:
        raise UnknownMetricError(text, detail=f"cannot read parameters {args!r}") from None
    call = tree.body
    if not isinstance(call, ast.Call):
        raise UnknownMetricError(text, detail=f"cannot read parameters {args!r}")
    positional = [_literal(a, text) for a in call.args]
    keywords: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            raise UnknownMetricError(text, detail="** is not allowed in parameters")
        keywords[kw.arg] = _literal(kw.value, text)
    return positional, keywords


def _cutoff(token: str, text: str) -> int:
    try:
        value = float(token)
    except ValueError:
        raise MetricParameterError(
            f"{text}: cut-off must be a whole number, not {token!r}"
        ) from None
    if not math.isfinite(value) or value != int(value):  # nan, inf, 1e309: no whole number
        raise MetricParameterError(f"{text}: cut-off must be a whole number, not {token!r}")
    if value <= 0:
        raise MetricParameterError(f"{text}: cut-off must be >= 1, not {token}")
    return int(value)


def _lookup(name: str) -> Builder | None:
    return _EXACT.get(name) or _LOWER.get(name.lower())


def parse_metrics(text: str) -> list[tuple[str, Metric]]:
    """Parse one user-typed name into ``(label, metric)`` pairs.

    Most names give one pair labelled as typed; trec_eval's dotted forms
    (``ndcg_cut.10,20``) and nicknames give several, labelled the way
    trec_eval prints them (``ndcg_cut_10``, ``ndcg_cut_20``).

    Raises
    ------
    UnknownMetricError
        For a name no table knows, with close suggestions.
    MetricParameterError
        For a cut-off <= 0 or a parameter out of range.
    """
    raw = text
    text = text.strip()
    if not text:
        raise UnknownMetricError(raw, detail="empty name")
    if text in _EXPANSIONS:
        return _EXPANSIONS[text](text)
    for hyphenated, name in _HYPHENATED.items():
        if text.lower().startswith(hyphenated):
            text = name + text[len(hyphenated):]
    m = _RANX_P.match(text)
    if m:
        p = float("0." + m.group("p"))
        rel = float(m.group("lvl")) if m.group("lvl") else 1
        return [(raw, make_metric("RBP", p=p, gain="grade", rel=rel))]
    m = _TREC_DOTTED.match(text)
    if m and m.group("base") in _TREC_CUTOFF:
        build = _TREC_CUTOFF[m.group("base")]
        out = []
        for token in m.group("ks").split(","):
            k = _cutoff(token, text)
            out.append((f"{m.group('base')}_{k}", build(k)))
        return out
    m = _TREC_FORM.match(text)
    if m and m.group("base") in _TREC_CUTOFF and _lookup(text) is None:
        return [(raw, _TREC_CUTOFF[m.group("base")](_cutoff(m.group("k"), text)))]
    m = _FORM.match(text)
    if not m:
        raise UnknownMetricError(raw, _suggest(text), detail="not a metric name")
    builder = _lookup(m.group("name"))
    if builder is None:
        raise UnknownMetricError(raw, _suggest(m.group("name")))
    positional, params = _parse_args(m.group("args") or "", raw)
    if "k" in params and getattr(builder, "reads_k", False):  # scikit-learn's ndcg_score(k=3)
        params["k"] = _cutoff(str(params["k"]), raw)
    for clash in sorted({"k", "family_name"} & params.keys()  # make_metric's own arguments
                        - ({"k"} if getattr(builder, "reads_k", False) else set())):
        raise MetricParameterError(f"{raw}: no parameter {clash!r} (a cut-off is written "
                                   f"{m.group('name')}@k or cutoff=k)")
    if positional:
        if len(positional) > 1:
            raise UnknownMetricError(raw, detail="name parameters: RBO(p=0.9)")
        first = _first_param(builder)
        if first is None:
            raise UnknownMetricError(raw, detail="this metric takes named parameters only")
        params.setdefault(first, positional[0])
    if params.get("cutoff") is not None:
        params["cutoff"] = _cutoff(str(params["cutoff"]), raw)
    token = m.group("k")
    if token and id(builder) in _AT:  # IPrec@0.5: "@" sets a parameter, not a cut-off
        params[_AT[id(builder)]], token = token, None
    k = _cutoff(token, raw) if token else params.pop("cutoff", None)
    if m.group("lvl"):
        params["rel"] = float(m.group("lvl"))
    return [(raw, _checked_name(builder(params, k), raw))]


_RECALL_LEVELS = frozenset({"iprec_at_recall", "trec9_iprec_at_recall"})


def _checked_name(metric: Metric, text: str) -> Metric:
    """A metric typed by name, with the values a name may not hold refused.

    A relevance level below 0 would count every judged document, and a recall
    level outside [0, 1] never occurs: both are typing mistakes in a name
    (``P(rel=-5)@5``, ``IPrec@1.5``). The trec_eval command builds its measures
    without a name and keeps trec_eval's own reading of ``-l``.
    """
    values = dict(metric.params)
    rel = values.get("rel")
    if isinstance(rel, int | float) and not isinstance(rel, bool) and rel < 0:
        raise MetricParameterError(f"{text}: rel, the lowest grade counted as relevant, must "
                                   f"be >= 0, not {rel:g}")
    recall = values.get("p")
    if (metric.family in _RECALL_LEVELS and isinstance(recall, int | float)
            and not 0 <= recall <= 1):
        raise MetricParameterError(f"{text}: the recall level must be from 0 to 1, not "
                                   f"{recall:g}")
    return metric


def _first_param(builder: Builder) -> str | None:
    return _FIRST.get(id(builder))


def parse_metric(text: str | Metric) -> Metric:
    """Parse a name that stands for exactly one metric (see :func:`parse_metrics`)."""
    if isinstance(text, Metric):
        return text
    pairs = parse_metrics(text)
    if len(pairs) != 1:
        raise UnknownMetricError(text, detail=f"stands for {len(pairs)} metrics, expected one")
    return pairs[0][1]


def known_names() -> list[str]:
    """Every spelling the parser knows, for suggestions and listings."""
    names = set(_EXACT) | set(_EXPANSIONS)
    names |= {f"{b}_k" for b in _TREC_CUTOFF}
    names.add("rbp.P")
    return sorted(names)


def _suggest(name: str) -> list[str]:
    import difflib  # only when a name is unknown: not on every start-up

    pool = set(_EXACT) | set(_EXPANSIONS) | {f"{b}_10" for b in _TREC_CUTOFF}
    # Several spellings can share a lowercase form: prefer the canonical family name.
    canonical = {fam.lower(): fam for fam in base.FAMILIES}
    lowered: dict[str, str] = {}
    for p in sorted(pool):
        lowered.setdefault(p.lower(), canonical.get(p.lower(), p))
    close = difflib.get_close_matches(name.lower(), sorted(lowered), n=3, cutoff=0.6)
    return [lowered[c] for c in close]


_install_defaults()
_ = base  # the families must be registered before names resolve
