"""docs/snapshots.md: every command runs as written, every endpoint file is valid.

The walk-through runs on the packaged demo collection when this checkout has it
(src/rankscope/demo_data), otherwise on the stand-in; the Elasticsearch example
runs against the local engine server.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from rankscope.cli.main import main
from rankscope.search.config import endpoint_from_dict
from rankscope.services.demo import DEMO_FILES
from search.engine_server import EngineServer, Reply

from .conftest import PACKAGED, standin_package

DOC = Path(__file__).resolve().parents[2] / "docs" / "snapshots.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def test_every_endpoint_example_is_a_valid_file(tmp_path):
    examples = blocks("toml")
    assert len(examples) >= 5
    kinds = set()
    for text in examples:
        config = endpoint_from_dict(tomllib.loads(text), source="doc", base_dir=tmp_path)
        kinds.add(config.kind)
    assert kinds == {"elasticsearch", "opensearch", "solr", "http", "embedded"}


def test_the_guide_runs(tmp_path, monkeypatch, capsys):
    import rankscope.services.demo as demo

    if not all((PACKAGED / name).is_file() for name in DEMO_FILES):
        source = standin_package(tmp_path / "standin")
        monkeypatch.setattr(demo, "demo_source", lambda: source)
    monkeypatch.chdir(tmp_path)
    server = EngineServer()
    try:
        server.route("POST", "/products/_search", Reply("es8_search.json"))
        shop = blocks("toml")[0].replace("http://localhost:9200", server.url)
        (tmp_path / "shop.toml").write_text(shop)
        outputs = {}
        for block in blocks("sh"):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.split("  #")[0].strip()
                if not line.startswith("rankscope "):
                    continue
                argv = shlex.split(line)[1:]
                assert main(argv) == 0, (line, capsys.readouterr().err)
                outputs[line] = capsys.readouterr()
    finally:
        server.close()
    assert len(outputs) >= 12
    text = "\n".join(o.out for o in outputs.values())
    assert "RBO" in text and "holes" in text and "PASS" in text
    assert (tmp_path / "demo" / "to_grade.csv").is_file()
    assert (tmp_path / "shop.txt").read_text().splitlines()[0].split()[2] == "p-101"
    assert len(server.seen("/products/_search")) == len(
        (tmp_path / "demo" / "queries.tsv").read_text().strip().splitlines()) - 1
