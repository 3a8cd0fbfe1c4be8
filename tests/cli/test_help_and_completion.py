"""Every subcommand is described and ends its --help with examples that run; completion.

The examples are run as a user would run them, in a new directory holding
`rankscope sample-data` and `rankscope demo init demo`, in the order of the
help pages (a store's snapshots are taken before they are listed). The few
that cannot run here say why in SKIPPED.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from rankscope.cli.completion import SHELLS, command_tree, script
from rankscope.cli.main import COMMANDS, build_parser, main


def _subcommands(parser: argparse.ArgumentParser,
                 path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...],
                                                           argparse.ArgumentParser]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.append(((*path, name), child))
                found.extend(_subcommands(child, (*path, name)))
    return found


PARSER = build_parser()
SUBCOMMANDS = [(path, p) for path, p in _subcommands(PARSER) if path[0] != "trec_eval"]
# trec_eval is a drop-in for the C program: its own help text and options, kept as they are

# the reader's own files the examples name, written here as a reader would
# (grades.csv: two raters' grades of the demo's first judged results, as `judge` would
# write them for its agreement examples)
OWN = {
    "ann.txt": "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n",
    "bob.txt": "q1 0 d1 3\nq1 0 d2 1\nq2 0 d3 1\n",
}


def _grades(qrels: Path) -> str:
    rows = [line.split() for line in qrels.read_text().splitlines()[:8]]
    return "query_id,doc_id,rater,grade\n" + "".join(
        f"{q},{d},{rater},{min(3, int(g) + shift)}\n"
        for q, _, d, g in rows for rater, shift in (("ann", 0), ("bob", 1)))

SKIPPED = {
    "judgments implicit demo/clicks.csv --model pbm --prior prior.csv -f jsonl -o "
    "implicit.jsonl": "a prior of the reader's own",
    "judge --endpoint http://127.0.0.1:8080/v1 --model qwen2.5 --queries demo/queries.tsv "
    "--docs demo/corpus.jsonl --run demo/run.txt --holes-of demo/qrels.txt -o grades.csv "
    "--cache answers.sqlite": "an LLM server",
    "serve --demo": "a server runs until stopped",
    "serve --db team.sqlite --host 0.0.0.0 --port 8080 --files-dir collections":
        "a server runs until stopped",
    "completion bash > ~/.local/share/bash-completion/completions/rankscope":
        "writes into the home directory (the script itself is checked below)",
    'eval "$(rankscope completion zsh)"': "a shell's own command",
}


# examples that show a gate failing: run_a is worse than run_b on AP (docs/compare.md)
EXIT = {"check rankscope-sample/qrels.txt rankscope-sample/run_a.txt --baseline "
        "rankscope-sample/run_b.txt -m AP --max-drop 0.01 --junit check.xml": 1}


def _examples(parser: argparse.ArgumentParser) -> list[str]:
    return list(getattr(parser, "examples", ()))


def test_every_command_is_listed_and_built() -> None:
    assert {path[0] for path, _ in _subcommands(PARSER)} == set(COMMANDS)


@pytest.mark.parametrize(("path", "parser"), SUBCOMMANDS,
                         ids=[" ".join(path) for path, _ in SUBCOMMANDS])
def test_help_describes_and_ends_with_examples(path: tuple[str, ...],
                                               parser: argparse.ArgumentParser) -> None:
    assert parser.description and len(parser.description) > 30
    examples = _examples(parser)
    assert examples, "no examples"
    text = parser.format_help()
    assert text.rstrip().endswith(examples[-1])
    for line in examples:
        assert line.startswith("rankscope ") or line.startswith(("printf ", "eval ")), line
        assert f"rankscope {' '.join(path[:1])}" in line, line


def _runnable() -> list[str]:
    seen: list[str] = []
    for _, parser in SUBCOMMANDS:
        for line in _examples(parser):
            if line not in seen:
                seen.append(line)
    # snapshots are taken before the store is read
    return sorted(seen, key=lambda line: 0 if line.startswith(("rankscope demo",
                                                               "rankscope snapshot ")) else 1)


@pytest.mark.slow
def test_the_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["sample-data"]) == 0
    assert main(["demo", "init", "demo"]) == 0
    for name, text in OWN.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "grades.csv").write_text(_grades(tmp_path / "demo" / "qrels.txt"))
    ran = 0
    for line in _runnable():
        for part in line.split(" && "):
            if part.removeprefix("rankscope ") in SKIPPED or line in SKIPPED:
                continue
            words = shlex.split(part)
            stdin = None
            if words[0] == "printf":  # printf 'secret-pass\n' | rankscope user add ...
                bar = words.index("|")
                stdin, words = words[1].replace("\\n", "\n"), words[bar + 1:]
            assert words[0] == "rankscope", part
            argv = words[1:]
            if argv in (["demo", "init", "demo"], ["sample-data"]):
                continue  # run above, first
            if stdin is not None:
                import io

                monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
            code = main(argv)
            err = capsys.readouterr().err
            assert code == EXIT.get(" ".join(argv), 0), f"{part}: {err}"
            ran += 1
            if argv[:1] == ["snapshot"] and "--store" not in argv:
                # a second snapshot in the store, for the examples comparing 1 and 2
                assert main(["snapshot", "demo/endpoint.toml", "demo/queries.tsv", "--store",
                             "demo/store.sqlite", "--depth", "20", "--quiet"]) == 0
    assert ran >= 40


def test_completion_names_every_subcommand_and_option() -> None:
    tree = command_tree(PARSER)
    for shell in SHELLS:
        text = script(shell, tree)
        for path, parser in _subcommands(PARSER):
            assert path[-1] in text, (shell, path)
            for action in parser._actions:
                if action.help == argparse.SUPPRESS:
                    continue
                for flag in action.option_strings:
                    spelled = flag if shell != "fish" else (
                        f"-s {flag[1:]}" if len(flag) == 2 else f"-l {flag[2:]}")
                    assert spelled in text, (shell, path, flag)


@pytest.mark.parametrize("shell", SHELLS)
def test_completion_scripts_parse(shell: str, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    target = tmp_path / f"rankscope.{shell}"
    assert main(["completion", shell, "-o", str(target)]) == 0
    done = subprocess.run([shell, "-n", str(target)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_bash_completes_actions_options_and_choices(tmp_path: Path) -> None:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    target = tmp_path / "rankscope.bash"
    assert main(["completion", "bash", "-o", str(target)]) == 0

    def complete(*words: str) -> list[str]:
        array = " ".join(shlex.quote(w) for w in ("rankscope", *words))
        program = (f"source {shlex.quote(str(target))}; COMP_WORDS=({array}); "
                   f"COMP_CWORD={len(words)}; _rankscope; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
        done = subprocess.run(["bash", "-c", program], capture_output=True, text=True,
                              timeout=60, check=True)
        return done.stdout.split()

    assert complete("judgments", "ag") == ["aggregate", "agreement"]
    assert complete("evaluate", "--ties", "") == ["trec", "input", "docid_asc"]
    assert complete("fuse", "--rr") == ["--rrf-k"]
    assert "completion" in complete("")
