"""``rankscope metrics``: every metric (and fusion method) with parameters, formula and citation."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["register"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``metrics`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(name, help=help_text, description=help_text)
    p.add_argument("name", nargs="?",
                   help="show one metric (any spelling) or fusion method in full")
    p.add_argument("-f", "--format", choices=("text", "json"), default="text")
    p.set_defaults(handler=run)


def describe(family_name: str) -> dict[str, Any]:
    """Everything known about one family, JSON-ready."""
    from rankscope.metrics.base import FAMILIES

    fam = FAMILIES[family_name]
    return {
        "name": fam.name,
        "summary": fam.summary,
        "group": fam.group,
        "cutoff": fam.cutoff,
        "aggregate": fam.aggregate,
        "parameters": [
            {"name": p.name, "default": p.default, "doc": p.doc,
             **({"choices": list(p.choices)} if p.choices else {})}
            for p in fam.params
        ],
        "aliases": list(fam.aliases),
        "agrees_with": list(fam.agrees_with),
        "formula": fam.doc_section("Notes"),
        "references": fam.doc_section("References"),
    }


def describe_fusion(method: str) -> dict[str, Any]:
    """Everything known about one fusion method, JSON-ready."""
    from rankscope.compare.fusion_methods import METHODS

    spec = METHODS[method]
    return {
        "name": spec.name, "summary": spec.summary, "group": "fusion", "reads": spec.kind,
        "parameters": [{"name": p.name, "default": p.default, "doc": p.doc}
                       for p in spec.params],
        "aliases": list(spec.aliases), "formula": spec.formula, "references": spec.citation,
    }


def _fusion_method(name: str) -> str | None:
    from rankscope.compare.fusion_methods import method_spec
    from rankscope.errors import OptionError

    try:
        return method_spec(name).name
    except OptionError:
        return None


def run(args: argparse.Namespace) -> int:
    """Print the listing; returns the exit code."""
    import rankscope.metrics  # noqa: F401 - every family, trec_eval's included
    from rankscope.compare.fusion_methods import METHODS
    from rankscope.errors import UnknownMetricError
    from rankscope.metrics.base import FAMILIES
    from rankscope.metrics.parser import parse_metric

    fusion: list[str] = []
    if args.name:
        try:
            names = [parse_metric(args.name).family]
        except UnknownMetricError:
            method = _fusion_method(args.name)
            if method is None:
                raise
            names, fusion = [], [method]
    else:
        names, fusion = list(FAMILIES), list(METHODS)
    infos = [describe(n) for n in names]
    methods = [describe_fusion(m) for m in fusion]
    if args.format == "json":
        sys.stdout.write(json.dumps(infos + methods, indent=2, default=str) + "\n")
        return 0
    for info in infos:
        cut = {"optional": "[@k]", "required": "@k", "none": ""}[info["cutoff"]]
        sys.stdout.write(f"{info['name']}{cut}  ({info['group']}, {info['aggregate']})\n")
        sys.stdout.write(f"    {info['summary']}\n")
        if info["aliases"]:
            sys.stdout.write(f"    aliases: {', '.join(info['aliases'])}\n")
        for p in info["parameters"]:
            choices = f" {{{', '.join(p['choices'])}}}" if "choices" in p else ""
            sys.stdout.write(f"    {p['name']}={p['default']}{choices}: {p['doc']}\n")
        if info["agrees_with"]:
            sys.stdout.write(f"    same number as: {'; '.join(info['agrees_with'])}\n")
        if args.name:
            sys.stdout.write("\n" + info["formula"] + "\n\n" + info["references"] + "\n")
        sys.stdout.write("\n")
    if methods and not args.name:
        sys.stdout.write("Fusion methods (rankscope fuse --method NAME):\n\n")
    for m in methods:
        also = f"; also {', '.join(m['aliases'])}" if m["aliases"] else ""
        sys.stdout.write(f"{m['name']}  (fusion, reads {m['reads']}{also})\n")
        sys.stdout.write(f"    {m['summary']}\n    fused score: {m['formula']}\n")
        for p in m["parameters"]:
            sys.stdout.write(f"    {p['name']}={p['default']}: {p['doc']}\n")
        sys.stdout.write(f"    {m['references']}\n\n")
    return 0
