"""The run options, each declared once: pytest's parser and the `conformance` commands read this table.

An Option holds what argparse needs to declare it (pytest's `addoption` takes
the same arguments), the check its value must pass (its `type`: a bad value
is refused while the command line is parsed, before anything runs, with a
message naming the option), and the Settings field it fills. `settings_from`
builds Settings from parsed values, for pytest (`config.option`) and for the
commands (their argparse namespace) alike.

A backend declares options of its own the same way (`Backend.options`); the
framework adds them to the command line when that backend is named and hands
their values to it in `Settings.options` (by `Option.dest`) without reading them.

Nothing here imports torch: `pytest --help` and the framework's own tests
load this module through the plugin.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from conformance import content
from conformance import report_dir as files  # by module: RESULTS here is the --results option
from conformance import settings as defaults
from conformance.export_modes import DEFAULT_EXPORT_MODE, EXPORT_MODES
from conformance.gates import timing
from conformance.settings import Settings

# -- checks: each parses one value or says, naming the value, why it cannot be used --

MAX_CASE_TIMEOUT = 86400.0  # a day: a longer silence is a typo, not a plan
MIN_MEMORY_MB = 512  # a case process holds torch (~220 MB) and its compilers before it runs anything


def _number(text: str, kind: type, what: str):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def seconds(text: str) -> float:
    value = _number(text, float, "a number of seconds")
    if not 0 < value <= MAX_CASE_TIMEOUT:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most {MAX_CASE_TIMEOUT:g} seconds (a day), got {text}")
    return value


def memory_mb(text: str) -> int:
    import psutil

    value = _number(text, int, "a whole number of MB")
    total = psutil.virtual_memory().total // 2**20
    if value < MIN_MEMORY_MB:
        raise argparse.ArgumentTypeError(
            f"{text} MB is less than a case process needs (the limit is in MB: at least {MIN_MEMORY_MB}; default {defaults.DEFAULT_MEMORY_KILL_MB})"
        )
    if value > total:
        raise argparse.ArgumentTypeError(f"{text} MB is more than this machine's memory ({total} MB)")
    return value


def whole_number_from(minimum: int) -> Callable[[str], int]:
    def check(text: str) -> int:
        value = _number(text, int, "a whole number")
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {text}")
        return value

    return check


at_least_one = whole_number_from(1)
at_least_zero = whole_number_from(0)


def export_mode(text: str) -> str:
    if text not in EXPORT_MODES:
        raise argparse.ArgumentTypeError(f"expected {' or '.join(EXPORT_MODES)}, got {text!r}")
    return text


def comma_list(text: str) -> list[str]:
    """`a, b,c` -> ["a", "b", "c"]; at least one item."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected NAME[,NAME...], got {text!r}")
    return items


def existing_dir(text: str) -> str:
    if not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text}: no such directory")
    return text


def writable_dir(text: str) -> str:
    """A directory that exists and takes files, or one that can be created."""
    path = Path(text)
    existing = next(p for p in (path, *path.parents) if p.exists())  # what mkdir would start from
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: {existing} is not a directory")
    try:  # the permission bits do not say it all (root, read-only mounts, immutable files): try
        tempfile.TemporaryFile(dir=existing).close()
    except OSError as e:
        raise argparse.ArgumentTypeError(f"{text}: cannot write in {existing} ({e.strerror})") from None
    return text


def writable_file(text: str) -> str:
    """A file to be written: its directory must take files."""
    if Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory")
    writable_dir(str(Path(text).parent))
    return text


def report_dir(text: str) -> str:
    """A report directory of an earlier run (it holds results.jsonl)."""
    if not (Path(text) / files.RESULTS).is_file():
        raise argparse.ArgumentTypeError(f"{text}: not a report directory (no {files.RESULTS} there)")
    return text


def baseline(text: str) -> str:
    return text if text == "none" else report_dir(text)


def results_source(text: str) -> str:
    path = Path(text)
    if path.is_dir():
        return report_dir(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text}: no such file or directory")
    return text


def parse_backends(values: Iterable[str] | None) -> list[str]:
    """`--backend a,b --backend c` -> ["a", "b", "c"], order kept, duplicates dropped."""
    specs: list[str] = []
    for value in values or ():
        for spec in value.split(","):
            spec = spec.strip()
            if spec and spec not in specs:
                specs.append(spec)
    return specs


def default_cache_dir() -> str:
    return os.environ.get("CONFORMANCE_CACHE") or str(content.PROJECT_ROOT / ".conformance-cache")


def _suites(extra: list[str] | None) -> list[str]:
    # `--suite NAME` adds a suite: the default one always runs (`-k` or --tag narrow a run to one suite).
    return ["default", *dict.fromkeys(s for s in extra or () if s != "default")]


def _absolute(path: str | None) -> str | None:
    return os.path.abspath(path) if path else None


# -- the table --------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Option:
    flags: tuple[str, ...]
    help: str
    type: Callable[[str], Any] | None = None  # parses and checks one value (raises argparse.ArgumentTypeError)
    default: Any = None
    action: str | None = None  # argparse's: "store_true", "append"
    metavar: str | None = None
    setting: str | None = None  # the Settings field it fills
    to_setting: Callable[[Any], Any] = lambda value: value  # the parsed value -> that field's value
    path: bool = False  # the value names a file or directory (see pytest_plugin/rootdir.py)
    dest: str = field(default="")

    def __post_init__(self):
        if not self.dest:
            object.__setattr__(self, "dest", self.flags[-1].lstrip("-").replace("-", "_"))

    def add_to(self, group, **overrides) -> None:
        """Declare it on an argparse parser or group, or on a pytest OptionGroup (same arguments)."""
        kwargs = {"help": self.help, "dest": self.dest, "default": self.default}
        kwargs.update({k: v for k, v in (("type", self.type), ("action", self.action), ("metavar", self.metavar)) if v})
        kwargs.update(overrides)
        add = getattr(group, "addoption", None) or group.add_argument
        add(*self.flags, **kwargs)

    def value(self, namespace) -> Any:
        """The parsed value in `namespace` (pytest's config.option or an argparse result); the default if not declared there."""
        return getattr(namespace, self.dest, self.default)


BACKEND = Option(
    ("--backend",),
    "run the registered cases on these backends (comma-separated, repeatable): a shipped name, an entry point "
    "of group conformance.backends, or module:ATTR. Without it pytest runs the framework's own tests.",
    action="append",
    metavar="NAME[,NAME...]",
)
CASES = Option(
    ("--cases",),
    "add cases from a directory or an importable module (repeatable)",
    action="append",
    default=[],
    metavar="DIR|MODULE",
    setting="case_paths",
    to_setting=list,
    path=True,
)
CASE = Option(
    ("--case",),
    "run only these case ids, exactly (repeatable); an unknown id is an error; -k matches substrings",
    action="append",
    default=[],
    metavar="ID",
)
NO_DEFAULT_CASES = Option(
    ("--no-default-cases",),
    "leave out the project's own cases (run only --cases, entry points and the suites --suite names)",
    action="store_true",
    default=False,
    setting="default_cases",
    to_setting=lambda leave_out: not leave_out,
)
SUITE = Option(
    ("--suite",),
    "add a suite of cases to the default one (repeatable): 'opinfo' adds PyTorch's OpInfo samples ('opinfo-dynamic': "
    "the same with dynamic dims), 'onnx-node' "
    "ONNX's node tests (run by the onnx-* backends); -k opinfo or -k onnx-node then runs only those",
    action="append",
    metavar="NAME",
    setting="suites",
    to_setting=_suites,
)
KEYWORD = Option(
    ("-k",), "pytest-style -k expression over case ids and tags", metavar="EXPRESSION", dest="keyword"
)
TAG = Option(("--tag",), "only cases with this tag (repeatable)", action="append", default=[])
SKIP_TAG = Option(("--skip-tag",), "leave out cases with this tag (repeatable)", action="append", default=[])

SEED = Option(("--seed",), "seed mixed into every case's inputs (default 0)", type=int, default=0, metavar="N", setting="seed")
CASE_TIMEOUT = Option(
    ("--case-timeout",),
    f"a stage silent for this long is killed and reported as TIMEOUT (default {defaults.DEFAULT_CASE_TIMEOUT:g}; "
    f"at most {MAX_CASE_TIMEOUT:g})",
    type=seconds,
    default=defaults.DEFAULT_CASE_TIMEOUT,
    metavar="SECONDS",
    setting="case_timeout",
)
MEMORY_LIMIT = Option(
    ("--memory-limit",),
    f"a case whose process (with the compilers it runs) uses more is killed: CRASH (default "
    f"{defaults.DEFAULT_MEMORY_KILL_MB}; from {MIN_MEMORY_MB} to this machine's memory)",
    type=memory_mb,
    default=defaults.DEFAULT_MEMORY_KILL_MB,
    metavar="MB",
    setting="memory_kill_mb",
)
BATCH_SIZE = Option(
    ("--batch-size",),
    f"op cases compiled together in one module by batching backends (default {defaults.DEFAULT_BATCH}; at least 1)",
    type=at_least_one,
    default=defaults.DEFAULT_BATCH,
    metavar="N",
    setting="batch_size",
)
EXPORT_MODE = Option(
    ("--export-mode",),
    f"torch.export's mode for the cases that name none: strict (TorchDynamo traces forward, as torch-mlir's own "
    f"e2e configs export) or non-strict (default {DEFAULT_EXPORT_MODE}); recorded in each result's extras",
    type=export_mode,
    default=DEFAULT_EXPORT_MODE,
    metavar="|".join(EXPORT_MODES),
    setting="export_mode",
)
RERUNS = Option(
    ("--reruns",),
    f"run a failing pair again this often, each time alone in a fresh process; if the verdicts differ it is FLAKY "
    f"(default {defaults.DEFAULT_RERUNS}; 0 turns it off; a TIMEOUT and a failure replayed from the compile cache are not re-run)",
    type=at_least_zero,
    default=defaults.DEFAULT_RERUNS,
    metavar="N",
    setting="reruns",
)
CHECK_DETERMINISM = Option(
    ("--check-determinism",),
    "run each passing pair a second time in a fresh process and compare its outputs bit for bit: a difference makes it FLAKY",
    action="store_true",
    default=False,
    setting="check_determinism",
)
COMPILE_ONLY = Option(
    ("--compile-only",),
    "stop each pair of a backend that can run elsewhere (the IREE ones) after compiling: it ends COMPILED, and with "
    "--artifacts its bundle holds what running it on another machine needs (docs/remote-run.md; then "
    "`conformance verdicts-from`)",
    action="store_true",
    default=False,
    setting="compile_only",
)
ARTIFACTS = Option(
    ("--artifacts",),
    "write a reproducer bundle for each failing case here",
    type=writable_dir,
    metavar="DIR",
    setting="artifacts",
    to_setting=_absolute,
    path=True,
)
CACHE_DIR = Option(
    ("--cache-dir",),
    "compile cache location (default .conformance-cache in this project, or $CONFORMANCE_CACHE)",
    type=writable_dir,
    metavar="DIR",
    setting="cache_dir",
    to_setting=lambda path: os.path.abspath(path or default_cache_dir()),
    path=True,
)
NO_CACHE = Option(("--no-cache",), "neither read nor write the compile cache (nor, for conformance nightly, its verdict store)",
                  action="store_true", default=False)
XFAIL_DIR = Option(
    ("--xfail-dir",),
    "where the per-backend xfail sets live (default xfail_sets/)",
    type=existing_dir,
    metavar="DIR",
    path=True,
)
NO_XFAIL = Option(("--no-xfail",), "ignore the xfail sets: every failure is FAIL", action="store_true", default=False)
UPDATE_XFAILS = Option(
    ("--update-xfails",),
    "rewrite the xfail sets of the run's backends from this run's results (keeps human notes)",
    action="store_true",
    default=False,
)
REPORT_DIR = Option(
    ("--report-dir",),
    "also write the run's report here, as `conformance nightly` does (results.jsonl with every diagnostic, "
    "report.html, ...); `conformance triage DIR` then lists every root-cause group. DIR must not hold a report already",
    type=writable_dir,
    metavar="DIR",
    path=True,
)

GATES = Option(
    ("--gates",),
    "judge the gated cases (models, ops tagged gated, any case a gates file names) against their backend's golden "
    "figures (gate_sets/<backend>.toml): dispatches, module size, compile time, and the run time, timed "
    f"{timing.REPEATS} more times for its median. A pair beyond tolerance stays PASS and is reported as a gate "
    "regression (extras['gates'], a report section); under pytest it fails",
    action="store_true",
    default=False,
    setting="time_runs",
    to_setting=lambda on: timing.REPEATS if on else 0,
)
GATES_DIR = Option(
    ("--gates-dir",),
    "where the per-backend gates files live (default gate_sets/)",
    type=existing_dir,
    metavar="DIR",
    path=True,
)

LOCALIZE = Option(
    ("--localize",),
    "for each failing case with several ops to blame (every model; an op case whose graph computes more than one op), "
    "find the op: binary-search the prefixes of its exported graph through the "
    "backend, check the suspects alone against fp64, and write a one-op case and its bundle (the model's result "
    "records it in extras['localized']; reports name it). Under the report directory's localized/ (pytest without "
    "--report-dir: reports/localized/)",
    action="store_true",
    default=False,
)

def lanes(workers: int | None) -> int:
    """How many lanes -j gives a run on this machine: its value, else the CPU count (the nightly's default is None)."""
    return workers or os.cpu_count() or 1


# The `conformance` commands' own (those of the nightly alone: nightly/options.py).
WORKERS = Option(
    ("-j", "--workers"),
    "parallel lanes, each a supervised process (default: CPU count)",
    type=at_least_one,
    default=os.cpu_count() or 1,
    metavar="N",
    setting="lanes",
    to_setting=lanes,  # the lanes executor's count, which its children's compilers share the cores by
)
BASELINE = Option(
    ("--baseline",),
    "report to compare with (default: the latest one in --output-dir)",
    type=baseline,
    metavar="DIR|none",
)
RESULTS = Option(
    ("--results",),
    "use this report's results (a report directory or a results.jsonl) instead of running",
    type=results_source,
    metavar="DIR|FILE",
)

# What each front end declares, in the order --help lists them.
PYTEST = (
    BACKEND, CASES, CASE, NO_DEFAULT_CASES, SUITE, SEED, CASE_TIMEOUT, MEMORY_LIMIT, BATCH_SIZE,
    RERUNS, CHECK_DETERMINISM, COMPILE_ONLY, ARTIFACTS, CACHE_DIR, NO_CACHE, XFAIL_DIR, NO_XFAIL, UPDATE_XFAILS, EXPORT_MODE,
    REPORT_DIR, LOCALIZE, GATES, GATES_DIR,
)  # fmt: skip
CASE_SELECTION = (CASES, NO_DEFAULT_CASES, SUITE, KEYWORD, TAG, SKIP_TAG)
EXECUTION = (
    SEED, CASE_TIMEOUT, BATCH_SIZE, MEMORY_LIMIT, RERUNS, CHECK_DETERMINISM, COMPILE_ONLY, CACHE_DIR, NO_CACHE, ARTIFACTS,
    XFAIL_DIR, NO_XFAIL, EXPORT_MODE,
)  # fmt: skip

_FILLING_SETTINGS = [o for o in (CASES, NO_DEFAULT_CASES, SUITE, *EXECUTION, GATES, WORKERS) if o.setting]


# -- from parsed values to what a run uses ------------------------------------


def settings_from(namespace, backends: Iterable[str] = (), backend_options: Iterable[Option] = ()) -> Settings:
    """The run's Settings from parsed options: pytest's config.option or a command's namespace.

    Options the front end did not declare keep Settings' defaults. Backend
    options travel as given (an option left out is the backend's to default).
    """
    fields = {o.setting: o.to_setting(o.value(namespace)) for o in _FILLING_SETTINGS if hasattr(namespace, o.dest)}
    if NO_CACHE.value(namespace):
        fields["cache_dir"] = None
    options = {o.dest: o.value(namespace) for o in backend_options if o.value(namespace) is not None}
    return Settings(backends=list(backends), options=options, **fields)


def xfail_sets_dir(namespace) -> str:
    """Where the xfail sets live (--xfail-dir, or the project's)."""
    return XFAIL_DIR.value(namespace) or str(content.DEFAULT_XFAIL_DIR)


def xfail_dir(namespace) -> str | None:
    """The xfail directory a run judges against, or None with --no-xfail."""
    return None if NO_XFAIL.value(namespace) else xfail_sets_dir(namespace)


def gates_sets_dir(namespace) -> str:
    """Where the gates files live (--gates-dir, or the project's)."""
    return GATES_DIR.value(namespace) or str(content.DEFAULT_GATES_DIR)


def gates_dir(namespace) -> str | None:
    """The gates directory a run judges against, or None without --gates."""
    return gates_sets_dir(namespace) if GATES.value(namespace) else None


def backend_options(backends) -> list[Option]:
    """The options the given backends declare, each once; two backends may share one Option."""
    found: dict[str, Option] = {}
    for backend in backends:
        for option in getattr(backend, "options", ()):
            for flag in option.flags:
                if found.setdefault(flag, option) is not option:
                    raise ValueError(f"backend {backend.name!r} declares {flag} again, differently from another backend of the run")
    return list(dict.fromkeys(found.values()))


def add_backend_options(group, backends) -> list[Option]:
    """Declare the options `backends` declare on a parser or group; returns them.

    An option left out stays None, so it is not in Settings.options and its
    backend applies its own default (and compile-cache keys stay those of a
    run without it).
    """
    options = backend_options(backends)
    for option in options:
        option.add_to(group, default=None)
    return options
