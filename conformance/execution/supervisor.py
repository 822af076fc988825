"""The parent's handle on one supervised child process.

The child runs in its own session (so a kill reaches the compilers it
spawned too), writes its output to a log file, and talks over two pipes
(messages.py). `receive` waits at most `timeout` seconds for the next
message: silence past that is a hang, end of file is a death.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from conformance.execution import child_scratch
from conformance.execution.capture import read_log
from conformance.execution.messages import Error, Exit, Init, Message, Ready, decode, encode
from conformance.result import RUNAWAY
from conformance.settings import Settings
from conformance.toolchain.tools import signal_name

STARTUP_TIMEOUT = 600.0  # importing torch + loading a large suite on a busy machine
MEMORY_CHECK_SECONDS = 2.0
# A job's log is emptied before each job; no stage prints this much unless a
# pattern rewriter is going round in circles, re-emitting the same diagnostic
# (torch-mlir on a 0-d softmax: about 1 MB/s until the case timeout).
FLOOD_BYTES = 32 * 2**20


class ChildError(Exception):
    """The child could not start (its registry or backends failed to load)."""


@dataclass
class Silent:
    """No message within the timeout."""


@dataclass
class Flooding(Silent):
    """A hang that talks: the child printed FLOOD_BYTES of output without finishing."""

    size: int


@dataclass
class Died:
    how: str  # "killed by signal SIGSEGV (11)", "exited with status 3": the same every time it happens
    measured: str = ""  # what differed this time (how much memory it used), for the details


class ChildProcess:
    def __init__(self, settings: Settings, zygote, log_dir: Path | None = None):
        """A child forked by `zygote` (zygote.Zygote, started with the same settings).

        The child gets a temp directory of its own, `scratch`, holding its log and every job's
        scratch (a model's job prints its IR there, hundreds of MB): a child killed mid-job cannot
        clean up, so close() removes it, however the child ended (and child_scratch.py those of
        a run killed outright).
        """
        self.memory_kill_bytes = settings.memory_kill_mb * 2**20
        self.scratch = child_scratch.make(str(log_dir) if log_dir else None)
        path = os.path.join(self.scratch, "child.log")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        # Appending: the child empties the log between jobs (OutputCapture.reset), and a write at the
        # old offset would leave a NUL-filled gap where the earlier output was.
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
        self.log_path = path
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        try:
            self.process = zygote.fork(request_read, reply_write, fd)
        except BaseException:
            for unused in (fd, request_read, request_write, reply_read, reply_write):
                os.close(unused)
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        for unused in (fd, request_read, reply_write):
            os.close(unused)
        self.requests = os.fdopen(request_write, "w")
        self.replies = reply_read
        self.buffer = b""
        self.closed = False
        self.send(Init(settings, self.scratch))
        self._wait_until_ready()

    def _wait_until_ready(self) -> None:
        """The child answers Init with Ready, or with Error when its registry or backends fail to load."""
        reply = self.receive(STARTUP_TIMEOUT)
        if isinstance(reply, Ready):
            return
        self.kill()
        if isinstance(reply, Error):
            raise ChildError(reply.message)
        raise ChildError(f"the child process did not start ({reply}): {read_log(self.log_path, 0)[-2000:]}")

    def send(self, message: Message) -> bool:
        """False when the child is gone."""
        try:
            self.requests.write(encode(message) + "\n")
            self.requests.flush()
            return True
        except (OSError, ValueError):  # a dead child: broken pipe, or already closed
            return False

    def receive(self, timeout: float, memory_mb: float | None = None) -> Message | Silent | Died:
        """The next message; Silent after `timeout` seconds without one; Died when the child is gone.

        While waiting, the memory of the child and everything it started (a
        compiler) is checked: a runaway is killed before it takes the machine,
        past `memory_mb` (the run's --memory-limit unless given). So is the
        size of its log: a flood of output is a loop (Flooding).
        """
        limit = self.memory_kill_bytes if memory_mb is None else memory_mb * 2**20
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return Silent()
            ready, _, _ = select.select([self.replies], [], [], min(left, MEMORY_CHECK_SECONDS))
            if not ready:
                used = self.memory_used()
                if used > limit:
                    self.kill()
                    return Died(
                        f"{RUNAWAY} the {limit / 2**30:.0f} GB limit",
                        f"the process and the compilers it ran used {used / 2**30:.1f} GB when it was killed",
                    )
                printed = self.log_size()
                if printed > FLOOD_BYTES:
                    self.kill()
                    return Flooding(printed)
                continue
            chunk = os.read(self.replies, 1 << 16)
            if not chunk:
                return Died(self.exit_description())
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return decode(line)

    def memory_used(self) -> int:
        """Resident memory of the child and all its descendants, in bytes."""
        import psutil

        try:
            root = psutil.Process(self.process.pid)
            processes = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return 0
        total = 0
        for p in processes:
            try:
                total += p.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        return total

    def log_size(self) -> int:
        try:
            return os.path.getsize(self.log_path)
        except OSError:
            return 0

    def log_since(self, mark: int) -> str:
        return read_log(self.log_path, mark)

    def exit_description(self) -> str:
        """How the child ended ("killed by signal SIGSEGV (11)"), once it has; killed if it has not within 30 s."""
        try:
            code = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.process.returncode
        if code is not None and code < 0:
            return f"killed by signal {signal_name(-code)}"
        return f"exited with status {code}"

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()

    def close(self) -> None:
        """Ask the child to leave, then make sure it and its session are gone. Idempotent."""
        if self.closed:
            return
        self.closed = True
        if self.process.poll() is None and self.send(Exit()):
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self.kill()  # also reaches stray grandchildren (compilers) left in the session
        with contextlib.suppress(OSError):
            self.requests.close()
        with contextlib.suppress(OSError):
            os.close(self.replies)
        shutil.rmtree(self.scratch, ignore_errors=True)  # the log, and what a killed job left
