"""The supervised child's life, once the zygote has forked it (zygote.py): `serve` its pipes.

The parent sends Init, then RunJob per job; the child answers Ready, then
StageStarted announcements and ResultMessages, and JobDone after each job
with its memory use (messages.py). Its stdout and stderr are a log file the
parent reads (see capture.py); the messages have pipes of their own so
nothing native code prints can corrupt them.
"""

from __future__ import annotations

import faulthandler
import gc
import os
import resource
import sys
from dataclasses import dataclass
from typing import Any

from conformance.execution.messages import Error, Exit, JobDone, Message, Ready, RunJob, decode, encode
from conformance.settings import Settings


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when the thread that started it dies.

    The child runs in a session of its own (so a kill reaches the compilers
    it spawns), which also shields it from the terminal's Ctrl-C; without
    this a SIGKILLed run would leave its children working on.
    """
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def open_pipes(request_fd: int, reply_fd: int):
    # A native crash then leaves the Python stack in the log, and so in the Result.
    faulthandler.enable()
    return os.fdopen(request_fd, "r"), os.fdopen(reply_fd, "w", buffering=1)


@dataclass
class Prepared:
    """What a child needs before its first job: the run's settings, its registry and backends."""

    settings: Settings
    registry: Any
    backends: dict


def prepare(settings: Settings) -> Prepared:
    """Load the registry and backends `settings` name, and say how many lanes share the cores; raises what loading raised."""
    for entry in reversed(settings.sys_path):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    from conformance.backends import loader
    from conformance.cases.registry import Registry, sources_of
    from conformance.toolchain import threads

    threads.share_cores(settings.lanes)
    registry = Registry.load(sources_of(settings), settings.suites)
    backends = {spec: loader.resolve(spec) for spec in settings.backends}
    return Prepared(settings, registry, {b.name: b for b in backends.values()})


def serve(requests, replies, prepared: Prepared) -> int:
    """Answer Ready, then run each RunJob until Exit or the end of the requests."""
    from conformance.execution.executor import Executor

    def send(message: Message) -> None:
        replies.write(encode(message) + "\n")
        replies.flush()

    try:
        executor = Executor(prepared.registry, prepared.backends, prepared.settings, send)
    except Exception as e:
        send(Error.of(e))
        return 1
    send(Ready(len(prepared.registry)))

    import psutil

    process = psutil.Process()
    settle_heap()
    jobs = 0
    for line in requests:
        message = decode(line)
        if isinstance(message, Exit):
            break
        assert isinstance(message, RunJob), message
        executor.capture.reset()
        executor.run_job(message.pairs, message.max_batch, message.attempt)
        jobs += 1
        if jobs == 1:  # the first job imported the toolchains (torch-mlir, IREE)
            settle_heap()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
        send(JobDone(rss_mb=process.memory_info().rss / 2**20, peak_rss_mb=peak))
    return 0


def settle_heap() -> None:
    """Keep Python's cycle collector off the long-lived heap (modules, torch's op tables).

    Tracing a case through torch.export allocates heavily, so full
    collections run often, and each walks every object torch and the
    toolchains hold: run_decompositions (the largest stage of a cold run)
    took 0.25 s per small case with the defaults, 0.09-0.15 s without.
    Objects alive now are moved out of the collector's sight and the
    thresholds raised; reference counting still frees everything as usual,
    and a child that grows past --memory-limit is recycled anyway.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
