"""A fuzz run: generate programs for a time budget, run them, group the failures, shrink one per group, write it down.

    1. Hypothesis draws programs (search.generate, seeded); they run in
       batches on every backend through the Engine (programs/runner.py):
       the supervised child, its classification, crash and hang handling
    2. the failures that reached the backend are grouped by root cause
       (report/triage.py: backend, code, op); a program the case, eager
       or torch.export refused is invalid and counted apart
    3. each group's smallest program is shrunk by Hypothesis
       (search.shrink) while it still fails the same way (stage, code, op),
       then by the reduction loop (reduce/loop.py: an op cut to an input,
       plainer values, which the strategy cannot draw); groups whose
       programs first go wrong at the same result are merged (upstream.py)
    4. the result becomes a one-file case (cases/<id>.py), run once more
       from that file in a fresh child with --artifacts: the failure is
       confirmed and its reproducer bundle written
    5. each group is checked against the shipped xfail sets: is it news?

The same seed draws the same programs in the same order: a run is
reproduced by its seed and its program count (`--programs N`), which the
record gives; a time budget alone stops wherever the machine got to.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from conformance.content import DEFAULT_XFAIL_DIR
from conformance.fuzz import known, search, upstream
from conformance.fuzz.strategies import Config, Stats
from conformance.paths import safe_name
from conformance.programs import program as programs
from conformance.programs.program import Program
from conformance.programs.runner import Runner, confirm
from conformance.programs.verdict import fails_same_way, invalid, signature
from conformance.reduce.loop import reduce
from conformance.report.triage import root_causes
from conformance.result import Result
from conformance.settings import Settings

CASES_DIR = "cases"
BUNDLES_DIR = "bundles"
RECORD = "fuzz.json"


@dataclass
class Plan:
    """What a fuzz run does: its backends (as --backend specs and as Results name them), budget, seed, where it writes."""

    specs: list[str]
    names: list[str]
    config: Config
    seed: int
    output: Path
    settings: Settings
    budget: float = 300.0  # seconds of generating and running
    max_programs: int | None = None  # stop after this many programs (reproduces a run exactly)
    batch: int = 32  # programs per job
    shrink_seconds: float = 120.0  # per group
    shrink_runs: int = 150  # per group: programs run while shrinking
    shrink_known: bool = True  # False: a group a shipped case already shows keeps its smallest program as found
    xfail_dir: Path | None = DEFAULT_XFAIL_DIR


@dataclass
class Seen:
    """One program run: where the search drew it, and its Result on each backend."""

    place: int
    program: Program
    results: dict[str, Result]

    @property
    def id(self) -> str:
        return f"fuzz.{self.program.key()}"


@dataclass
class Campaign:
    plan: Plan
    log: Callable[[str], None] = lambda line: None
    stats: Stats = field(default_factory=Stats)
    seen: list[Seen] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)
    drawn: int = 0  # programs Hypothesis handed over (duplicates too): a program's place in the search

    def run(self) -> dict:
        plan = self.plan
        started = time.monotonic()
        plan.output.mkdir(parents=True, exist_ok=True)
        with Runner(dataclasses.replace(plan.settings, backends=plan.specs), plan.names, plan.output, plan.batch,
                    plan.config.rtol, plan.config.atol) as runner:
            self._explore(runner, started)
            explored = time.monotonic() - started
            groups = self._groups()
            self.log(f"{len(self.seen)} programs run in {explored:.0f} s; {len(groups)} root-cause groups")
            pairs = self._known_pairs()
            found = _merged([self._shrink(runner, g, pairs) for g in groups])
            if self.plan.shrink_runs > 0:  # shrunk programs have few calls: a cut after each is cheap
                found = upstream.merge(found, lambda backend, batch: [r[0] for r in runner.run(batch, [backend])], self.log)
        self._write_and_confirm(found)
        record = self._record(found, pairs, explored, time.monotonic() - started)
        (plan.output / RECORD).write_text(json.dumps(record, indent=1))
        return record

    # -- 1. generate and run ------------------------------------------------------

    def _explore(self, runner: Runner, started: float) -> None:
        plan = self.plan
        pending: list[tuple[int, Program]] = []

        def over() -> bool:
            return time.monotonic() - started >= plan.budget or (plan.max_programs is not None and len(self.seen) + len(pending) >= plan.max_programs)

        def visit(program: Program) -> None:
            place = self.drawn
            self.drawn += 1
            if program.key() not in self.keys:
                self.keys.add(program.key())
                pending.append((place, program))
            if pending and (len(pending) >= plan.batch or over()):
                self._round(runner, pending)
                pending.clear()
            if over():
                raise search.Spent

        search.generate(plan.config, plan.seed, visit, self.stats)
        if pending:
            self._round(runner, pending)

    def _round(self, runner: Runner, batch: list[tuple[int, Program]]) -> None:
        for (place, program), results in zip(batch, runner.run([p for _, p in batch])):
            seen = Seen(place, program, {})
            for r in results:
                seen.results[r.backend] = dataclasses.replace(r, case=seen.id)
            self.seen.append(seen)
        failed = sum(r.failed and not invalid(r) for s in self.seen for r in s.results.values())
        self.log(f"{len(self.seen)} programs run, {failed} failures")

    # -- 2. group ---------------------------------------------------------------------

    def _groups(self):
        results = [r for s in self.seen for r in s.results.values() if not invalid(r)]
        ops = {s.id: {"ops": list(s.program.ops)} for s in self.seen}
        # Shrinking runs on one backend: each backend's failures are grouped apart (a tool shared by
        # several would otherwise make one group of them).
        return [g for name in self.plan.names for g in root_causes([r for r in results if r.backend == name], ops)]

    # -- 3. shrink ----------------------------------------------------------------------

    def _known_pairs(self) -> dict[str, set]:
        plan = self.plan
        if not plan.xfail_dir:
            return {}
        ops = known.case_ops()
        return {name: known.known_pairs(plan.xfail_dir, name, ops) for name in plan.names}

    def _shrink(self, runner: Runner, group, pairs: dict[str, set]) -> dict:
        by_id = {s.id: s for s in self.seen}
        members = [by_id[c] for c in group.cases]
        smallest = min(members, key=lambda s: (s.program.size(), s.place))
        wanted = smallest.results[group.backend]
        found = {"group": group, "wanted": wanted, "smallest": smallest, "program": smallest.program, "shrunk": None,
                 "count": group.count, "op": group.op or _only_op(smallest.program)}
        if self.plan.shrink_runs <= 0:
            return found
        if not self.plan.shrink_known and pairs and known.shown_by(pairs.get(group.backend, set()), group.code, found["op"]):
            return found
        verdicts: dict[str, bool] = {smallest.program.key(): True}
        start, runs = time.monotonic(), [0]
        # Two thirds of the budget for Hypothesis (one program a run), the rest for the loop (a batch a round).
        hypothesis_runs, hypothesis_s = self.plan.shrink_runs * 2 // 3, self.plan.shrink_seconds * 2 / 3

        def interesting(program: Program) -> bool:
            key = program.key()
            if key not in verdicts:
                if runs[0] >= hypothesis_runs or time.monotonic() - start >= hypothesis_s:
                    return False  # out of budget: "no" ends the shrinking with the smallest found so far
                runs[0] += 1
                [[result]] = runner.run([program], [group.backend])
                verdicts[key] = fails_same_way(wanted, result)
            return verdicts[key]

        shrunk = search.shrink(self.plan.config, self.plan.seed, smallest.program, smallest.place, interesting)
        if shrunk is not None:
            found["program"] = found["shrunk"] = shrunk
        # Hypothesis keeps to the strategy (at least min_ops ops, drawn inputs); the reduction loop
        # goes on from there: an op cut to an input, plainer values.
        left_s = self.plan.shrink_seconds - (time.monotonic() - start)
        polished = reduce(found["program"], wanted, lambda batch: [r[0] for r in runner.run(batch, [group.backend])],
                          seconds=max(left_s, 0.0), runs=max(self.plan.shrink_runs - runs[0], 0))
        found["program"] = polished.program
        found["op"] = group.op or _only_op(polished.program)
        found["shrink"] = {"hypothesis_runs": runs[0], "met": shrunk is not None,
                           "after_hypothesis": shrunk.describe() if shrunk is not None else None, "reduce_runs": polished.runs,
                           "reduce_steps": polished.kept, "seconds": round(time.monotonic() - start, 1)}
        self.log(f"{group.backend} {signature(wanted)}: {smallest.program.describe()} -> {found['program'].describe()} "
                 f"({runs[0]} + {polished.runs} runs)")
        return found

    # -- 4. the case files, confirmed from themselves -----------------------------------

    def _write_and_confirm(self, found: list[dict]) -> None:
        plan = self.plan
        directory = plan.output / CASES_DIR
        for item in found:
            program, wanted = item["program"], item["wanted"]
            case_id = f"fuzz.{wanted.backend}.{program.key()}"
            item["case_id"] = case_id
            doc = (
                f"Found by `conformance fuzz --backend {' --backend '.join(plan.specs)} --seed {plan.seed}` "
                f"(program {item['smallest'].place} of the search): {signature(wanted)} on {wanted.backend}.\n\n"
                f"{wanted.explanation}\n\n"
                f"Shrunk (by Hypothesis, then the reduction loop) from {item['smallest'].program.describe()}.\n"
                f"Run it: pytest --backend={plan.specs[plan.names.index(wanted.backend)]} --cases {directory} -k {case_id}"
            )
            # The registry imports a case file as a module: no dots in its name.
            item["case_file"] = str(programs.write(program, directory, safe_name(case_id).replace(".", "_"), case_id, doc, ("fuzz",)))
        if not found:
            return
        results = confirm(plan.settings, plan.specs, directory, [(item["case_id"], item["wanted"].backend) for item in found],
                          plan.output / BUNDLES_DIR)
        for item in found:
            result = results[(item["case_id"], item["wanted"].backend)]
            item["confirmed"] = fails_same_way(item["wanted"], result)
            item["confirm"] = {"status": result.status, "code": result.code, "op": result.op, "explanation": result.explanation}
            item["bundle"] = result.artifacts

    # -- 5. the record --------------------------------------------------------------------

    def _record(self, found: list[dict], pairs: dict[str, set], explored: float, seconds: float) -> dict:
        plan = self.plan
        groups = []
        for item in found:
            group, wanted, program, op = item["group"], item["wanted"], item["program"], item["op"]
            groups.append({
                "backend": group.backend, "code": wanted.code, "stage": wanted.stage, "op": op, "count": item["count"],
                "known": known.shown_by(pairs.get(group.backend, set()), wanted.code, op) if pairs else None,
                "explanation": wanted.explanation,
                "smallest": {"id": item["smallest"].id, "place": item["smallest"].place, "program": item["smallest"].program.describe()},
                "program": program.describe(), "shrink": item.get("shrink"),
                "case_id": item.get("case_id"), "case_file": item.get("case_file"),
                "confirmed": item.get("confirmed"), "confirm": item.get("confirm"), "bundle": item.get("bundle"),
                "downstream": item.get("downstream", []),
            })
        refused = Counter(
            (r.stage, r.code, r.op) for s in self.seen for r in s.results.values() if invalid(r)
        )
        per_backend = {}
        for name in plan.names:
            results = [s.results[name] for s in self.seen]
            mine = [g for g in groups if g["backend"] == name]
            per_backend[name] = {
                "run": len(results),
                "passed": sum(r.passed for r in results),
                "failed": sum(r.failed and not invalid(r) for r in results),
                "invalid": sum(invalid(r) for r in results),
                "other": sum(not r.passed and not r.failed for r in results),
                "groups": len(mine),
                "new_groups": sum(g["known"] is False for g in mine),
            }
        return {
            "backends": plan.names, "specs": plan.specs, "seed": plan.seed, "budget_s": plan.budget,
            "explored_s": round(explored, 1), "seconds": round(seconds, 1),
            "config": {"ops": [o.name for o in plan.config.ops], "dtypes": list(plan.config.dtypes),
                       "min_ops": plan.config.min_ops, "max_ops": plan.config.max_ops, "dynamic": plan.config.dynamic,
                       "rtol": plan.config.rtol, "atol": plan.config.atol},
            "programs": {"drawn": self.stats.drawn, "rejected": dict(self.stats.rejected), "distinct": len(self.keys),
                         "run": len(self.seen), "searched": self.drawn},
            "per_backend": per_backend,
            "groups": groups,
            "refused": [{"stage": st, "code": c, "op": o, "count": n} for (st, c, o), n in refused.most_common()],
            "reproduce": f"conformance fuzz {' '.join('--backend ' + s for s in plan.specs)} --seed {plan.seed} --programs {len(self.seen)}",
        }


def _only_op(program: Program) -> str | None:
    return program.ops[0] if len(program.ops) == 1 else None


def _merged(found: list[dict]) -> list[dict]:
    """Groups that name the same op once shrunk are one: a wrong number names no op, so the programs of several
    ops made a group of their own until shrinking showed the op (the smallest program kept, the counts summed)."""
    by_key: dict[tuple, dict] = {}
    for item in found:
        key = (item["group"].backend, item["group"].code, item["wanted"].stage, item["op"])
        if item["op"] is None or key not in by_key:
            by_key[key if item["op"] is not None else (*key, id(item))] = item
            continue
        kept = by_key[key]
        count = kept["count"] + item["count"]
        if item["program"].size() < kept["program"].size():
            by_key[key] = kept = item
        kept["count"] = count
    return list(by_key.values())
