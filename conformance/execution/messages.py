"""What the parent and a supervised child say to each other: one dataclass per kind of message.

    parent -> child    Init, once; then RunJob per job; Exit to let it go
    child -> parent    Ready or Error, answering Init;
                       during a job: StageStarted before every stage,
                       ResultMessage per (case, backend) pair, JobDone at the end
    parent -> zygote   Init, once (answered Ready or Error); then Fork (answered
                       Forked) and Wait (answered Ended) for each child (zygote.py)

On the pipes each message is one JSON line, {"t": kind, ...its fields};
`encode` and `decode` below are the only code that knows that. The parent
handles the messages of a job one method per kind (Engine.child_<kind>).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar

from conformance.execution.planning import Pair
from conformance.execution.reruns import Attempt
from conformance.settings import Settings
from conformance.result import Result


@dataclass
class Message:
    """A message's fields are JSON-native, or records with to_dict/from_dict (Settings, Result)."""

    kind: ClassVar[str]  # its name on the wire

    def to_fields(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_fields(cls, data: dict[str, Any]) -> Message:
        types = _field_types(cls)
        return cls(**{name: _rebuilt(types[name], value) for name, value in data.items()})


def _plain(value: Any) -> Any:
    return value.to_dict() if hasattr(value, "to_dict") else value


def _rebuilt(kind: Any, value: Any) -> Any:
    return kind.from_dict(value) if hasattr(kind, "from_dict") else value


@functools.cache
def _field_types(cls: type[Message]) -> dict[str, Any]:
    return typing.get_type_hints(cls)


# -- parent -> child ----------------------------------------------------------


@dataclass
class Init(Message):
    """The run's settings: the child loads the registry and backends from them."""

    kind = "init"
    settings: Settings
    # A child's own temp directory (its jobs' scratch), which the parent removes however the child ended.
    scratch: str | None = None


@dataclass
class RunJob(Message):
    """Run these pairs, compiling at most `max_batch` cases together, as their `attempt`-th run."""

    kind = "job"
    pairs: list[Pair]
    max_batch: int
    attempt: Attempt = field(default_factory=Attempt)

    @classmethod
    def from_fields(cls, data: dict[str, Any]) -> RunJob:
        pairs = [tuple(pair) for pair in data["pairs"]]  # JSON made the pairs lists
        return cls(pairs, data["max_batch"], Attempt.from_dict(data.get("attempt") or {}))


@dataclass
class Exit(Message):
    """Leave: no more jobs."""

    kind = "exit"


# -- child -> parent ----------------------------------------------------------


@dataclass
class Ready(Message):
    """Started: the registry and the backends loaded."""

    kind = "ready"
    cases: int  # how many cases the registry holds


@dataclass
class Error(Message):
    """Could not start: loading the registry or a backend raised."""

    kind = "error"
    message: str
    details: str  # the traceback

    @classmethod
    def of(cls, error: BaseException) -> Error:
        """The Error saying `error`, raised while starting (inside its `except`: the traceback is its)."""
        import traceback

        return cls(f"{type(error).__name__}: {error}", traceback.format_exc())


@dataclass
class StageStarted(Message):
    """A stage of these pairs starts now: if the child dies or hangs before the next message, they are to blame."""

    kind = "stage"
    stage: str
    backend: str
    cases: list[str]
    mark: int  # where the stage's output starts in the child's log
    also: list[str] = field(default_factory=list)  # other backends sharing this stage's outcome (a shared export)

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """Every (case, backend) pair this stage's outcome is for."""
        return [(case, backend) for case in self.cases for backend in (self.backend, *self.also)]


@dataclass
class ResultMessage(Message):
    """One pair's Result."""

    kind = "result"
    result: Result


@dataclass
class JobDone(Message):
    """The job is over; the child's memory use now and at its peak."""

    kind = "done"
    rss_mb: float
    peak_rss_mb: float


# -- parent <-> zygote (zygote.py): a child forked, then waited for --------------


@dataclass
class Fork(Message):
    """Fork a child serving the pipes and log sent with this message (its request and reply ends, its log)."""

    kind = "fork"


@dataclass
class Forked(Message):
    kind = "forked"
    pid: int


@dataclass
class Wait(Message):
    """How the child `pid` ended, if it has (the zygote does not wait for it)."""

    kind = "wait"
    pid: int


@dataclass
class Ended(Message):
    kind = "ended"
    returncode: int | None  # as subprocess says it: -N for a signal, None while it runs


KINDS: dict[str, type[Message]] = {
    cls.kind: cls
    for cls in (Init, RunJob, Exit, Ready, Error, StageStarted, ResultMessage, JobDone, Fork, Forked, Wait, Ended)
}


def encode(message: Message) -> str:
    """One line of JSON, without the newline."""
    return json.dumps({"t": message.kind, **message.to_fields()})


def decode(line: str | bytes) -> Message:
    data = json.loads(line)
    kind = data.pop("t", None)
    if kind not in KINDS:
        raise ValueError(f"not a message between conformance processes (kind {kind!r}): {line[:200]!r}")
    return KINDS[kind].from_fields(data)
