"""The API's check pool (server/bundle_checks.py) remembers the bundles that passed, per tenant:
another tenant's submission of the same bundle is checked again, so how fast a check answers tells
a tenant nothing of what others submitted (the compile caches are per tenant for the same reason)."""
import asyncio

import pytest

import ascrun
import ops
from ascrun.server.bundle_checks import BundleChecks

pytestmark = pytest.mark.kernel  # the check runs in spawned processes


class CountedChecks(BundleChecks):
    """The real pool, its trips to it counted."""
    trips = 0

    async def _run(self, bundle):
        self.trips += 1
        return await super()._run(bundle)


def test_a_bundle_another_tenant_passed_is_checked_again():
    bundle = ascrun.compiler.bundle.collect(ops.spin_kernel)
    checks = CountedChecks(processes=1)

    async def run():
        first = await checks.check("alice", bundle, bundle.digest)
        again = await checks.check("alice", bundle, bundle.digest)
        other = await checks.check("bob", bundle, bundle.digest)
        return first, again, other

    try:
        first, again, other = asyncio.run(run())
    finally:
        checks.close()
    assert first.names == again.names == other.names == ("x", "z", "rounds")
    assert checks.trips == 2  # alice's second check was remembered; bob's first was not
