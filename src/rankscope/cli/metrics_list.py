"""``rankscope metrics``: every metric with aliases, parameters, formula and agreeing tools."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["register"]


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``metrics`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(name, help=help_text, description=help_text)
    p.add_argument("name", nargs="?", help="show one metric (any spelling) in full")
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


def run(args: argparse.Namespace) -> int:
    """Print the listing; returns the exit code."""
    import rankscope.metrics  # noqa: F401 - every family, trec_eval's included
    from rankscope.metrics.base import FAMILIES
    from rankscope.metrics.parser import parse_metric

    if args.name:
        names = [parse_metric(args.name).family]
    else:
        names = list(FAMILIES)
    infos = [describe(n) for n in names]
    if args.format == "json":
        sys.stdout.write(json.dumps(infos, indent=2, default=str) + "\n")
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
    return 0
