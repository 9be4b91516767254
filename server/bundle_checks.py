"""A submitted bundle's check (the gate, compiler/gate.py, and the entry's parameters) away from the
API's event loop and its GIL: in a small pool of processes, one check at a time per tenant, so that
one tenant's heavy bundles wait behind each other, never in front of another tenant's, and the API
serves everyone meanwhile. A bundle that passed is remembered by its tenant and digest: a cached
launch's check costs a hash, no trip to the pool, and how fast a check answers tells a tenant
nothing of what another submitted. What a tenant's checks cost the pool's CPU is charged to it as
each ends: past its check_seconds_per_minute, its next check is refused before it runs (ChecksSpent)."""
from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import math
import multiprocessing
import time
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from ..compiler import frontend, gate
from ..compiler.bundle import KernelBundle
from ..compiler.errors import BundleRejected
from ..compiler.frontend import constexpr_params, param_annotations, param_names
from ..compiler.gate import validate

CHECK_PROCESSES = 2  # the pool's processes: a check holds a core for up to about a second (gate.py's bounds)
PASSED_KEPT = 1024  # (tenant, digest) of bundles that passed, remembered in this process


@dataclass(frozen=True)
class Checked:
    bundle: KernelBundle
    names: Tuple[str, ...]  # the entry's parameters
    constexprs: frozenset  # those of them that are ConstExpr
    annotations: Tuple[str, ...]  # each parameter's annotation as spelled ("" for none)


class ChecksSpent(Exception):
    """The tenant's checks took its check_seconds_per_minute: none runs for `retry_after_s`."""

    def __init__(self, message: str, retry_after_s: float):
        super().__init__(message)
        self.retry_after_s = retry_after_s


def signature(bundle_json: Dict[str, Any]) -> Tuple[Optional[str], Tuple[str, ...], Tuple[str, ...],
                                                   Tuple[str, ...], float]:
    """In a pool process: (why the gate refuses the bundle, else None; its entry's parameters; its
    ConstExpr ones; the parameters' annotations; the CPU seconds the check took). A refusal travels
    as its message: it is the same text the caller gets."""
    start = time.process_time()
    try:
        bundle = KernelBundle.from_json(bundle_json)
        validate(bundle)
        found = None, tuple(param_names(bundle)), tuple(constexpr_params(bundle)), tuple(param_annotations(bundle))
    except BundleRejected as e:
        found = str(e), (), (), ()
    finally:  # a pool process sees each bundle once (the API remembers passes): its caches would only grow,
        for cache in (gate._validate_digest, gate._parse, frontend._entry_node):  # a few MiB a tree
            cache.cache_clear()
    return (*found, time.process_time() - start)


class BundleChecks:
    def __init__(self, processes: int = CHECK_PROCESSES):
        self.processes = processes
        self._pool: Optional[concurrent.futures.ProcessPoolExecutor] = None
        self._turns: Dict[str, asyncio.Semaphore] = {}  # tenant -> its one check at a time
        self._owed: Dict[str, Tuple[float, float]] = {}  # tenant -> (CPU seconds of its checks not yet paid off, when)
        # (tenant, digest) -> (names, constexprs, annotations)
        self._passed: collections.OrderedDict = collections.OrderedDict()

    async def check(self, tenant: str, bundle: KernelBundle, digest: str,
                    seconds_per_minute: float = math.inf) -> Checked:
        """The bundle (of `digest`) with its entry's parameters once the gate passed it; BundleRejected
        saying why not; ChecksSpent if the tenant's checks took `seconds_per_minute` of CPU."""
        if (tenant, digest) not in self._passed:
            async with self._turns.setdefault(tenant, asyncio.Semaphore(1)):
                owed = self._charge(tenant, 0.0, seconds_per_minute)
                if owed >= seconds_per_minute:
                    raise ChecksSpent(f"your bundle checks took more than {seconds_per_minute:g} s of CPU this "
                                      "minute (check_seconds_per_minute)",
                                      (owed - seconds_per_minute) * 60 / seconds_per_minute)
                refusal, names, constexprs, annotations, cpu_s = await self._run(bundle)
                self._charge(tenant, cpu_s, seconds_per_minute)
            if refusal is not None:
                raise BundleRejected(refusal)
            self._passed[tenant, digest] = (names, frozenset(constexprs), annotations)
            while len(self._passed) > PASSED_KEPT:
                self._passed.popitem(last=False)
        self._passed.move_to_end((tenant, digest))
        names, constexprs, annotations = self._passed[tenant, digest]
        return Checked(bundle, names, constexprs, annotations)

    def _charge(self, tenant: str, cpu_s: float, seconds_per_minute: float) -> float:
        """The CPU seconds the tenant's checks owe with `cpu_s` added: they are paid off at
        seconds_per_minute, and a tenant that owes none is forgotten."""
        now = time.monotonic()
        owed, then = self._owed.pop(tenant, (0.0, now))
        paid = (now - then) * seconds_per_minute / 60 if now > then else 0.0
        owed = max(0.0, owed - paid) + cpu_s
        if owed > 0:
            self._owed[tenant] = (owed, now)
        return owed

    async def _run(self, bundle: KernelBundle):
        if self._pool is None:  # spawned, not forked: the API process has threads
            self._pool = concurrent.futures.ProcessPoolExecutor(self.processes, multiprocessing.get_context("spawn"))
            for _ in range(self.processes):  # every process starts now: a second tenant's check waits for no import
                self._pool.submit(int)
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, signature, bundle.to_json())
        except BrokenProcessPool:
            self._pool = None  # the next check starts a new pool
            raise BundleRejected("checking this bundle ended the process that checked it: the bundle is refused")

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
