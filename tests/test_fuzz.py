"""A property-based fuzzer over the server's own OpenAPI schema: no input may cause a 5xx.

schemathesis generates valid and invalid requests for every operation (bodies, paths, queries,
headers) against the real server; the check is `not_a_server_error`."""
import pytest
import schemathesis
from hypothesis import HealthCheck, given, seed, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.core.errors import InvalidSchema
from schemathesis.generation import GenerationMode

pytestmark = pytest.mark.service

EXAMPLES_PER_OPERATION = 25
SEED = 2


def test_no_request_makes_a_server_error(service):
    schema = schemathesis.openapi.from_url(f"{service.url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10
    structs_sent = []  # bodies of POST /v1/jobs whose bundle defines structs
    gave_up = []  # operations whose negative generation schemathesis could not complete
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            @given(case=operation.as_strategy(generation_mode=mode))
            # A fixed seed: the same cases every run, so that CI's verdict is reproducible
            @seed(SEED)
            @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck),
                      database=None)
            def fuzz(case):
                body = case.body if isinstance(case.body, dict) else {}
                bundle = body.get("bundle")
                if operation.path == "/v1/jobs" and isinstance(bundle, dict) and bundle.get("structs"):
                    structs_sent.append(body)
                case.call_and_validate(checks=[not_a_server_error], timeout=60)

            try:
                fuzz()
            except Unsatisfiable:
                # an operation with no inputs (GET /v1/health) has no invalid form to generate
                assert mode is GenerationMode.NEGATIVE
            except InvalidSchema as e:
                # schemathesis's negative generator gives up on some draws of the job body (the
                # minItems 1 of bundle functions and struct members), whatever the seed; not a
                # server's answer: the positive run of the same operation still went through
                assert mode is GenerationMode.NEGATIVE and "Cannot generate an array" in str(e), e
                gave_up.append(f"{operation.method.upper()} {operation.path}")
    assert structs_sent  # the schema lets the fuzzer reach the struct checks
    assert set(gave_up) <= {"POST /v1/jobs"}, gave_up
