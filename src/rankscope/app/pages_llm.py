"""LLM judge pages: attach a judge to an evaluation, run it on the open tasks, let it count.

A run happens on a thread of the server (the page polls its status); the
answers are cached in ``llm-answers.sqlite`` in the server's data
directory, the same cache ``rankscope judge --cache`` reads.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from rankscope.app.core import Id, PageActor, render, settings_of
from rankscope.errors import OptionError
from rankscope.services import campaigns, llm_judges
from rankscope.services.accounts import Actor
from rankscope.services.boundary import CACHE_FILE

__all__ = ["CACHE_FILE", "router", "start_run"]

router = APIRouter(include_in_schema=False)  # pages: not part of the JSON API


@router.get("/evaluations/{evaluation_id}/llm", response_class=HTMLResponse)
def judges_page(request: Request, actor: PageActor, evaluation_id: Id) -> Response:
    store = settings_of(request).store
    judges = llm_judges.list_judges(store, actor, evaluation_id)
    ev = campaigns.get_evaluation(store, actor, evaluation_id)
    from rankscope.llm_judge.parse import PARSE_MODES
    from rankscope.llm_judge.prompts import BUILTIN_TEMPLATES
    from rankscope.llm_judge.providers import PROVIDERS

    return render(request, "llm.html", {"evaluation": ev, "judges": judges, "tab": "llm",
                                        "can_curate": True, "providers": sorted(PROVIDERS),
                                        "parse_modes": PARSE_MODES,
                                        "prompts": BUILTIN_TEMPLATES,
                                        "max_few_shot": llm_judges.MAX_FEW_SHOT,
                                        "boundary": settings_of(request).boundary}, actor=actor)


@router.post("/evaluations/{evaluation_id}/llm")
def judge_attach(request: Request, actor: PageActor, evaluation_id: Id,
                 endpoint: Annotated[str, Form()], model: Annotated[str, Form()],
                 api_key_env: Annotated[str, Form()] = "",
                 max_calls: Annotated[str, Form()] = "200",
                 counts: Annotated[str, Form()] = "",
                 name: Annotated[str, Form()] = "",
                 provider: Annotated[str, Form()] = "openai",
                 parse: Annotated[str, Form()] = "strict",
                 prompt: Annotated[str, Form()] = "",
                 few_shot: Annotated[str, Form()] = "0") -> Response:
    whole = {}
    for label, value in (("max calls", max_calls), ("few-shot examples", few_shot or "0")):
        try:
            whole[label] = int(value)
        except ValueError:
            raise OptionError(f"{label} is a whole number, not {value!r}") from None
    spec = llm_judges.JudgeSpec(endpoint=endpoint, model=model,
                                api_key_env=api_key_env.strip() or None,
                                max_calls=whole["max calls"], few_shot=whole["few-shot examples"],
                                counts=bool(counts), name=name.strip() or None,
                                provider=provider.strip(), parse=parse.strip(),
                                prompt=prompt.strip() or None)
    settings = settings_of(request)
    llm_judges.attach_judge(settings.store, actor, evaluation_id, spec,
                            boundary=settings.boundary)
    return RedirectResponse(f"/evaluations/{evaluation_id}/llm", status_code=303)


def start_run(request: Request, actor: Actor, judge_id: Id, *,
              retry_unrateable: bool = False) -> None:
    """Run the judge on a thread of the server (once at a time per judge); with
    ``retry_unrateable``, only its last run's unrateable results, past the cache."""
    settings = settings_of(request)
    key = -judge_id  # the runs map holds evaluations' runs by id; judges' by minus their id
    running = settings.runs.get(key)
    if running is not None and running.is_alive():
        return
    cache = settings.data_dir / CACHE_FILE

    def work() -> None:
        # the outcome (done with its summary, or failed with its error) is recorded on
        # the judge, which the page polls; nothing is left to report from this thread
        with contextlib.suppress(Exception):
            llm_judges.run_judge(settings.store, actor, judge_id, cache=cache,
                                 boundary=settings.boundary,
                                 retry_unrateable=retry_unrateable)

    thread = threading.Thread(target=work, name=f"llm-judge-{judge_id}", daemon=True)
    settings.runs[key] = thread
    thread.start()
    # the page shown next polls only a running judge: wait (briefly) until the run has
    # marked it running, or has ended already
    deadline = time.monotonic() + 5.0
    while thread.is_alive() and time.monotonic() < deadline:
        if llm_judges.get_judge(settings.store, actor, judge_id)["status"] == "running":
            break
        time.sleep(0.02)


@router.post("/llm-judges/{judge_id}/run")
def judge_run(request: Request, actor: PageActor, judge_id: Id,
              retry_unrateable: Annotated[str, Form()] = "") -> Response:
    judge = llm_judges.get_judge(settings_of(request).store, actor, judge_id)
    start_run(request, actor, judge_id, retry_unrateable=bool(retry_unrateable))
    return RedirectResponse(f"/evaluations/{judge['evaluation_id']}/llm", status_code=303)


@router.post("/llm-judges/{judge_id}/counts")
def judge_counts(request: Request, actor: PageActor, judge_id: Id,
                 counts: Annotated[str, Form()] = "") -> Response:
    judge = llm_judges.set_counts(settings_of(request).store, actor, judge_id, counts == "yes")
    return RedirectResponse(f"/evaluations/{judge['evaluation_id']}/llm", status_code=303)


@router.get("/llm-judges/{judge_id}/status", response_class=HTMLResponse)
def judge_status(request: Request, actor: PageActor, judge_id: Id) -> Response:
    return render(request, "_judge.html", {"j": llm_judges.get_judge(
        settings_of(request).store, actor, judge_id)}, actor=actor)
