"""Limits a jailed stage puts on itself before it reads a request (Linux; inside.py's stages).

Resource limits bound memory, CPU time and open files; a seccomp filter takes away new programs,
sockets, ptrace, namespaces and signals to other processes (and, but for the frontend's zygote,
new processes). This is the second line: the jail (bwrap.py) is the first.
"""
from __future__ import annotations

import ctypes
import errno
import resource
from typing import Dict

import pyseccomp as seccomp

CLONE_THREAD = 0x00010000  # <sched.h>


def limit_resources(cpu_seconds: int, max_files: int, memory_bytes: int) -> None:
    """RLIMIT_CPU, RLIMIT_NOFILE and (unless memory_bytes is 0) RLIMIT_AS; no core dumps."""
    limits = [(resource.RLIMIT_CPU, cpu_seconds), (resource.RLIMIT_NOFILE, max_files), (resource.RLIMIT_CORE, 0)]
    if memory_bytes > 0:
        limits.append((resource.RLIMIT_AS, memory_bytes))
    for which, value in limits:
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, hard if hard != resource.RLIM_INFINITY else value))


def apply_limits(limits: Dict[str, int]) -> None:
    """A worker's limits of a stage (memory, cpu, files), as the broker sent them."""
    limit_resources(limits["cpu"], limits["files"], limits["memory"])


PR_SET_DUMPABLE = 4  # <sys/prctl.h>
# Reaching another process: its memory, its signals, a new program; a new session (its scheduling
# group would be at nice 0 again: bwrap.JAIL_AUTOGROUP_NICE).
PROCESS_SYSCALLS = ("execve", "execveat", "setsid", "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open",
                    "pidfd_send_signal", "pidfd_getfd", "tkill", "kexec_load", "mount", "umount2", "unshare", "setns",
                    "socket", "socketpair", "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key",
                    # io_uring: syscalls the filter never sees
                    "request_key", "io_uring_setup", "io_uring_enter", "io_uring_register")


def build_filter() -> int:
    """A build jail's filter, compiled into a memfd for bwrap's --seccomp (which loads it just before
    the build starts): what `confine` refuses but new programs and processes, which a compiler
    driver needs (cc1plus, as, ld). The caller closes the fd."""
    import os
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in PROCESS_SYSCALLS:
        if name not in ("execve", "execveat"):
            rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    fd = os.memfd_create("build.bpf")
    with os.fdopen(os.dup(fd), "wb") as program:
        rules.export_bpf(program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def not_dumpable() -> None:
    """No process of the same user can ptrace this one or write its memory (a zygote's children)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE) failed")


def confine(allow_fork: bool) -> None:
    """A jailed stage's filter (stacked filters: the strictest answer wins). No new program, socket,
    ptrace or namespace. With allow_fork False (every stage but the frontend's zygote): no new
    process (threads still work) and signals only to this process itself (kill(0) and kill(-1)
    are refused). The zygote keeps kill, for its children: a filter it stacked on signals would
    be theirs too, with its pid, and a child's own abort() would fail."""
    import os
    me = os.getpid()
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in PROCESS_SYSCALLS:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
    if not allow_fork:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "kill", seccomp.Arg(0, seccomp.NE, me))
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "tgkill", seccomp.Arg(0, seccomp.NE, me))
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "rt_sigqueueinfo", seccomp.Arg(0, seccomp.NE, me))
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "rt_tgsigqueueinfo", seccomp.Arg(0, seccomp.NE, me))
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "fork")
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "vfork")
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_THREAD, 0))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    rules.load()
