"""The options only `conformance nightly` takes: where reports go, --resume, shards, executors.

They are declared as run_options declares the others (an Option each, its
check run while the command line is read). RESULT_OPTIONS and HOW_OPTIONS
are the one list of what --resume must agree on and what it may change;
--resume's help is written from them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from conformance import report_dir
from conformance import run_options as ro
from conformance.run_options import Option

# -- checks ------------------------------------------------------------------


def resumable(text: str) -> str:
    if not (Path(text) / report_dir.RUN).is_file():
        raise argparse.ArgumentTypeError(f"{text}: not a report directory (no {report_dir.RUN})")
    return ro.writable_dir(text)


def shard(text: str):
    from conformance.nightly.matrix import Shard

    try:
        return Shard.parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix(f"--shard {text}: ").removeprefix("--shard ")) from None


def executor(text: str) -> str:
    """An executor's name (nightly/executors); `ray` only where Ray is installed."""
    import importlib.util

    from conformance.nightly.executors import NAMES

    if text not in NAMES:
        raise argparse.ArgumentTypeError(f"expected {' or '.join(NAMES)}, got {text!r}")
    if text == "ray" and importlib.util.find_spec("ray") is None:
        raise argparse.ArgumentTypeError("ray is not installed here: pip install 'conformance[ray]'")
    return text


# -- the options -------------------------------------------------------------

OUTPUT_DIR = Option(
    ("--output-dir",),
    "where report directories are created (default: reports/)",
    type=ro.writable_dir,
    default="reports",
    metavar="DIR",
)
SHARD = Option(
    ("--shard",),
    "run only shard I of N (cases split by a hash of their id); combine with `conformance merge`",
    type=shard,
    metavar="I/N",
)
DURATIONS = Option(
    ("--durations",),
    "with --shard: balance the shards by the per-pair times of this earlier report (a report directory or its "
    "results.jsonl), longest cases first; cases it lacks go by the hash",
    type=ro.results_source,
    metavar="DIR|FILE",
    path=True,
)
EXECUTOR = Option(
    ("--executor",),
    "where the jobs run: lanes (supervised processes on this machine) or ray (actors on a Ray cluster, "
    "each with its supervised process; needs pip install 'conformance[ray]')",
    type=executor,
    default="lanes",
    metavar="lanes|ray",
)
ADDRESS = Option(
    ("--address",),
    "with --executor ray: the cluster to join, as `ray start --address` takes it (HOST:PORT, or auto); "
    "default: a Ray instance started on this machine",
    metavar="ADDR",
)

# What a resumed run must agree on with the run it finishes (they change results: a report holds
# one run, never the halves of two), and what it may change (how the rest is run). The backends'
# own options are result options too.
RESULT_OPTIONS = (
    ro.BACKEND, ro.CASES, ro.NO_DEFAULT_CASES, ro.SUITE, ro.KEYWORD, ro.TAG, ro.SKIP_TAG, SHARD,
    ro.SEED, ro.CASE_TIMEOUT, ro.MEMORY_LIMIT, ro.BATCH_SIZE, ro.XFAIL_DIR, ro.NO_XFAIL, ro.EXPORT_MODE, ro.RERUNS, DURATIONS,
    ro.CHECK_DETERMINISM, ro.COMPILE_ONLY, ro.GATES, ro.GATES_DIR,
)  # fmt: skip
HOW_OPTIONS = (ro.WORKERS, ro.CACHE_DIR, ro.NO_CACHE, ro.ARTIFACTS)


def flags(options) -> list[str]:
    """How each option is spelled on the command line (its first flag): what --resume's help lists."""
    return [option.flags[0] for option in options]


def _and(words: list[str]) -> str:
    return ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else "".join(words)


RESUME = Option(
    ("--resume",),
    f"finish the interrupted run in DIR, skipping what it already has, with the run's own options (its {report_dir.RUN}): "
    f"an option given that changes results ({', '.join(flags(RESULT_OPTIONS))}, and the backends' own options) "
    f"must agree with the run's; {_and(flags(HOW_OPTIONS))} may differ",
    type=resumable,
    metavar="DIR",
)
