"""``rankscope completion bash|zsh|fish``: shell completion generated from the parser.

The script is written from the command line's own parser (every subcommand,
its actions, options and option choices), so a new option completes without
editing anything here. Install it with, for example::

    rankscope completion bash > ~/.local/share/bash-completion/completions/rankscope
    rankscope completion zsh > "${fpath[1]}/_rankscope"
    rankscope completion fish > ~/.config/fish/completions/rankscope.fish
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SHELLS", "Node", "command_tree", "register", "script"]

SHELLS = ("bash", "zsh", "fish")


@dataclass
class Node:
    """One (sub)command: its path, one-line help, options and children."""

    path: tuple[str, ...]
    help: str = ""
    options: list[str] = field(default_factory=list)
    choices: dict[str, list[str]] = field(default_factory=dict)
    """Option -> the values it takes (where it lists them)."""
    helps: dict[str, str] = field(default_factory=dict)
    """Option -> its help's first sentence (fish shows it)."""
    children: list[Node] = field(default_factory=list)


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``completion`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text,
        description="Print a completion script for SHELL (bash, zsh or fish), generated from "
        "rankscope's own options: subcommands, their options and the values an option "
        "takes. Load it in the shell's start-up file or install it where the shell looks.",
        examples=["rankscope completion bash > ~/.local/share/bash-completion/completions/"
                  "rankscope",
                  "eval \"$(rankscope completion zsh)\""])
    p.add_argument("shell", choices=SHELLS, help="the shell: bash, zsh or fish")
    from rankscope.cli.options import add_output

    add_output(p, help="write the script here (- = stdout, the default)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the script; returns the exit code."""
    from rankscope.cli.main import build_parser
    from rankscope.cli.parsing import write_text

    write_text(args.output, script(args.shell, command_tree(build_parser())))
    return 0


def _first_sentence(text: str | None) -> str:
    if not text or text == argparse.SUPPRESS:
        return ""
    text = " ".join(text.split())
    return text.split(". ")[0].split("; ")[0][:80]


def command_tree(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("rankscope",),
                 help_text: str = "") -> Node:
    """Every subcommand and option of ``parser``, hidden (deprecated) options left out."""
    node = Node(path, help_text)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {c.dest: c.help or "" for c in action._choices_actions}
            for name, child in action.choices.items():
                node.children.append(command_tree(child, (*path, name), helps.get(name, "")))
        elif action.option_strings and action.help != argparse.SUPPRESS:
            node.options.extend(action.option_strings)
            for flag in action.option_strings:
                node.helps[flag] = _first_sentence(action.help)
                if action.choices is not None and not isinstance(action.choices, range):
                    node.choices[flag] = [str(c) for c in action.choices]
    return node


def _walk(node: Node) -> Iterator[Node]:
    yield node
    for child in node.children:
        yield from _walk(child)


def script(shell: str, tree: Node) -> str:
    """The completion script for ``shell`` over ``tree``."""
    if shell == "bash":
        return _bash(tree)
    if shell == "zsh":
        return _zsh(tree)
    return _fish(tree)


def _tables(tree: Node, declare: str) -> list[str]:
    """Three associative arrays keyed by command path (``rankscope judgments``)."""
    lines = [f"{declare} _rankscope_subs _rankscope_opts _rankscope_choices"]
    for node in _walk(tree):
        key = shlex.quote(" ".join(node.path))
        if node.children:
            words = " ".join(c.path[-1] for c in node.children)
            lines.append(f"_rankscope_subs[{key}]={shlex.quote(words)}")
        lines.append(f"_rankscope_opts[{key}]={shlex.quote(' '.join(node.options))}")
        for flag, values in node.choices.items():
            choice_key = shlex.quote(" ".join(node.path) + "|" + flag)
            lines.append(f"_rankscope_choices[{choice_key}]={shlex.quote(' '.join(values))}")
    return lines


def _bash(tree: Node) -> str:
    return "\n".join([
        "# bash completion of rankscope (rankscope completion bash)",
        *_tables(tree, "declare -gA"),
        "_rankscope() {",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
        '    local path="rankscope" word i',
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        '        word="${COMP_WORDS[i]}"',
        '        if [[ " ${_rankscope_subs[$path]-} " == *" $word "* ]]; then',
        '            path="$path $word"',
        "        fi",
        "    done",
        '    if [[ -n "${_rankscope_choices[$path|$prev]+set}" ]]; then',
        '        COMPREPLY=($(compgen -W "${_rankscope_choices[$path|$prev]}" -- "$cur"))',
        "    elif [[ $cur == -* ]]; then",
        '        COMPREPLY=($(compgen -W "${_rankscope_opts[$path]-}" -- "$cur"))',
        '    elif [[ -n "${_rankscope_subs[$path]-}" ]]; then',
        '        COMPREPLY=($(compgen -W "${_rankscope_subs[$path]}" -- "$cur"))',
        "    else",
        '        COMPREPLY=($(compgen -f -- "$cur"))',
        "    fi",
        "}",
        "complete -o default -o bashdefault -F _rankscope rankscope",
        "",
    ])


def _zsh(tree: Node) -> str:
    return "\n".join([
        "#compdef rankscope",
        "# zsh completion of rankscope (rankscope completion zsh)",
        *_tables(tree, "typeset -gA"),
        "_rankscope() {",
        '    local cur="${words[CURRENT]}" prev="${words[CURRENT-1]}"',
        '    local path_="rankscope" word i',
        "    for ((i = 2; i < CURRENT; i++)); do",
        '        word="${words[i]}"',
        '        if [[ " ${_rankscope_subs[$path_]-} " == *" $word "* ]]; then',
        '            path_="$path_ $word"',
        "        fi",
        "    done",
        '    if (( ${+_rankscope_choices[$path_|$prev]} )); then',
        '        compadd -- ${=_rankscope_choices[$path_|$prev]}',
        "    elif [[ $cur == -* ]]; then",
        '        compadd -- ${=_rankscope_opts[$path_]}',
        '    elif [[ -n "${_rankscope_subs[$path_]-}" ]]; then',
        '        compadd -- ${=_rankscope_subs[$path_]}',
        "    else",
        "        _files",
        "    fi",
        "}",
        'if [[ "${zsh_eval_context[-1]}" == loadautofunc ]]; then',
        '    _rankscope "$@"',
        "else",
        "    compdef _rankscope rankscope",
        "fi",
        "",
    ])


def _fish(tree: Node) -> str:
    lines = ["# fish completion of rankscope (rankscope completion fish)",
             "complete -c rankscope -f"]
    for node in _walk(tree):
        below = node.path[1:]
        if below:
            condition = " && ".join(f"__fish_seen_subcommand_from {shlex.quote(word)}"
                                    for word in below)
        else:
            condition = "__fish_use_subcommand"
        if node.children:
            names = " ".join(c.path[-1] for c in node.children)
            leaf = f"not __fish_seen_subcommand_from {names}"
            for child in node.children:
                when = f"{condition} && {leaf}" if below else condition
                lines.append(f"complete -c rankscope -n {shlex.quote(when)} "
                             f"-a {shlex.quote(child.path[-1])} "
                             f"-d {shlex.quote(_first_sentence(child.help))}")
        else:
            lines.append(f"complete -c rankscope -n {shlex.quote(condition)} -F")
        for flag in node.options:
            spec = f"-s {flag[1:]}" if len(flag) == 2 else f"-l {flag[2:]}"
            values = node.choices.get(flag)
            extra = f" -x -a {shlex.quote(' '.join(values))}" if values else ""
            lines.append(f"complete -c rankscope -n {shlex.quote(condition)} {spec}{extra} "
                         f"-d {shlex.quote(node.helps.get(flag, ''))}")
    return "\n".join(lines) + "\n"
