"""The demo the web app starts with (``rankscope serve --demo``): no server, no network.

Writes the bundled demo collection to a directory, then fills a store with
an admin and a judge, a project ``demo``, its query set (with the searchers'
needs), the two embedded endpoints (``demo-baseline``, ``demo-tuned``) and
one evaluation of the baseline, run and ready to grade (graded scale 0-3,
two grades per result, the guidelines of the collection).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rankscope.store.db import Store

__all__ = ["DemoLogin", "setup_demo"]


@dataclass(frozen=True)
class DemoLogin:
    """Who may sign in to the demo, and what was made."""

    admin: str
    admin_password: str
    judge: str
    judge_password: str
    project_id: int
    evaluation_id: int


def _queries_with_needs(directory: Path) -> str:
    needs: dict[str, str] = {}
    needs_file = directory / "needs.tsv"
    if needs_file.is_file():
        for line in needs_file.read_text(encoding="utf-8").splitlines()[1:]:
            qid, _, need = line.partition("\t")
            needs[qid.strip()] = need.strip()
    lines = ["query_id\ttext\tneed"]
    for line in (directory / "queries.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        if line.strip():
            qid, _, text = line.partition("\t")
            lines.append(f"{qid}\t{text}\t{needs.get(qid, '')}")
    return "\n".join(lines) + "\n"


def setup_demo(store: Store, directory: str | Path, *, metrics: tuple[str, ...] = (
        "nDCG@10", "P@5", "RR@10"), grades_wanted: int = 2) -> DemoLogin:
    """Write the demo collection to ``directory`` and set up the store around it."""
    from rankscope.services.accounts import create_user
    from rankscope.services.catalog import import_query_set, save_endpoint
    from rankscope.services.demo import init_demo
    from rankscope.services.evaluations import EvaluationSpec, create_evaluation, run_evaluation
    from rankscope.services.projects import add_member, create_project

    target = Path(directory)
    init_demo(target, force=True)
    admin_password = secrets.token_urlsafe(9)
    judge_password = secrets.token_urlsafe(9)
    admin = create_user(store, "admin", "admin", admin_password)
    create_user(store, "judge", "judge", judge_password)
    project = create_project(store, admin, "demo")
    add_member(store, admin, project.id, "judge", "judge")
    qs = import_query_set(store, admin, project.id, "demo queries", _queries_with_needs(target),
                          source="queries.tsv")
    endpoints = {}
    for name in ("endpoint.toml", "endpoint_tuned.toml"):
        view = save_endpoint(store, admin, project.id,
                             (target / name).read_text(encoding="utf-8"), base_dir=target)
        endpoints[name] = view
    guidelines = target / "guidelines.md"
    spec = EvaluationSpec(
        name="baseline", query_set_id=qs.id, endpoint_id=endpoints["endpoint.toml"].id,
        scale="graded", grades_wanted=grades_wanted, metrics=metrics, depth=10,
        guidelines=guidelines.read_text(encoding="utf-8") if guidelines.is_file() else "",
        annotation="BM25 over title and text, weights 1:1, no stemming")
    ev = create_evaluation(store, admin, project.id, spec)
    run_evaluation(store, admin, ev.id)
    return DemoLogin("admin", admin_password, "judge", judge_password, project.id, ev.id)
