"""``rankscope judge``: grade pairs with an LLM; ``rankscope judge agreement``: trust it?

Two forms share the command::

    rankscope judge --endpoint URL --model NAME --queries Q.tsv --docs D.jsonl \\
        --run RUN.txt [--depth 10] -o grades.csv [--cache FILE] [--dry-run] ...
    rankscope judge --endpoint URL --model NAME --store DB --snapshot NAME \\
        [--depth 20] [--holes-of QRELS] -o grades.csv ...
    rankscope judge agreement HUMAN LLM [--runs RUN ...] [-m nDCG@10]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

__all__ = ["register"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``judge`` command (grading) and its ``agreement`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="Grade query-document pairs with a model behind any OpenAI-compatible "
        "chat-completions endpoint (OpenAI, Azure, vLLM, llama.cpp server, Ollama). Grades "
        "are written in the judgments format (rater llm:MODEL) as they arrive; a rerun "
        "resumes, and cached answers cost nothing. 'rankscope judge agreement HUMAN LLM' "
        "compares LLM grades with human ones.",
    )
    ep = p.add_argument_group("endpoint")
    ep.add_argument("--endpoint", metavar="URL",
                    help="API base, e.g. http://localhost:8080/v1 (or a full "
                         ".../chat/completions URL)")
    ep.add_argument("--model", metavar="NAME", help="model name sent with each request")
    ep.add_argument("--api-key-env", metavar="VAR",
                    help="environment variable holding the API key")
    ep.add_argument("--auth-header", default="Authorization",
                    help="header for the key (default: Authorization: Bearer KEY; Azure: "
                         "api-key)")
    ep.add_argument("--provider", default="openai", metavar="NAME",
                    help="the API the endpoint speaks: openai (chat completions, the "
                         "default) or ollama (Ollama's own /api/chat)")
    ep.add_argument("--rater", help="rater name of the grades (default: llm:MODEL)")
    src = p.add_argument_group("what to grade")
    src.add_argument("--queries", metavar="Q.tsv",
                     help="queries: query_id<TAB>text (a header line may name a 'need' "
                          "column), or irds:NAME (an ir_datasets collection's queries and "
                          "needs)")
    src.add_argument("--docs", metavar="D.jsonl", help="documents: JSONL with id and text "
                                                       "fields, or irds:NAME")
    src.add_argument("--needs", metavar="FILE",
                     help="information needs, query_id<TAB>need, shown with each query "
                          "(or irds:NAME: a collection's descriptions and narratives)")
    src.add_argument("--store", metavar="DB", default=os.environ.get("RANKSCOPE_STORE"),
                     help="the snapshot store of --snapshot (default: $RANKSCOPE_STORE)")
    src.add_argument("--snapshot", action="append", default=[], metavar="NAME|ID",
                     help="grade this snapshot's top --depth, with the queries, needs and "
                          "display fields the store kept (repeatable; --queries / --docs "
                          "replace its queries / documents)")
    src.add_argument("--partial", action="store_true",
                     help="accept a snapshot that is not complete")
    src.add_argument("--doc-fields",
                     help="document fields shown to the model, in order (default: title,text "
                          "for --docs; title,snippet,url and the other fields for a "
                          "snapshot)")
    src.add_argument("--run", action="append", default=[], metavar="RUN",
                     help="grade this run's top --depth (repeatable)")
    src.add_argument("--depth", type=int, default=10,
                     help="top k of each run or snapshot (default 10)")
    src.add_argument("--pairs", metavar="FILE",
                     help="grade these pairs (CSV/TSV/JSONL with query and document columns, "
                          "or 'query_id doc_id' lines)")
    src.add_argument("--holes-of", metavar="QRELS",
                     help="leave out pairs already graded in these qrels or judgments (a "
                          "file or irds:NAME)")
    src.add_argument("--graded-in", metavar="QRELS",
                     help="keep only pairs graded in these qrels or judgments (a file or "
                          "irds:NAME; to measure the judge against them)")
    src.add_argument("--sample", type=int, metavar="N",
                     help="grade a random sample of N of the pairs (the same for one --seed)")
    src.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")
    pr = p.add_argument_group("prompt and answers")
    pr.add_argument("--scale", default="graded",
                    help="binary, graded (0-3, default), detail (1-10) or MIN-MAX")
    pr.add_argument("--prompt", metavar="TEMPLATE",
                    help="Jinja template file, or a built-in name (graded, binary, detail, "
                         "generic)")
    pr.add_argument("--guidelines", metavar="FILE", help="team guidelines given to the prompt")
    pr.add_argument("--max-doc-chars", type=int, default=6000,
                    help="cut documents at this length (default 6000)")
    pr.add_argument("--temperature", type=float, default=0.0, help="default 0")
    pr.add_argument("--setting", action="append", default=[], metavar="KEY=VALUE",
                    help="another decoding setting sent with each request (JSON value), e.g. "
                         "seed=1 or max_tokens=50 (repeatable; part of the cache key)")
    pr.add_argument("--samples", type=int, default=1,
                    help="answers per pair; grade = majority vote (default 1)")
    pr.add_argument("--parse", choices=("strict", "lenient"), default="strict",
                    help="answer reader: strict (default) takes only the format the prompt "
                         "asks for; lenient also reads grades in free text (and negations)")
    pr.add_argument("--few-shot", type=int, default=0, metavar="N",
                    help="show N pairs graded in --few-shot-from, with their grades, before "
                         "each pair (a fixed selection for --few-shot-seed)")
    pr.add_argument("--few-shot-from", metavar="QRELS",
                    help="qrels or judgments the few-shot examples come from")
    pr.add_argument("--few-shot-seed", type=int, default=0,
                    help="seed of the few-shot selection (default 0)")
    run = p.add_argument_group("running")
    run.add_argument("-o", "--output", metavar="FILE",
                     help="grades file (CSV; .tsv/.jsonl by name); an existing one is resumed")
    run.add_argument("--cache", metavar="FILE", help="SQLite answer cache")
    run.add_argument("--concurrency", type=int, default=8, help="requests in flight "
                                                                  "(default 8)")
    run.add_argument("--rpm", type=float, help="at most this many requests a minute")
    run.add_argument("--timeout", type=float, default=60.0, help="seconds per request "
                                                                  "(default 60)")
    run.add_argument("--max-retries", type=int, default=5, help="default 5")
    run.add_argument("--max-calls", type=int, help="send at most this many requests")
    run.add_argument("--max-tokens", type=int,
                     help="stop before the tokens used would pass this")
    run.add_argument("--dry-run", action="store_true",
                     help="count pairs, cache hits, calls and tokens within --max-calls / "
                          "--max-tokens; send nothing, create no file")
    run.add_argument("--retry-failed", action="store_true",
                     help="ask again the pairs recorded as failed")
    run.add_argument("--retry-unrateable", action="store_true",
                     help="ask again the pairs recorded as unrateable, passing over every "
                          "cached answer that gives no grade")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument("--human", metavar="JUDGMENTS",
                     help="report agreement with these human grades (a file or irds:NAME) "
                          "at the end")
    run.add_argument("-f", "--format", dest="fmt", choices=("text", "json"), default="text",
                     help="report format")
    p.set_defaults(handler=_judge)

    actions = p.add_subparsers(dest="action", metavar="agreement")
    agr = actions.add_parser(
        "agreement", help="agreement of LLM grades with human grades",
        description="Cohen's kappa (full scale, weighted, binarised), confusion matrix, base "
        "rates and Krippendorff's alpha on the results both graded; with --runs, Kendall's "
        "tau between the system rankings the two sets of grades produce.",
    )
    agr.add_argument("human", help="human judgments or qrels (a file or irds:NAME)")
    agr.add_argument("llm", help="LLM grades (from rankscope judge)")
    agr.add_argument("--scale", help="grading scale (default: graded when the grades fit)")
    agr.add_argument("--threshold", type=float, default=1,
                     help="lowest relevant grade, for the binarised kappa and the base rates "
                          "(default 1; >= 2, the TREC RAG / UMBRELA one, is reported too)")
    agr.add_argument("--runs", nargs="+", default=[], metavar="RUN",
                     help="runs to rank under both sets of grades")
    agr.add_argument("-m", "--metric", default="nDCG@10", help="metric for the runs")
    agr.add_argument("--all-pairs", action="store_true",
                     help="rank the runs with every pair each side graded (default: only the "
                          "pairs both graded)")
    agr.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                     help="resamples of the items for the 95%% intervals of kappa and alpha "
                          "(default 1000; 0: none)")
    agr.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    agr.add_argument("-f", "--format", dest="fmt", choices=("text", "json"), default="text")
    agr.set_defaults(handler=_agreement)


def _settings(values: list[str]) -> dict[str, Any]:
    from rankscope.errors import OptionError

    out: dict[str, Any] = {}
    for item in values:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise OptionError(f"--setting wants KEY=VALUE, not {item!r}")
        try:
            out[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            out[key.strip()] = raw
    return out


def _judge(args: argparse.Namespace) -> int:
    from rankscope import progress
    from rankscope.errors import IncompleteError, JudgeError, OptionError
    from rankscope.llm_judge.api import judge

    missing = [o for o, v in (("--endpoint", args.endpoint), ("--model", args.model))
               if not v]
    if missing:
        raise OptionError(f"{' and '.join(missing)} required (or: rankscope judge agreement)")
    from rankscope.llm_judge.client import check_endpoint

    check_endpoint(args.endpoint)  # a bad URL is refused before any file is read
    from rankscope.llm_judge.providers import get_provider

    get_provider(args.provider)  # so is an unknown provider
    if args.snapshot and not args.store:
        raise OptionError("--snapshot needs --store DB (or RANKSCOPE_STORE)")
    if not args.run and not args.pairs and not args.snapshot:
        raise OptionError("give --run RUN or --snapshot NAME (their top --depth) or --pairs "
                          "FILE to grade")
    if not args.snapshot and (args.queries is None or args.docs is None):
        raise OptionError("--queries and --docs are required (or --store and --snapshot)")
    if not args.output and not args.dry_run:
        raise OptionError("give -o FILE for the grades (or --dry-run to count only)")
    if args.few_shot and not args.few_shot_from:
        raise OptionError("--few-shot needs --few-shot-from QRELS (the examples' grades)")
    if args.quiet:
        progress.set_enabled(False)
    guidelines = ""
    if args.guidelines:
        from rankscope.data._io import read_text

        guidelines = read_text(args.guidelines)[0].decode("utf-8")
    fields = None
    if args.doc_fields is not None:
        fields = [f.strip() for f in args.doc_fields.split(",") if f.strip()]
    with _ProgressBar() as show:
        result = judge(
            args.pairs, endpoint=args.endpoint, model=args.model, queries=args.queries,
            docs=args.docs, needs=args.needs, store=args.store if args.snapshot else None,
            snapshot=args.snapshot or None, partial=args.partial, runs=args.run,
            depth=args.depth, holes_of=args.holes_of, graded_in=args.graded_in,
            sample=args.sample, seed=args.seed, scale=args.scale, prompt=args.prompt,
            guidelines=guidelines, doc_fields=fields,
            max_doc_chars=args.max_doc_chars, output=args.output, cache=args.cache,
            api_key_env=args.api_key_env, auth_header=args.auth_header,
            provider=args.provider, rater=args.rater,
            temperature=args.temperature, settings=_settings(args.setting),
            samples=args.samples, concurrency=args.concurrency, rpm=args.rpm,
            timeout=args.timeout, max_retries=args.max_retries, max_calls=args.max_calls,
            max_tokens=args.max_tokens, dry_run=args.dry_run, retry_failed=args.retry_failed,
            retry_unrateable=args.retry_unrateable, parse=args.parse,
            few_shot=args.few_shot, few_shot_from=args.few_shot_from,
            few_shot_seed=args.few_shot_seed, human=args.human, progress=show,
        )
    out = sys.stdout
    if args.fmt == "json":
        report: dict[str, Any] = {
            "rater": result.rater, "template_sha256": result.template_sha256,
            "plan": result.plan.to_dict(),
            "usage": None if result.usage is None else result.usage.to_dict(),
            "examples": [e.key() for e in result.examples],
        }
        if result.agreement is not None:
            report["agreement"] = result.agreement.to_dict()
        out.write(json.dumps(report, indent=2) + "\n")
    else:
        out.write(_report(args, result))
    out.flush()
    if result.usage is not None and result.usage.unusable():
        raise JudgeError(result.usage.unusable())
    left = result.incomplete()
    if left:
        raise IncompleteError(f"incomplete: {left}")
    return 0


class _ProgressBar:
    """The terminal's progress bar of a judging run (nothing elsewhere): ``bar(usage)``
    shows the pairs done of those to ask, the grades, tokens and cache hits so far, and
    the time left; the bar is sized at the first call, when the run knows its pairs."""

    def __enter__(self) -> _ProgressBar:
        import contextlib

        self._stack = contextlib.ExitStack()
        self._show: Any = None
        return self

    def __call__(self, usage: Any) -> None:
        from rankscope import progress

        if self._show is None:
            self._show = self._stack.enter_context(
                progress.status_bar(usage.to_grade, "judge", unit="pair"))
        tokens = usage.prompt_tokens + usage.completion_tokens
        self._show(usage.finished, f"graded {usage.graded}, unrateable {usage.unrateable}, "
                                   f"failed {usage.failed}; {tokens} tokens, "
                                   f"{usage.cache_hits} cached")

    def __exit__(self, *exc: object) -> None:
        self._stack.close()


def _report(args: argparse.Namespace, result: Any) -> str:
    """The text report of a judging run (or of a dry run)."""
    plan = result.plan
    lines = [f"rater {result.rater}; template sha256 {result.template_sha256[:12]}"]
    if result.examples:
        shown = ", ".join(f"{e.query_id} {e.doc_id} ({e.grade:g})" for e in result.examples)
        lines.append(f"few-shot examples ({len(result.examples)}, seed "
                     f"{args.few_shot_seed}): {shown}")
    earlier = (f", {plan.failed_earlier} failed earlier (--retry-failed asks them again)"
               if plan.failed_earlier else "")
    lines.append(f"pairs {plan.pairs}: {plan.already_done} already done{earlier}, "
                 f"{plan.to_grade} to grade ({plan.answers} answers: {plan.cache_hits} in the "
                 f"cache, {plan.calls} calls)")
    lines.append(f"estimated tokens: {plan.prompt_tokens} prompt + {plan.completion_tokens} "
                 "completion")
    u = result.usage
    if u is None:
        if plan.stopped_by:
            lines.append(f"{plan.stopped_by} would stop the run: {plan.not_reached} pairs "
                         "would not be reached")
        lines.append("dry run: no request sent, no file written")
        return "\n".join(lines) + "\n"
    if u.repaired:
        lines.append(f"grades file repaired: {u.repaired}")
    lines.append(f"graded {u.graded}, unrateable {u.unrateable}, no majority {u.no_majority}, "
                 f"failed {u.failed}, not reached {u.not_reached}")
    lines.append(f"requests {u.requests} ({u.retries} retries), cache hits {u.cache_hits}; "
                 f"tokens {u.prompt_tokens} prompt + {u.completion_tokens} completion "
                 f"({u.saved_tokens} saved by the cache); {u.seconds:.1f} s")
    if u.self_consistency is not None:
        lines.append(f"self-consistency over {args.samples} samples: "
                     f"{u.self_consistency:.3f}")
    if u.stopped:
        lines.append(f"stopped: {u.stopped}")
    if u.unrateable_left:
        lines.append(f"{u.unrateable_left} pair(s) unrateable (no grade could be read from "
                     "the answer): --retry-unrateable asks them again")
    if args.output:
        lines.append(f"grades in {args.output}")
    text = "\n".join(lines) + "\n"
    if result.agreement is not None:
        text += "\n" + format_agreement(result.agreement)
    elif args.human:
        text += f"no result graded both here and in {args.human}: no agreement to report\n"
    return text


def _agreement(args: argparse.Namespace) -> int:
    from rankscope.judgments.table import Judgments
    from rankscope.llm_judge.agreement import judge_agreement

    scale = args.scale
    human = Judgments.read(args.human, scale=scale)
    llm = Judgments.read(args.llm, scale=scale)
    if args.bootstrap < 0:
        from rankscope.errors import OptionError

        raise OptionError(f"--bootstrap must be >= 0, not {args.bootstrap}")
    result = judge_agreement(human, llm, scale=scale, threshold=args.threshold,
                             runs=args.runs, metric=args.metric, all_pairs=args.all_pairs,
                             n_resamples=args.bootstrap, seed=args.seed)
    if args.fmt == "json":
        sys.stdout.write(json.dumps(result.to_dict(), indent=2, allow_nan=False) + "\n")
    else:
        sys.stdout.write(format_agreement(result))
    return 0


def format_agreement(a: Any) -> str:
    """The agreement report as text."""
    from rankscope.render.tabular import format_value as num

    scale = f" on the {a.scale.describe()} scale" if a.scale is not None else ""
    lines = [
        f"{a.n_items} results graded by both{scale} (human only {a.n_human_only}, "
        f"LLM only {a.n_llm_only}, tied human votes left out {a.human_ties})",
        f"human raters: {', '.join(a.human_raters)}; LLM raters: {', '.join(a.llm_raters)}",
        "",
    ]

    def ci(name: str) -> str:
        low, high = a.intervals.get(name, (None, None))
        if low is None or high is None:
            return ""
        return f"  [{num(low)}, {num(high)}]"

    def relevant(t: float) -> str:
        usual = " (TREC RAG, UMBRELA)" if t == 2 else ""
        return f"relevant = grade >= {t:g}{usual}"

    figures = [
        ("exact agreement", a.exact, ""),
        ("Cohen's kappa", a.kappa, ci("kappa")),
        ("Cohen's kappa, linear weights", a.kappa_linear, ci("kappa_linear")),
        ("Cohen's kappa, quadratic weights", a.kappa_quadratic, ci("kappa_quadratic")),
    ]
    for b in a.binary:
        low, high = b.interval
        interval = "" if low is None or high is None else f"  [{num(low)}, {num(high)}]"
        figures += [
            (f"Cohen's kappa, binary, {relevant(b.threshold)}", b.kappa, interval),
            (f"base rate, human, {relevant(b.threshold)}", b.base_rate_human, ""),
            (f"base rate, LLM, {relevant(b.threshold)}", b.base_rate_llm, ""),
        ]
    figures.append((f"Krippendorff's alpha ({a.alpha_level}, every rater)", a.alpha,
                    ci("alpha")))
    width = max(len(k) for k, _, _ in figures)
    lines += [f"{k.ljust(width)}  {num(v)}{c}" for k, v, c in figures]
    if a.n_resamples:
        lines.append(f"[low, high]: {a.confidence:.0%} bootstrap intervals, {a.n_resamples} "
                     "resamples of the results")
    if a.confusion.height:
        lines += ["", "confusion (rows: human grade, columns: LLM grade)"]
        header = ["", *a.confusion.columns[1:]]
        body = [[str(x) for x in row] for row in a.confusion.iter_rows()]
        widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
        for row in [header, *body]:
            lines.append("  " + "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
    if a.ranking is not None:
        r = a.ranking
        ground = (f"the {r.n_pairs} results both graded (human only {r.human_only}, LLM only "
                  f"{r.llm_only} left out)" if r.common else
                  f"every grade of each side ({r.n_pairs} results both graded, human only "
                  f"{r.human_only}, LLM only {r.llm_only})")
        lines += ["", f"system ranking by {r.metric} over {r.n_queries} queries, on {ground}: "
                      f"Kendall's tau {num(r.tau)} (p {num(r.p_value)})"]
        for name, h, m, d in r.runs.iter_rows():
            lines.append(f"  {name}: human {num(h)}  LLM {num(m)}  delta {num(d)}")
    return "\n".join(lines) + "\n"
