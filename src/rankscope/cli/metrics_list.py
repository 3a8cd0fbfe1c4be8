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
    from rankscope.cli.conventions import add_conventions_option

    add_conventions_option(p)
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


def under_conventions(name: str) -> dict[str, dict[str, str]]:
    """How each conventions profile reads ``name``, where it differs from the default."""
    from rankscope.engine.options import EvalOptions
    from rankscope.metrics.conventions import PROFILES, resolve_name

    default = resolve_name(name)
    out: dict[str, dict[str, str]] = {}
    for profile in PROFILES.values():
        found = resolve_name(name, profile.name)
        options = ", ".join(f"{k}={v}" for k, v in profile.options
                            if getattr(EvalOptions(), k) != v)
        if len(found) != len(default):  # a bare name, read at the tool's default parameters
            out[profile.name] = {"metric": ", ".join(f.label for f in found), "reading": "",
                                 "note": "the tool's default parameters", "options": options}
            continue
        changed = [f for f, d in zip(found, default, strict=True)
                   if f.metric != d.metric or f.reading.describe() or f.note]
        if changed or options:
            first = changed[0] if changed else found[0]
            out[profile.name] = {"metric": first.metric.name,
                                 "reading": first.reading.describe(), "note": first.note,
                                 "options": options}
    return out


def describe_fusion(method: str) -> dict[str, Any]:
    """Everything known about one fusion method, JSON-ready."""
    from rankscope.fusion.methods import METHODS

    spec = METHODS[method]
    return {
        "name": spec.name, "summary": spec.summary, "group": "fusion", "reads": spec.kind,
        "parameters": [{"name": p.name, "default": p.default, "doc": p.doc}
                       for p in spec.params],
        "aliases": list(spec.aliases), "formula": spec.formula, "references": spec.citation,
    }


def _fusion_method(name: str) -> str | None:
    from rankscope.errors import OptionError
    from rankscope.fusion.methods import method_spec

    try:
        return method_spec(name).name
    except OptionError:
        return None


def run(args: argparse.Namespace) -> int:
    """Print the listing; returns the exit code."""
    import rankscope.metrics  # noqa: F401 - every family, trec_eval's included
    from rankscope.errors import UnknownMetricError
    from rankscope.fusion.methods import METHODS
    from rankscope.metrics.base import FAMILIES
    from rankscope.metrics.conventions import resolve_name

    conventions = getattr(args, "conventions", None)
    fusion: list[str] = []
    found: list[Any] = []
    if args.name:
        try:
            found = resolve_name(args.name, conventions)
        except UnknownMetricError:
            method = _fusion_method(args.name)
            if method is None:
                raise
            names, fusion = [], [method]
        if found:
            if len(found) != 1:
                raise UnknownMetricError(args.name,
                                         detail=f"stands for {len(found)} metrics, expected one")
            names = [found[0].metric.family]
    else:
        names, fusion = list(FAMILIES), list(METHODS)
    infos = [describe(n) for n in names]
    if found:
        import re

        from rankscope.metrics.conventions_names import SPELLING_NOTES

        infos[0]["spelled"] = args.name
        infos[0]["metric"] = found[0].metric.name
        stem = re.match(r"[A-Za-z_]*", args.name.strip())
        word = stem.group(0) if stem else ""
        note = SPELLING_NOTES.get(word) or SPELLING_NOTES.get(word.lower(), "")
        if note:
            infos[0]["spelling"] = note
        if conventions is not None:
            infos[0]["reading"] = {"conventions": conventions,
                                   "how": found[0].reading.describe(),
                                   "note": found[0].note}
        infos[0]["conventions"] = under_conventions(args.name)
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
            sys.stdout.write(_one_name(info))
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


def _one_name(info: dict[str, Any]) -> str:
    """What the name asked for is, and how each tool's conventions read it."""
    lines = [f"    {info['spelled']} is {info['metric']}"]
    if info.get("spelling"):
        lines.append(f"      one tool's spelling: {info['spelling']}")
    reading = info.get("reading")
    if reading is not None:
        how = f" ({reading['how']})" if reading["how"] else ""
        lines[0] += f" under --conventions {reading['conventions']}{how}"
        if reading["note"]:
            lines.append(f"      {reading['note']}")
    if not info["conventions"]:
        return "\n".join(lines) + "\n"
    lines.append("    under each tool's conventions (--conventions TOOL), where they differ:")
    for tool, seen in info["conventions"].items():
        how = f" ({seen['reading']})" if seen["reading"] else ""
        line = f"      {tool}: {seen['metric']}{how}"
        if seen["options"]:
            line += f"; options {seen['options']}"
        lines.append(line)
        if seen["note"]:
            lines.append(f"        {seen['note']}")
    return "\n".join(lines) + "\n"
