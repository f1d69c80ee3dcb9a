# Schemathesis checks of our own, loaded by .ci/fuzz-api (SCHEMATHESIS_HOOKS=fuzz_hooks).
#
# The built-in checks accept any status the document lists, and every admin operation lists
# 200 beside 401 and 403: an admin route that lost its guard would answer a guest 200 and
# pass. FUZZ_ROLE says who the run is (guest, user or admin); for a guest and for a
# signed-in person who is not an administrator, an admin operation must refuse.
import os

import schemathesis

# Who is not an administrator. Either refusal will do for both: a guest's request that
# carries a made-up session cookie and no Origin, say, is refused by the CSRF check (403).
NOT_ADMIN = {"guest", "user"}
REFUSALS = {401, 403}
# Answers given before any handler runs, so before the guard can: no such method, a body
# over the size limit. (Not 404: a handler's "no such post" would be a guard let through.)
BEFORE_HANDLER = {405, 413}


@schemathesis.check
def admin_refuses_non_admins(ctx, response, case):
    """An operation under /api/admin/ refuses a caller who is not an administrator."""
    role = os.environ.get("FUZZ_ROLE", "")
    if role not in NOT_ADMIN or not case.operation.path.startswith("/api/admin/"):
        return None
    # Probes with another method (OPTIONS, a CORS preflight) are not the operation.
    if case.method.upper() != case.operation.method.upper():
        return None
    status = response.status_code
    if status in REFUSALS or status in BEFORE_HANDLER:
        return True
    raise AssertionError(
        f"{case.operation.label} answered {status} to a {role}; an admin operation must refuse (401 or 403)"
    )
