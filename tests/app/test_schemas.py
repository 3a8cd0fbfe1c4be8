"""The API's input models are derived from the services' specs: one definition of each
field (its name, default, limit and meaning), so the API and the service cannot disagree."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import ValidationError

from rankscope.app import api
from rankscope.errors import InputError
from rankscope.services.campaigns import EvaluationSpec, create_evaluation
from rankscope.services.limits import MAX_NAME, MAX_NOTE, MAX_URL, check_spec
from rankscope.services.llm_judges import JudgeSpec

PAIRS = [(EvaluationSpec, api.EvaluationIn), (JudgeSpec, api.JudgeIn)]
REQUIRED = {EvaluationSpec: {"name": "e", "query_set_id": 1, "endpoint_id": 1},
            JudgeSpec: {"endpoint": "http://127.0.0.1:8080/v1", "model": "m"}}


@pytest.mark.parametrize(("spec", "model"), PAIRS)
def test_the_api_model_has_the_specs_fields_defaults_and_meaning(spec, model):
    fields = {f.name: f for f in dataclasses.fields(spec)}
    assert set(model.model_fields) == set(fields)
    body = model(**REQUIRED[spec])
    made = spec(**REQUIRED[spec])
    for name, f in fields.items():
        assert model.model_fields[name].description == f.metadata["doc"]
        # the same default either way (a tuple of metrics arrives as a list)
        given = getattr(body, name)
        assert (list(given) if isinstance(given, list) else given) == (
            list(getattr(made, name)) if isinstance(getattr(made, name), tuple)
            else getattr(made, name))
    # the body builds the spec as it is (the route does exactly this)
    assert spec(**body.model_dump()) == dataclasses.replace(made, **{
        k: v for k, v in body.model_dump().items() if isinstance(v, list)})


@pytest.mark.parametrize(("spec", "field", "limit", "value"), [
    (EvaluationSpec, "name", MAX_NAME, "x"),
    (EvaluationSpec, "annotation", MAX_NOTE, "x"),
    # a metric name: the API allowed 200 characters, the service 2,000 (two definitions)
    (EvaluationSpec, "metrics", MAX_NAME, ["x"]),
    (JudgeSpec, "endpoint", MAX_URL, "http://h/"),
    (JudgeSpec, "model", MAX_NAME, "m"),
    (JudgeSpec, "provider", MAX_NAME, "openai"),
    (JudgeSpec, "prompt", MAX_NAME, "assessor"),
])
def test_one_limit_for_the_api_and_the_service(spec, field, limit, value):
    def sized(n):
        text = (value[0] if isinstance(value, list) else value)
        text = text + "x" * (n - len(text))
        return [text] if isinstance(value, list) else text

    model = dict(PAIRS)[spec]
    fits = {**REQUIRED[spec], field: sized(limit)}
    over = {**REQUIRED[spec], field: sized(limit + 1)}
    model(**fits)
    check_spec(spec(**fits))
    with pytest.raises(ValidationError):
        model(**over)
    with pytest.raises(InputError, match=f"longer than {limit:,} characters"):
        check_spec(spec(**over))


def test_the_service_checks_its_spec_by_the_declared_limits():
    # create_evaluation refuses a too-long metric before touching the store
    spec = EvaluationSpec(**{**REQUIRED[EvaluationSpec], "metrics": ["m" * (MAX_NAME + 1)]})
    with pytest.raises(InputError, match="a metric is longer than 200 characters"):
        create_evaluation(None, None, 1, spec)  # type: ignore[arg-type]
