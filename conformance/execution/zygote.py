"""The zygote: a process that loads torch, the registry and the toolchains once and forks every child from there.

A child started from nothing imports torch, loads the registry, and meets
torch.export's first-use imports: 3-5 CPU-s before its first stage, paid by
every child of a run (the first, each re-run round's fresh one, the one
after a crash). An engine's zygote pays it once and forks each child: a
forked child holds what a fresh one would hold after the same start-up, and
nothing of a run, since the zygote runs no case. It starts no thread a
fork would cut in half (tqdm's monitor is turned off; torch starts none on
import or export) and leaves nothing unflushed for a child to print again.
torch's intra-op pool (OpenMP) is the exception to watch: loading a suite
may run a large op (OpInfo's samples do), and a pool started in the zygote
leaves every forked child hanging at its first parallel op. So the zygote
keeps torch at one thread, and each child gets torch's own count back.

    python -m conformance.execution.zygote SOCKET_FD

It reads messages.py's Init on its stdin and answers Ready or Error, as a
child does; then it speaks messages, one per datagram of a SOCK_SEQPACKET
socket pair: Fork, which carries the new child's pipe ends and log
(SCM_RIGHTS) and is answered Forked, and Wait, answered Ended. The parent's handle, `Zygote`,
gives the supervisor a process object that waits as subprocess.Popen does.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

from conformance.execution.capture import read_log
from conformance.execution.child import die_with_parent, open_pipes, prepare, serve, settle_heap
from conformance.execution.supervisor import ChildError
from conformance.execution.messages import Ended, Error, Fork, Forked, Init, Message, Ready, Wait, decode, encode
from conformance.settings import Settings

DATAGRAM_BYTES = 1 << 16  # every message but the Init (sent on the zygote's stdin); an Error's traceback is the largest
FORK_TIMEOUT = 60.0


def module_command(module: str, *args: str) -> list[str]:
    """`python -P -m module args`: -P keeps the working directory off the new process's sys.path, so a
    `conformance` folder where the run was started (another checkout) cannot stand in for this process's
    code; child_environment puts this process's first."""
    return [sys.executable, "-P", "-m", module, *args]


def child_environment() -> dict[str, str]:
    """This environment, with the folder this process's `conformance` package came from first on PYTHONPATH."""
    import conformance

    root = str(Path(conformance.__file__).resolve().parent.parent)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**os.environ, "PYTHONPATH": os.pathsep.join([root, *paths])}


class ZygoteGone(Exception):
    """The zygote died (its children died with it)."""


class Zygote:
    """The parent's handle on one zygote: started with the run's settings, it forks children on request.

    Raises ChildError, as a child would, when the registry or a backend does not load.
    """

    def __init__(self, settings: Settings | None, startup_timeout: float, *, wait: bool = True):
        """Start it; with `wait`, until it is ready (else the first fork waits, so its start-up overlaps the caller's).

        Without `settings` it imports torch and waits for them (`load`): a
        run's parent can start it before it has made up the run's settings,
        which takes it an import of torch too.
        """
        self.settings: Settings | None = None
        self.startup_timeout = startup_timeout
        self.ready = False
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fd, self.log_path = tempfile.mkstemp(prefix="conformance-zygote-", suffix=".log")
        self.process = subprocess.Popen(
            module_command("conformance.execution.zygote", str(theirs.fileno())),
            env=child_environment(),
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.PIPE,  # the Init: a large -k outgrows a datagram
            stdout=fd,
            stderr=fd,
            start_new_session=True,
            text=True,
        )
        os.close(fd)
        theirs.close()
        self.socket = ours
        self.alive = True
        self.lock = threading.Lock()
        if settings is not None:
            self.load(settings)
            if wait:
                self.await_ready()

    def load(self, settings: Settings) -> None:
        """Hand it the run's settings: it loads the registry and backends they name, then is ready to fork."""
        self.settings = settings
        try:
            self.process.stdin.write(encode(Init(settings)) + "\n")
            self.process.stdin.close()
        except OSError:
            pass  # it died at once: await_ready says so, with its log

    def await_ready(self) -> None:
        """Wait until it has loaded everything; raise ChildError, with its log, if it does not get there."""
        if self.ready:
            return
        try:
            with self.lock:
                reply = self._read(self.startup_timeout)
        except ZygoteGone:
            reply = None
        if not isinstance(reply, Ready):
            log = read_log(self.log_path, 0)[-2000:]
            self.close()
            message = reply.message if isinstance(reply, Error) else f"the process forking the children did not start: {log}"
            raise ChildError(message)
        self.ready = True

    def fork(self, request_fd: int, reply_fd: int, log_fd: int) -> ForkedChild:
        """A child serving these pipes, writing to this log (the descriptors stay the caller's to close)."""
        self.await_ready()
        reply = self._request(Fork(), FORK_TIMEOUT, [request_fd, reply_fd, log_fd])
        assert isinstance(reply, Forked), reply
        return ForkedChild(self, reply.pid)

    def returncode(self, pid: int) -> int | None:
        """How child `pid` ended (Popen's convention), or None while it runs; SIGKILL's if the zygote is gone."""
        try:
            reply = self._request(Wait(pid), FORK_TIMEOUT)
        except ZygoteGone:
            return -signal.SIGKILL  # its children die with it (PR_SET_PDEATHSIG): no status is left to read
        assert isinstance(reply, Ended), reply
        return reply.returncode

    def close(self) -> None:
        with self.lock:
            self.alive = False
            self.socket.close()
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        Path(self.log_path).unlink(missing_ok=True)

    def _request(self, message: Message, timeout: float | None, fds: list[int] = ()) -> Message:
        """Send `message` (with `fds`) and read the answer; one at a time (Engine.cancel kills from another thread)."""
        with self.lock:
            if not self.alive:
                raise ZygoteGone("the zygote is gone")
            try:
                socket.send_fds(self.socket, [encode(message).encode()], list(fds))
            except OSError as e:
                self.alive = False
                raise ZygoteGone(str(e)) from e
            return self._read(timeout)

    def _read(self, timeout: float | None) -> Message:
        self.socket.settimeout(timeout)
        try:
            data = self.socket.recv(DATAGRAM_BYTES)
        except OSError as e:  # a timeout too: a zygote that does not answer is as good as gone
            data, error = b"", e
        else:
            error = None
        if not data:
            self.alive = False
            raise ZygoteGone(str(error or "the zygote closed its socket"))
        return decode(data)


_SPARE: list[Zygote] = []  # started ahead of the run's first engine (start_spare), not yet taken


def start_spare(startup_timeout: float) -> None:
    """Start a zygote now, for the first engine of the run to take once it has the run's settings (load_spare).

    A run's parent imports torch and loads the registry before its first
    engine would start a zygote, which then does it all again: two
    start-ups, one after the other. Started here, as the run starts, the
    zygote imports torch while the parent does, and loads the rest as soon
    as the parent has made up the settings (about a second of wall time on
    every run). Closed at exit if no engine took it.
    """
    close_spare()
    _SPARE.append(Zygote(None, startup_timeout, wait=False))


def load_spare(settings: Settings) -> None:
    """Hand the spare zygote, if one was started, the run's settings."""
    for spare in _SPARE:
        spare.load(settings)


def take_spare(settings: Settings) -> Zygote | None:
    """The spare zygote, if it was loaded with these very settings (the engine then owns it)."""
    if _SPARE and _SPARE[0].settings == settings and _SPARE[0].alive:
        return _SPARE.pop()
    return None


def close_spare() -> None:
    while _SPARE:
        _SPARE.pop().close()


atexit.register(close_spare)


class ForkedChild:
    """A forked child as the supervisor sees a subprocess.Popen: pid, poll, wait, returncode."""

    def __init__(self, zygote: Zygote, pid: int):
        self.zygote = zygote
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.returncode(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"child {self.pid}", timeout)
            time.sleep(0.01)
        return self.returncode


# -- the zygote itself ------------------------------------------------------------


def main(argv: list[str]) -> int:
    die_with_parent()
    channel = socket.socket(fileno=int(argv[0]))
    quiet_progress_bars()
    threads = one_torch_thread()  # torch is imported while the parent may still be making up the settings
    init = decode(sys.stdin.readline())
    assert isinstance(init, Init), init
    quiet = os.open(os.devnull, os.O_RDONLY)  # what the children inherit as stdin, as a fresh child has
    os.dup2(quiet, 0)
    os.close(quiet)
    try:
        prepared = prepare(init.settings)
        for backend in prepared.backends.values():
            backend.warm_up()
    except Exception as e:
        channel.send(encode(Error.of(e)).encode())
        return 1
    settle_heap()
    channel.send(encode(Ready(len(prepared.registry))).encode())
    ended: dict[int, int] = {}  # children reaped while answering a Wait
    while True:
        data, fds, _, _ = socket.recv_fds(channel, DATAGRAM_BYTES, 3)
        if not data:
            return 0  # the parent closed its end
        message = decode(data)
        if isinstance(message, Fork):
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                channel.close()
                os._exit(child(prepared, threads, *fds))
            for fd in fds:
                os.close(fd)
            channel.send(encode(Forked(pid)).encode())
        elif isinstance(message, Wait):
            channel.send(encode(Ended(returncode(message.pid, ended))).encode())


def quiet_progress_bars() -> None:
    """No tqdm monitor thread: torch.fx's interpreter makes a (disabled) tqdm bar per run, which starts one, and a
    fork while it holds tqdm's lock would leave every child's next bar waiting for it forever."""
    try:
        import tqdm
    except ImportError:
        return
    tqdm.tqdm.monitor_interval = 0


def one_torch_thread() -> int:
    """Keep torch's intra-op pool from starting here (see the module's docstring); returns torch's own count."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    return threads


def child(prepared, threads: int, request_fd: int, reply_fd: int, log_fd: int) -> int:
    """The forked child: a session and a log of its own, torch's thread count, then a child's life (child.serve)."""
    try:
        import torch

        torch.set_num_threads(threads)  # its pool starts here, in the child, at the first parallel op
        os.setsid()  # a kill of its session reaches the compilers it starts
        die_with_parent()
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.close(log_fd)
        requests, replies = open_pipes(request_fd, reply_fd)
        init = decode(requests.readline())  # the supervisor's, with the settings the zygote loaded
        assert isinstance(init, Init), init
        tempfile.tempdir = init.scratch  # every job's scratch in the child's own, which the parent removes
        code = serve(requests, replies, prepared)
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def returncode(pid: int, ended: dict[int, int]) -> int | None:
    if pid in ended:
        return ended[pid]
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not ours (any more): nothing to read
        return -signal.SIGKILL
    if done == 0:
        return None
    ended[pid] = os.waitstatus_to_exitcode(status)
    return ended[pid]


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # as a child leaves: no interpreter teardown
