"""report.md: the summary as tabulate tables, for a PR comment or a mailing list."""

from __future__ import annotations

from tabulate import tabulate

from conformance.execution.reruns import in_a_word
from conformance.report.summary import op_dtype_rows

ROOT_CAUSES_SHOWN = 40
# Issue files are made on demand, not with the report: see docs/filing-issues.md for why.
ISSUE_HINT = ("An issue file for a group, for the tracker of the tool that failed: `conformance issue ID --results .` "
              "in this directory (the run needs --artifacts; docs/filing-issues.md).")
FLAKY_SHOWN = 100
CHANGES_SHOWN = 100
OPS_SHOWN = 100


def _rate(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"


def render(summary: dict) -> str:
    run, backends = summary["run"], summary["backends"]
    out = [
        "# Conformance report",
        "",
        f"Run started {run.get('started')}, wall time {run.get('wall_seconds') or 0:.0f} s; "
        f"{summary['matrix']['cases']} cases x {len(backends)} backends = {summary['matrix']['results']} results. "
        f"UNKNOWN failures (unclassified): {summary['unknown']}.",
        "",
        "Toolchain: " + ", ".join(f"{k} {v}" for k, v in summary["toolchain"].items() if v),
        "",
        "## Pass rate per backend",
        "",
    ]
    codes = sorted({c for b in backends.values() for c in b["by_code"]})
    # Pairs compiled for a device this machine lacks: a column of their own, never counted as passes.
    compiled = any(b["by_status"].get("compiled") for b in backends.values())
    rows = [
        [name, b["total"], b["by_status"]["pass"], b["by_status"]["fail"], b["by_status"]["skip"], b["by_status"].get("flaky", 0),
         *([b["by_status"].get("compiled", 0)] if compiled else []), _rate(b["pass_rate"]),
         *([_rate(b.get("compile_rate"))] if compiled else []),
         ", ".join(f"{c} {b['by_code'][c]}" for c in codes if c in b["by_code"]) or "-"]
        for name, b in backends.items()
    ]
    headers = ["backend", "total", "pass", "fail", "skip", "flaky", *(["compiled, not run"] if compiled else []), "pass rate",
               *(["compile rate"] if compiled else []), "failure codes"]
    out += [tabulate(rows, headers=headers, tablefmt="github"), ""]
    if compiled:
        out += ["*compiled, not run*: compiled for the backend's target, not run for lack of such a device here; "
                "such a backend has no pass rate; compile rate = (pass + compiled + failed only when run) / (all but skips).", ""]

    out += ["## Pass rate per family", ""]
    names = list(backends)
    rows = []
    for family, per in summary["families"].items():
        cells = []
        for b in names:
            c = per.get(b)
            ran = (c["pass"] + c["fail"] + c.get("flaky", 0)) if c else 0
            cell = f"{c['pass']}/{ran}" if c and ran else "-"
            cells.append(f"{cell} +{c['compiled']} compiled" if c and c.get("compiled") else cell)
        rows.append([family, *cells])
    out += [tabulate(rows, headers=["family", *names], tablefmt="github"), ""]

    groups = summary["root_causes"]
    out += [f"## Root causes ({len(groups)} groups, largest first)", ""]
    rows = [[n, f"`{g.get('id', '-')}`", g["count"], _code_label(g), g["op"] or "-", g["tool"], _backends_label(g), g["example"]["case"],
             g["example"]["explanation"][:200]] for n, g in enumerate(groups[:ROOT_CAUSES_SHOWN], 1)]
    out += [tabulate(rows, headers=["#", "id", "count", "code", "op", "tool", "backends", "example", "explanation"], tablefmt="github"), ""]
    if groups:
        out += [ISSUE_HINT, ""]
    if len(groups) > ROOT_CAUSES_SHOWN:
        out += [f"... and {len(groups) - ROOT_CAUSES_SHOWN} smaller groups (all of them are in summary.json).", ""]

    localized = summary.get("localized") or []
    if localized:  # --localize: the op each failing model was traced to
        out += [f"### Localized model failures ({len(localized)})", ""]
        rows = [[i["case"], i["backend"], i["code"], i["op"] or "-", i["summary"][:240]] for i in localized]
        out += [tabulate(rows, headers=["model", "backend", "code", "op", "localization"], tablefmt="github"), ""]

    flaky = summary.get("flaky") or []
    out += [f"## Flaky pairs ({len(flaky)})", ""]
    if flaky:
        out += ["Their runs disagreed, each in a fresh process: no verdict to trust, and none written into an xfail set.", ""]
        rows = [[f["case"], f["backend"], " / ".join(in_a_word(a) for a in f["attempts"]), f["explanation"][:200]] for f in flaky[:FLAKY_SHOWN]]
        out += [tabulate(rows, headers=["case", "backend", "runs", "explanation"], tablefmt="github"), ""]
        if len(flaky) > FLAKY_SHOWN:
            out += [f"... and {len(flaky) - FLAKY_SHOWN} more (all of them are in summary.json).", ""]
    else:
        out += ["None: every re-run agreed with the first run.", ""]

    ch = summary["changes"]
    out += ["## Changes since the baseline", ""]
    if ch["baseline"] is None:
        out += ["No baseline: this is the first report in its directory (or --baseline none).", ""]
    else:
        out += [
            f"Baseline: {ch['baseline']}. Newly failing (regressions): {len(ch['newly_failing'])}; "
            f"newly passing: {len(ch['newly_passing'])}; failing differently: {len(ch['changed'])}; "
            f"new pairs: {ch['added']}; pairs gone: {ch['removed']}.",
            "",
        ]
        for title, items in (("Newly failing", ch["newly_failing"]), ("Failing differently", ch["changed"])):
            if items:
                rows = [[i["case"], i["backend"], i["code"], (i.get("was") or {}).get("code", "PASS"), i["explanation"][:160]] for i in items[:CHANGES_SHOWN]]
                out += [f"### {title}", "", tabulate(rows, headers=["case", "backend", "now", "was", "explanation"], tablefmt="github"), ""]
        if ch["newly_passing"]:
            rows = [[i["case"], i["backend"], i.get("status", "pass"), i["was"]["code"]] for i in ch["newly_passing"][:CHANGES_SHOWN]]
            out += ["### Newly passing", "", tabulate(rows, headers=["case", "backend", "now", "was"], tablefmt="github"), ""]
        if ch.get("newly_beyond_gates"):
            out += ["### Newly beyond gate tolerance (still passing)", "", _gate_table(ch["newly_beyond_gates"]), ""]

    cover = summary.get("op_coverage") or {}
    partial = {op: per for op, per in cover.items() if any(c["pass"] < c["cases"] for c in per.values())}
    out += [f"## Op coverage: the {len(partial)} of {len(cover)} ops failing on some backend", ""]
    if partial:
        failing = [(op, dtype, per) for op, dtype, per in op_dtype_rows(summary) if any(c["pass"] < c["cases"] for c in per.values())]
        rows = [[op, dtype, *(f"{per[b]['pass']}/{per[b]['cases']}" if b in per else "-" for b in names)] for op, dtype, per in failing[:OPS_SHOWN]]
        out += ["Cases using the op (its overload packet) with these input dtypes that pass / that ran.", "",
                tabulate(rows, headers=["op", "dtypes", *names], tablefmt="github"), ""]
        if len(failing) > OPS_SHOWN:
            out += [f"... and {len(failing) - OPS_SHOWN} more (all of them are in summary.json).", ""]

    out += gates(summary.get("gates"))
    out += compile_figures(backends)
    out += ["## Time per stage (seconds, summed over cases)", ""]
    stages = sorted({s for b in backends.values() for s in b["stage_seconds"]})
    rows = [[name, *(f"{b['stage_seconds'].get(s, 0):.1f}" for s in stages)] for name, b in backends.items()]
    out += [tabulate(rows, headers=["backend", *stages], tablefmt="github"), ""]
    for extra in summary.get("sections", []):
        out += [f"## {extra['title']}", "", extra["markdown"], ""]
    return "\n".join(out)


def _gate_table(pairs: list[dict]) -> str:
    """One row per figure: the pair, the figure, its golden value, what was measured, the bound it crossed."""
    rows = [
        [p["case"], p["backend"], f["figure"], f"{f['golden']:g}", f"{f['measured']:g}", f"{f['allowed']:g}",
         f"{(f['measured'] - f['golden']) / f['golden']:+.0%}" if f["golden"] else "-"]
        for p in pairs[:CHANGES_SHOWN] for f in p["figures"]
    ]
    return tabulate(rows, headers=["case", "backend", "figure", "golden", "measured", "allowed ±", "change"], tablefmt="github")


def gates(gated: dict | None) -> list[str]:
    """--gates: the pairs beyond their golden figures (regressions of their own kind) and those below (stale goldens)."""
    if not gated:
        return []
    out = [
        "## Gates (golden figures)", "",
        f"{gated['judged']} gated pairs judged on {gated['figures']} figures against gate_sets/: "
        f"{len(gated['beyond'])} beyond tolerance (their verdicts stay PASS: a regression of speed or size, not of "
        f"correctness), {len(gated['below'])} better than golden beyond tolerance (update the golden: conformance gates update); "
        f"{gated['unmeasured']} figures not measured in this run.", "",
    ]
    for title, pairs in (("Beyond tolerance", gated["beyond"]), ("Below tolerance (golden stale)", gated["below"])):
        if pairs:
            out += [f"### {title} ({len(pairs)})", "", _gate_table(pairs), ""]
    return out


def _kb(n: float | None) -> str:
    return "-" if n is None else f"{n / 1024:,.0f}"


def compile_figures(backends: dict) -> list[str]:
    """The compile figures of the backends that record them (IREE's): median and max per case."""
    rows = []
    for name, b in backends.items():
        f = b.get("compile_stats")
        if f:
            d, s, v = f["dispatches"], f["seconds"], f["vmfb_bytes_alone"]
            rows.append([name, f["cases"], d["median"], d["max"], s["median"], s["max"], v["cases"], _kb(v["median"]), _kb(v["max"])])
    if not rows:
        return []
    headers = ["backend", "cases", "dispatches median", "max", "compile s median", "max", "compiled alone", "module KB median", "max"]
    return [
        "## Compile figures", "",
        "Per case compiled: dispatches (IREE's static statistics of its function), compile seconds (a batch's time "
        "shared among its cases), module size (.vmfb) of the cases compiled alone (models; op cases compile in batches).", "",
        tabulate(rows, headers=headers, tablefmt="github"), "",
    ]


def _code_label(group: dict) -> str:
    return f"{group['code']} ({group['kind']})" if group.get("kind") else group["code"]


def _backends_label(group: dict) -> str:
    return ", ".join(f"{name} {n}" for name, n in group["backends"].items())
