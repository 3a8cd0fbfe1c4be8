"""The demo the web app starts with (``rankscope serve --demo``): no server, no network.

Writes the bundled demo collection to a directory, then fills a store with
an admin and a judge, a project ``demo``, its query set (with the searchers'
needs), the two embedded endpoints (``demo-baseline``, ``demo-tuned``) and
three evaluations that tell the story a search team lives:

1. ``baseline``: the baseline endpoint at depth 10, graded completely by the
   collection's shipped judgments (``qrels.txt``), imported as one rater,
   :data:`ASSESSOR` (the collection's README says who made them and how);
2. ``tuned, depth 20``: the tuned endpoint (stemming, title weight 4) at
   depth 20, compared with the baseline; grades are reused, so its top 10 is
   mostly graded already and the unjudged results further down (the holes)
   are its tasks to grade;
3. ``baseline, second grader``: the baseline again, two grades wanted per
   result: each has the assessor's, the judge gives the second, and the
   agreement page compares the two (the history of the baseline endpoint
   gets its second point).

The judge may grade evaluations 2 and 3; number 3 is the one printed.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rankscope.services.boundary import Boundary
    from rankscope.store.db import Store

__all__ = ["ASSESSOR", "DemoLogin", "setup_demo"]

ASSESSOR = "demo-assessor"
"""The rater of the shipped judgments (one assessor: see the demo collection's README)."""


@dataclass(frozen=True)
class DemoLogin:
    """Who may sign in to the demo, and what was made."""

    admin: str
    admin_password: str
    judge: str
    judge_password: str
    project_id: int
    evaluation_id: int
    baseline_id: int
    tuned_id: int


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


def setup_demo(store: Store, directory: str | Path, *, boundary: Boundary,
               metrics: tuple[str, ...] = ("nDCG@10", "P@5", "RR@10"),
               grades_wanted: int = 2) -> DemoLogin:
    """Write the demo collection to ``directory`` and set up the store around it.

    ``directory`` must be inside the ``boundary``'s files directory: the demo's
    endpoints are embedded ones whose corpus and index live there.

    ``evaluation_id`` of the answer is the evaluation ready to grade (the
    second grader's), ``baseline_id`` the completed baseline, ``tuned_id``
    the tuned endpoint's evaluation at depth 20 whose holes are to grade.
    """
    from rankscope.services.accounts import create_user
    from rankscope.services.campaign_runs import run_evaluation
    from rankscope.services.campaigns import EvaluationSpec, create_evaluation
    from rankscope.services.catalog import import_query_set, save_endpoint
    from rankscope.services.demo import init_demo
    from rankscope.services.exchange import import_grades
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
                             (target / name).read_text(encoding="utf-8"), boundary=boundary,
                             base_dir=target)
        endpoints[name] = view
    guidelines_file = target / "guidelines.md"
    guidelines = guidelines_file.read_text(encoding="utf-8") if guidelines_file.is_file() else ""
    baseline, tuned = endpoints["endpoint.toml"], endpoints["endpoint_tuned.toml"]

    def evaluation(name: str, endpoint_id: int, *, depth: int, wanted: int, annotation: str,
                   baseline_id: int | None = None) -> int:
        spec = EvaluationSpec(
            name=name, query_set_id=qs.id, endpoint_id=endpoint_id, scale="graded",
            grades_wanted=wanted, metrics=metrics, depth=depth, guidelines=guidelines,
            baseline_id=baseline_id, annotation=annotation)
        made = create_evaluation(store, admin, project.id, spec)
        run_evaluation(store, admin, made.id, boundary=boundary)
        return made.id

    first = evaluation("baseline", baseline.id, depth=10, wanted=1,
                       annotation="BM25 over title and text, weights 1:1, no stemming")
    import_grades(store, admin, first, (target / "qrels.txt").read_bytes(),
                  filename="qrels.txt", fmt="trec", rater=ASSESSOR)
    tuned_id = evaluation("tuned, depth 20", tuned.id, depth=20, wanted=1, baseline_id=first,
                          annotation="Porter stemming, title weighted 4x; depth 20")
    second = evaluation("baseline, second grader", baseline.id, depth=10, wanted=grades_wanted,
                        annotation="a second grader checks the assessor's grades")
    return DemoLogin("admin", admin_password, "judge", judge_password, project.id, second,
                     first, tuned_id)
