"""`ascrun targets`: the live pool, each target's workers by SOC, what they run, its queue."""
from __future__ import annotations

import argparse
from typing import Any, Dict, List

from ..compiler.errors import EXIT_OK
from .common import add_command, client_for, emit


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    add_command(sub, "targets", cmd_targets, "the live pool: workers per target and SOC, what they run, queue depth",
                (common,))


def cmd_targets(opts: argparse.Namespace) -> int:
    with client_for(opts) as client:
        targets = client.targets()
    emit(opts, {"targets": targets}, "\n".join(targets_table(targets)))
    return EXIT_OK


def targets_table(targets: List[Dict[str, Any]]) -> List[str]:
    """The live pool: a line per target (workers, by SOC, queue), a line per live worker."""
    lines = [f"{'target':8} {'workers':>7}  {'queued':>6}  {'oldest':>7}  socs"]
    for t in targets:
        oldest = "-" if t["oldest_queued_s"] is None else f"{t['oldest_queued_s']:.1f}s"
        socs = ", ".join(f"{soc} ({n})" for soc, n in sorted(t["socs"].items())) or "-"
        lines.append(f"{t['name']:8} {t['workers']:>7}  {t['queued']:>6}  {oldest:>7}  {socs}")
        for w in t["live"]:
            lines.append(f"  {w['name']}: {' + '.join(w.get('stages') or ['build', 'run'])}; "
                         f"socs {', '.join(w['socs']) or '-'}; kernel types "
                         f"{', '.join(w['kernel_types']) or '-'}; cores {w.get('cores') or '-'}; "
                         f"pyasc {w.get('pyasc') or '-'}; CANN {w.get('cann') or '-'}")
    return lines
