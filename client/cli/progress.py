"""What the CLI shows while a launch is in flight: a rich progress display on a terminal, nothing
otherwise (CI logs and pipes get the command's result, or its --json, and nothing else)."""
from __future__ import annotations

from typing import Any, Optional, TextIO

from ..compat.script import QuietProgress
from ..job_status import JobStatus


class TerminalProgress:
    """One line per launch: upload bar, then the job's state, with elapsed time; replaced by the
    launch's summary line when it ends (if `summaries`)."""

    def __init__(self, stream: TextIO, summaries: bool = True):
        from rich.console import Console
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self._bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                             TextColumn("{task.fields[detail]}"), TimeElapsedColumn(),
                             console=Console(file=stream), transient=True)
        self._bar.start()
        self._task: Optional[int] = None
        self._label = ""
        self._summaries = summaries

    def begin(self, label: str) -> None:
        self._label = label
        self._task = self._bar.add_task(f"{label}: preparing", total=None, detail="")

    def on_upload(self, sent: int, total: int) -> None:
        from rich.filesize import decimal
        detail = f"{decimal(sent)} / {decimal(total)}" if total else "the pool has the tensors"
        self._bar.update(self._task, description=f"{self._label}: uploading", total=total or None, completed=sent,
                         detail=detail, refresh=True)

    def on_status(self, handle: Any) -> None:
        state = "compiling and running" if handle.status == JobStatus.STARTED else state_of(handle.record)
        self._bar.update(self._task, description=f"{self._label}: {state}", total=None, detail=f"job {handle.id[:12]}",
                         refresh=True)

    def end(self, line: str) -> None:
        self._bar.remove_task(self._task)
        if self._summaries:
            self._bar.console.print(line, highlight=False, markup=False)

    def close(self) -> None:
        self._bar.stop()


def state_of(record: dict) -> str:
    """"queued: 3rd of 7" for a job waiting in its queue, else its status."""
    if record["status"] != JobStatus.QUEUED or record.get("queue_position") is None:
        return record["status"]
    n = record["queue_position"]
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"queued: {n}{suffix} of {record['queue_depth']}"


def progress_for(stream: TextIO, summaries: bool = True):
    """TerminalProgress when `stream` is a terminal and rich is installed (the `cli` extra), else quiet."""
    if stream.isatty():
        try:
            return TerminalProgress(stream, summaries)
        except ImportError:
            pass
    return QuietProgress()
