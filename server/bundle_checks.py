"""A submitted bundle's check (the gate, compiler/gate.py, and the entry's parameters) away from the
API's event loop and its GIL: in a small pool of processes, one check at a time per tenant, so that
one tenant's heavy bundles wait behind each other, never in front of another tenant's, and the API
serves everyone meanwhile. A bundle that passed is remembered by its tenant and digest: a cached
launch's check costs a hash, no trip to the pool, and how fast a check answers tells a tenant
nothing of what another submitted."""
from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import multiprocessing
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


def signature(bundle_json: Dict[str, Any]) -> Tuple[Optional[str], Tuple[str, ...], Tuple[str, ...], Tuple[str, ...]]:
    """In a pool process: (why the gate refuses the bundle, else None; its entry's parameters; its
    ConstExpr ones; the parameters' annotations). A refusal travels as its message: it is the same
    text the caller gets."""
    try:
        bundle = KernelBundle.from_json(bundle_json)
        validate(bundle)
        return None, tuple(param_names(bundle)), tuple(constexpr_params(bundle)), tuple(param_annotations(bundle))
    except BundleRejected as e:
        return str(e), (), (), ()
    finally:  # a pool process sees each bundle once (the API remembers passes): its caches would only grow,
        for cache in (gate._validate_digest, gate._parse, frontend._entry_node):  # a few MiB a tree
            cache.cache_clear()


class BundleChecks:
    def __init__(self, processes: int = CHECK_PROCESSES):
        self.processes = processes
        self._pool: Optional[concurrent.futures.ProcessPoolExecutor] = None
        self._turns: Dict[str, asyncio.Semaphore] = {}  # tenant -> its one check at a time
        # (tenant, digest) -> (names, constexprs, annotations)
        self._passed: collections.OrderedDict = collections.OrderedDict()

    async def check(self, tenant: str, bundle: KernelBundle, digest: str) -> Checked:
        """The bundle (of `digest`) with its entry's parameters once the gate passed it; BundleRejected
        saying why not."""
        if (tenant, digest) not in self._passed:
            async with self._turns.setdefault(tenant, asyncio.Semaphore(1)):
                refusal, names, constexprs, annotations = await self._run(bundle)
            if refusal is not None:
                raise BundleRejected(refusal)
            self._passed[tenant, digest] = (names, frozenset(constexprs), annotations)
            while len(self._passed) > PASSED_KEPT:
                self._passed.popitem(last=False)
        self._passed.move_to_end((tenant, digest))
        names, constexprs, annotations = self._passed[tenant, digest]
        return Checked(bundle, names, constexprs, annotations)

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
