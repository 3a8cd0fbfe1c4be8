"""The API's input models are derived from the services' specs: one definition of each
field (its name, default, limit and meaning), so the API and the service cannot disagree."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import ValidationError

from rankscope.app import api, api_tries
from rankscope.errors import InputError
from rankscope.services import accounts, sessions
from rankscope.services.accounts import UserSpec, UserUpdateSpec
from rankscope.services.adjudication import AdjudicationSpec
from rankscope.services.assignment import MAX_BATCH
from rankscope.services.campaigns import (
    EvaluationSettingsSpec,
    EvaluationSpec,
    create_evaluation,
    update_evaluation,
)
from rankscope.services.catalog import MAX_TEXT, EndpointSpec, QuerySetSpec
from rankscope.services.grading import GradeBatchSpec, GradeInput, submit_batch
from rankscope.services.limits import (
    MAX_EXPLANATION,
    MAX_GUIDELINES,
    MAX_NAME,
    MAX_NOTE,
    MAX_URL,
    MAX_USER_NAME,
    check_spec,
)
from rankscope.services.llm_judges import JudgeSpec
from rankscope.services.pool import PoolSpec
from rankscope.services.projects import MemberSpec, ProjectSpec
from rankscope.services.tries import MAX_CHANGES, TrySpec

PAIRS = [(EvaluationSpec, api.EvaluationIn), (JudgeSpec, api.JudgeIn),
         (ProjectSpec, api.ProjectIn), (MemberSpec, api.MemberIn),
         (QuerySetSpec, api.QuerySetIn), (EndpointSpec, api.EndpointIn),
         (GradeInput, api.GradeIn), (TrySpec, api_tries.TryIn), (PoolSpec, api_tries.PoolIn),
         (AdjudicationSpec, api.AdjudicationIn), (UserSpec, api.UserIn),
         (UserUpdateSpec, api.UserUpdateIn), (EvaluationSettingsSpec, api.SettingsIn),
         (GradeBatchSpec, api.BatchIn)]
REQUIRED = {EvaluationSpec: {"name": "e", "query_set_id": 1, "endpoint_id": 1},
            JudgeSpec: {"endpoint": "http://127.0.0.1:8080/v1", "model": "m"},
            ProjectSpec: {"name": "p"}, MemberSpec: {"name": "u"},
            QuerySetSpec: {"name": "q"}, EndpointSpec: {"toml": "kind = 'x'"},
            GradeInput: {"task_id": 1}, TrySpec: {}, PoolSpec: {"query_id": "q", "doc_id": "d"},
            AdjudicationSpec: {"query_id": "q", "doc_id": "d", "value": 2},
            UserSpec: {"name": "u", "role": "judge"}, UserUpdateSpec: {},
            EvaluationSettingsSpec: {}, GradeBatchSpec: {"batch_id": "b", "grades": []}}


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
    (ProjectSpec, "name", MAX_NAME, "p"),
    (MemberSpec, "name", MAX_USER_NAME, "u"),
    (MemberSpec, "role", MAX_NAME, "judge"),
    (QuerySetSpec, "name", MAX_NAME, "q"),
    (QuerySetSpec, "text", MAX_TEXT, "q1\tshoes\n"),
    (QuerySetSpec, "source", MAX_NAME, "q.tsv"),
    (QuerySetSpec, "collection", MAX_NAME, "irds:x"),
    (EndpointSpec, "toml", MAX_TEXT, "kind = 'x'\n"),
    (EndpointSpec, "name", MAX_NAME, "e"),
    (GradeInput, "reason", MAX_NOTE, "r"),
    (GradeInput, "explanation", MAX_EXPLANATION, "e"),
    (TrySpec, "changes", MAX_NAME, ["k=1"]),
    (TrySpec, "query_id", MAX_NAME, "q"),
    (PoolSpec, "doc_id", MAX_NAME, "d"),
    (PoolSpec, "url", MAX_NOTE, "https://x/"),
    (AdjudicationSpec, "note", MAX_NOTE, "n"),
    (UserSpec, "name", MAX_USER_NAME, "u"),
    (UserSpec, "password", accounts.MAX_PASSWORD, "p"),
    (UserUpdateSpec, "password", accounts.MAX_PASSWORD, "p"),
    (EvaluationSettingsSpec, "annotation", MAX_NOTE, "a"),
    (EvaluationSettingsSpec, "guidelines", MAX_GUIDELINES, "g"),
    (GradeBatchSpec, "batch_id", MAX_NAME, "b"),
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


def test_a_limit_declared_once_is_the_apis_and_the_services():
    # a limit changed in one place (the spec's field) changes both
    from rankscope.app.schemas import schema_of
    from rankscope.services.limits import spec_field

    @dataclasses.dataclass(frozen=True)
    class Tiny:
        """A tiny spec."""

        name: str = spec_field(doc="A name.", limit=3, label="the name")

    model = schema_of(Tiny, "TinyIn")
    model(name="abc")
    check_spec(Tiny("abc"))
    with pytest.raises(ValidationError):
        model(name="abcd")
    with pytest.raises(InputError, match="the name is longer than 3 characters"):
        check_spec(Tiny("abcd"))


@pytest.fixture
def api_client(store, world, collection):
    from fastapi.testclient import TestClient

    from rankscope.app.factory import create_app
    from rankscope.services import sessions

    token = sessions.create_token(store, world.curator.name)
    return TestClient(create_app(store, collection),
                      headers={"Authorization": f"Bearer {token}"})


def test_the_api_refuses_what_the_service_refuses(store, world, api_client):
    from rankscope.services import catalog, projects

    pid = world.evaluation.project_id
    long_name = "p" * (MAX_NAME + 1)
    # the service: an InputError naming the field by its spec's label
    with pytest.raises(InputError, match="a project name is longer than 200"):
        projects.create_project(store, world.curator, long_name)
    with pytest.raises(InputError, match="the user name is longer than 100"):  # MAX_USER_NAME
        projects.add_member(store, world.curator, pid, long_name, "judge")
    with pytest.raises(InputError, match="the query set's name is longer than 200"):
        catalog.import_query_set(store, world.curator, pid, long_name, "q1\tshoes\n")
    with pytest.raises(InputError, match="the collection is longer than 200"):
        catalog.import_query_set_from_collection(store, world.curator, pid, "q",
                                                 "irds:" + long_name, ["*"])
    with pytest.raises(InputError, match="the endpoint's name is longer than 200"):
        catalog.save_endpoint(store, world.curator, pid, "kind = 'x'\n", name=long_name,
                              boundary=None)  # type: ignore[arg-type]
    # the API: the same values are a 422 naming the field, before the service
    for path, body, field in [
        ("/api/v1/projects", {"name": long_name}, "name"),
        (f"/api/v1/projects/{pid}/members", {"name": long_name}, "name"),
        (f"/api/v1/projects/{pid}/query-sets", {"name": long_name, "text": "q1\tx\n"}, "name"),
        (f"/api/v1/projects/{pid}/query-sets", {"name": "q", "collection": "irds:" + long_name},
         "collection"),
        (f"/api/v1/projects/{pid}/endpoints", {"toml": "kind = 'x'\n", "name": long_name},
         "name"),
        (f"/api/v1/projects/{pid}/members", {"name": "u", "nickname": "x"}, "nickname"),
    ]:
        answer = api_client.post(path, json=body)
        assert answer.status_code == 422, (path, answer.text)
        assert answer.json()["error"].startswith(field), answer.json()
    # and within the limits both take them: a project at exactly the limit
    made = api_client.post("/api/v1/projects", json={"name": "p" * MAX_NAME})
    assert made.status_code == 201 and made.json()["name"] == "p" * MAX_NAME


def test_the_most_changes_of_a_try_are_one_limit():
    fits = {"changes": ["k=1"] * MAX_CHANGES}
    over = {"changes": ["k=1"] * (MAX_CHANGES + 1)}
    api_tries.TryIn(**fits)
    check_spec(TrySpec(**fits))
    with pytest.raises(ValidationError):
        api_tries.TryIn(**over)
    with pytest.raises(InputError, match=f"at most {MAX_CHANGES} items"):
        check_spec(TrySpec(**over))


def test_reading_a_tries_changes_says_their_limit_in_the_shared_words():
    # read_changes worded the limit its own way ("a try makes at most 50 changes", an
    # OptionError); a spec's field says "LABEL: at most N items, not M" (check_spec), and so
    # must the changes read without their spec
    from rankscope.search.config import endpoint_from_dict
    from rankscope.services.tries import read_changes

    config = endpoint_from_dict({"kind": "http", "url": "http://127.0.0.1:9/s", "hits": "r",
                                 "params": {"q": "{{query}}", "k": "{{k}}"},
                                 "variables": {"k": "1"}})
    over = ["k=1"] * (MAX_CHANGES + 1)
    with pytest.raises(InputError) as by_spec:
        check_spec(TrySpec(changes=over))
    with pytest.raises(InputError) as read:
        read_changes(config, over)
    said = f"a change: at most {MAX_CHANGES} items, not {MAX_CHANGES + 1}"
    assert str(read.value) == str(by_spec.value) == said


@pytest.mark.parametrize("value", ["1", " 1", True, 1.0, 0, 2**31])
def test_an_id_in_a_body_is_a_whole_number_not_text(value):
    """The module's promise: a number given as text in a JSON body is a 422 (a path, a
    query or a form carry text, and their ids are read from it)."""
    api.GradeIn(task_id=1, value=2)
    with pytest.raises(ValidationError):
        api.GradeIn(task_id=value, value=2)


@pytest.mark.parametrize("value", [True, "2", [2]])
def test_a_grade_is_a_number_not_true_nor_text(value):
    api.GradeIn(task_id=1, value=2)
    api.GradeIn(task_id=1, value=1.5)
    with pytest.raises(ValidationError):
        api.GradeIn(task_id=1, value=value)


def test_a_user_name_the_service_refuses_is_refused_by_the_api(store, world, collection):
    # user names are at most 100 characters (MAX_USER_NAME); the hand-written UserIn
    # took up to 200 (limits.MAX_NAME), which the service then refused with a 400
    from fastapi.testclient import TestClient

    from rankscope.app.factory import create_app

    token = sessions.create_token(store, world.admin.name)
    client = TestClient(create_app(store, collection),
                        headers={"Authorization": f"Bearer {token}"})
    name = "u" * 150
    with pytest.raises(InputError, match="a user name is longer than 100 characters"):
        accounts.create_user(store, name, "judge", None)
    answer = client.post("/api/v1/users", json={"name": name, "role": "judge"})
    assert answer.status_code == 422 and answer.json()["error"].startswith("name")
    made = client.post("/api/v1/users", json={"name": "u" * 100, "role": "judge"})
    assert made.status_code == 201


def test_a_batchs_grades_are_the_grade_model_bounded_by_the_spec():
    # the batch's grades are GradeIn itself (one model in the OpenAPI document), as many as
    # the spec's items allow (assignment.MAX_BATCH), each limited as GradeInput declares
    assert api.BatchIn.model_fields["grades"].annotation == list[api.GradeIn]
    grade = {"task_id": 1, "value": 2}
    fits = {"batch_id": "b", "grades": [grade] * MAX_BATCH}
    over = {"batch_id": "b", "grades": [grade] * (MAX_BATCH + 1)}
    api.BatchIn(**fits)
    check_spec(GradeBatchSpec("b", [GradeInput(1, 2)] * MAX_BATCH))
    with pytest.raises(ValidationError):
        api.BatchIn(**over)
    with pytest.raises(InputError, match=f"at most {MAX_BATCH} items"):
        check_spec(GradeBatchSpec("b", [GradeInput(1, 2)] * (MAX_BATCH + 1)))
    # a grade inside the batch is checked by its own spec's limits, both sides
    long_reason = "r" * (MAX_NOTE + 1)
    with pytest.raises(ValidationError):
        api.BatchIn(batch_id="b", grades=[{"task_id": 1, "value": None,
                                           "reason": long_reason}])
    with pytest.raises(InputError, match=f"the reason is longer than {MAX_NOTE:,}"):
        check_spec(GradeBatchSpec("b", [GradeInput(1, None, long_reason)]))
    # and a grade with a field GradeInput does not declare is refused, not ignored
    with pytest.raises(ValidationError):
        api.BatchIn(batch_id="b", grades=[{"task_id": 1, "value": 2, "grade": 3}])
    # the model names the nested spec's fields as the spec does
    schema = api.BatchIn.model_json_schema()
    assert set(schema["$defs"]["GradeIn"]["properties"]) == {
        f.name for f in dataclasses.fields(GradeInput)}


def test_a_batch_the_service_refuses_the_api_refuses(store, world, api_client):
    ev = world.evaluation.id
    long_id = "b" * (MAX_NAME + 1)
    many = [GradeInput(1, 2)] * (MAX_BATCH + 1)
    with pytest.raises(InputError, match="the batch id is longer than 200"):
        submit_batch(store, world.curator, ev, long_id, [GradeInput(1, 2)])
    with pytest.raises(InputError, match=f"a batch: at most {MAX_BATCH} items"):
        submit_batch(store, world.curator, ev, "b", many)
    for body, field in [
        ({"batch_id": long_id, "grades": []}, "batch_id"),
        ({"batch_id": "b", "grades": [{"task_id": 1, "value": 2}] * (MAX_BATCH + 1)},
         "grades"),
        ({"grades": []}, "batch_id"),
    ]:
        answer = api_client.post(f"/api/v1/evaluations/{ev}/grades", json=body)
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"].startswith(field), answer.json()


def _second_evaluation(store, world):
    from rankscope.services import campaigns

    return campaigns.create_evaluation(store, world.curator, world.project.id, EvaluationSpec(
        name="second", query_set_id=world.query_set.id, endpoint_id=world.tuned.id)).id


def test_settings_keep_set_or_clear_the_baseline(store, world, api_client):
    # the API's JSON as before: baseline_id sets it, clear_baseline removes it, neither (or a
    # null baseline_id) keeps it
    ev = world.evaluation.id
    second = _second_evaluation(store, world)
    url = f"/api/v1/evaluations/{second}/settings"

    def baseline(body):
        answer = api_client.post(url, json=body)
        assert answer.status_code == 200, answer.text
        return answer.json()["baseline_id"]

    assert baseline({"baseline_id": ev}) == ev
    assert baseline({"annotation": "v2"}) == ev
    assert baseline({"baseline_id": None}) == ev
    assert baseline({"clear_baseline": False}) == ev
    assert baseline({"clear_baseline": True}) is None
    assert baseline({"baseline_id": ev, "clear_baseline": False}) == ev


def test_a_baseline_both_set_and_cleared_is_refused(store, world, api_client):
    # the hand-written SettingsIn let clear_baseline win quietly over a baseline_id given
    from rankscope.errors import OptionError

    ev = world.evaluation.id
    second = _second_evaluation(store, world)
    both = EvaluationSettingsSpec(baseline_id=ev, clear_baseline=True)
    with pytest.raises(OptionError, match=r"either set .* or cleared"):
        update_evaluation(store, world.curator, second, both)
    answer = api_client.post(f"/api/v1/evaluations/{second}/settings",
                             json={"baseline_id": ev, "clear_baseline": True})
    assert answer.status_code == 400, answer.text
    assert "either set" in answer.json()["error"]


def test_settings_the_service_refuses_the_api_refuses(store, world, api_client):
    ev = world.evaluation.id
    long_note = "n" * (MAX_NOTE + 1)
    with pytest.raises(InputError, match=f"the annotation is longer than {MAX_NOTE:,}"):
        update_evaluation(store, world.curator, ev, EvaluationSettingsSpec(annotation=long_note))
    for body, field in [({"annotation": long_note}, "annotation"),
                        ({"guidelines": "g" * (MAX_GUIDELINES + 1)}, "guidelines"),
                        ({"baseline_id": "one"}, "baseline_id"),
                        ({"clear_baseline": "yes"}, "clear_baseline"),
                        ({"keep": True}, "keep")]:
        answer = api_client.post(f"/api/v1/evaluations/{ev}/settings", json=body)
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"].startswith(field), answer.json()
