"""Schemathesis hooks for scripts/fuzz/run.sh.

The fuzzer calls every operation with the one admin token it was given. A write aimed at that
admin's own user, role, session or tenant (a PUT of the admin role with other permissions, the
user disabled, the session revoked) would leave it answered 401/403 for the rest of the run, and
the run would test nothing. Such writes go to an id that names nothing instead: they still test
the route's answer (404), never the fuzzer's own authority.
"""

import os

import schemathesis

PROTECTED = {value for value in os.environ.get("FUZZ_PROTECTED_IDS", "").split(",") if value}
NOBODY = "00000000-0000-7000-8000-000000000000"


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.method.upper() == "GET" or not case.path_parameters:
        return
    for name, value in case.path_parameters.items():
        if str(value) in PROTECTED:
            case.path_parameters[name] = NOBODY
