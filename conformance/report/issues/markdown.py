"""An issue file: one root-cause group as Markdown to paste into the failing tool's tracker.

GitHub takes an issue body of at most 65,536 characters, so the long parts
are clipped: the IR beyond IR_SHOWN characters is named as an attachment,
tool output beyond PRINTED_SHOWN is cut in the middle. Long parts sit in
<details> so that the issue reads from its title to its command at a glance.
Every text passes through portable(): nothing of this machine is in it.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from conformance.report.issues.commands import Commands, shell_lines
from conformance.report.issues.evidence import Shown
from conformance.report.issues.portable import portable
from conformance.report.issues.replay import Replayed
from conformance.report.issues.trackers import TORCH_MLIR, trackers
from conformance.report.triage import Group
from conformance.result import NUMERIC
from conformance.taxonomy import Code

IR_SHOWN = 30_000  # characters of IR inline; the whole file is attached beyond it
PRINTED_SHOWN = 8_000  # characters of tool output
COLLAPSED_LINES = 40  # a block longer than this is folded into <details>
OTHER_CASES_SHOWN = 50
VALUES_SHOWN = 8
TITLE_LENGTH = 120

# What the stage that failed should have done, for "expected".
_EXPECTED = {
    "export": "torch.export captures the module (eager PyTorch runs it)",
    "import": "torch-mlir's importer turns the exported program into torch-dialect IR",
    "contract": "torch-mlir's backend-contract pipeline accepts the IR, its result types as eager's",
    "lower": "the lowering accepts the IR and emits valid target IR",
    "compile": "the compiler accepts the IR (it is what the lowering emitted for a case eager PyTorch runs)",
    "run": "the program runs and returns outputs",
    "compare": "the outputs equal eager PyTorch's within the case's tolerances (rtol, atol: in the next line)",
}
# "output: ..." / "output[1].logits: ..." / "at input set 2 of 3 (...): output: ..." -> the leaf
_LEAF = re.compile(r"^(?:at input set \d+ of \d+ \([^)]*\): )?(output[^\s:]*):")


# "... at [1, 7] (expected 1.32429, got 1.32424)": a numeric mismatch's worst element
_WORST = re.compile(r"\(expected ([^,()]+), got ([^,()]+)\)")


def title(group: Group, shown: Shown) -> str:
    """The explanation's first clause; for a numeric mismatch, the op, the kind and the worst element."""
    r = shown.result
    sentence = r.explanation.split("; ")[0].rstrip(".")
    if r.stage == "compare" and group.op:
        worst = _WORST.search(r.explanation)
        what = group.kind or r.code.lower().replace("_", " ")
        sentence = f"{group.op} gives a {what} through {group.tool}" + (f": expected {worst[1]}, got {worst[2]}" if worst else "")
    if len(sentence) > TITLE_LENGTH:
        sentence = sentence[: TITLE_LENGTH - 1].rstrip() + "…"
    return sentence


def render(group: Group, shown: Shown, commands: Commands, versions: dict, results_dir: Path,
           replayed: list[Replayed] | None) -> str:
    folders = {shown.bundle.path: ".", results_dir.resolve(): "<results>", results_dir: "<results>"}

    def clean(text: str) -> str:
        return portable(text, folders)

    r = shown.result
    op = f" (`{group.op}`)" if group.op else ""
    kind = f", {group.kind}" if group.kind else ""
    where = trackers(group.tool)
    out = [f"# {clean(title(group, shown))}", ""]
    if where:
        out += ["**File at:** " + "; or ".join(f"{t.project}, {t.url}" for t in where)
                + (" (a wrong answer: the lowering's or the compiler's; the IR below tells which)" if len(where) > 1 and r.stage == "compare" else ""), ""]
    if group.code == Code.ILLEGAL_TYPE and group.stage == "compile":
        out += ["The type comes from the IR a lowering emitted: where no profile of the target allows it, the lowering "
                f"({TORCH_MLIR.project}, {TORCH_MLIR.url}) is where it is avoided, or the compiler where it should accept it.", ""]
    out += [
        f"**Failing tool:** {clean(group.tool)}; stage `{group.stage}`, `{group.code}`{kind}{op}.",
        f"**Seen:** {group.count} failure{'s' if group.count != 1 else ''} of {len(group.cases)} case{'s' if len(group.cases) != 1 else ''} "
        f"(backends: {', '.join(f'{b} {n}' for b, n in group.backends.items())}); group `{group.id}` of a conformance run "
        "(torch-mlir/IREE backend-contract conformance tests).",
        "",
        "## What happens",
        "",
        clean(r.explanation),
        "",
        "## The smallest failing case",
        "",
    ]
    out += _case_section(group, shown, clean)
    out += _ir_section(group, shown, clean)
    out += _command_section(shown, commands, versions, clean)
    out += _printed_section(shown, replayed, clean)
    out += _expected_section(shown, clean)
    out += ["## Versions", "", "| tool | version |", "|---|---|"]
    out += [f"| {name} | {version} |" for name, version in versions.items() if version]
    out += [""]
    out += _others_section(group, shown, clean)
    return "\n".join(out).rstrip() + "\n"


def _case_section(group: Group, shown: Shown, clean) -> list[str]:
    r = shown.result
    ops = (r.extras or {}).get("aten_ops") or []
    if shown.reduction:
        red = shown.reduction
        lines = [
            f"`{shown.case}` on `{r.backend}`: `conformance reduce` shrank `{r.case}` from {clean(red['from'])} "
            f"to {clean(red['to'])} while it kept failing the same way (inputs {', '.join(red.get('inputs') or []) or 'none'}).",
            "",
        ]
        case_file = Path(red.get("case_file") or "")
        if case_file.is_file():
            lines += _block("python", clean(case_file.read_text()), f"the reduced case as PyTorch ({case_file.name})", folded=True)
        return lines
    sizes = shown.size
    which = ("the group's only failure" if group.count == 1
             else f"the smallest of the group's {group.count} with a bundle (by ATen ops, files to attach, input size, IR size)")
    lines = [f"`{r.case}` on `{r.backend}`, {which}"
             + (f": {sizes[0]} ATen op{'s' if sizes[0] != 1 else ''}, {sizes[2]} input element{'s' if sizes[2] != 1 else ''}" if sizes else "")
             + "."]
    if ops:
        lines += ["", "ATen ops in its exported graph: " + ", ".join(f"`{o}`" for o in ops[:30]) + (" …" if len(ops) > 30 else "")]
    return lines + [""]


def _ir_section(group: Group, shown: Shown, clean) -> list[str]:
    files = shown.bundle.ir_files()
    if not files:
        return []
    lines = [f"## The IR handed to the tool", ""]
    for f in files:
        text = clean(f.read_text(errors="replace"))
        note = f"`{f.name}` ({len(text):,} characters)"
        if len(text) > IR_SHOWN:
            lines += [f"{note}: too long for an issue; its first {IR_SHOWN:,} characters are below, **attach the whole file** "
                      f"(from the reproducer bundle) to run the commands.", ""]
            text = text[:IR_SHOWN].rsplit("\n", 1)[0] + "\n// ... (clipped: the rest is in the attached file)"
        lines += _block("mlir", text, note)
    return lines


def _command_section(shown: Shown, commands: Commands, versions: dict, clean) -> list[str]:
    bundle = shown.bundle
    tools = {line[0] for line in commands.lines}
    lines = ["## To reproduce", ""]
    if commands.lines:
        saved = ", ".join(f"`{f.name}`" for f in bundle.ir_files())
        lines += [f"Save the IR above as {saved} and run, in that folder, with the public tools on PATH "
                  f"({', '.join(f'`{t}`' for t in sorted(tools))}: versions below):", ""]
        lines += ["```sh", *(clean(line) for line in shell_lines(commands)), "```", ""]
        if commands.attachments:
            lines += ["It also reads " + ", ".join(f"`{a}`" for a in commands.attachments)
                      + " (binary: attach them from the reproducer bundle).", ""]
    else:
        lines += ["No public tool runs this stage on its own; the case reruns through the conformance framework "
                  "(its case file and the command below):", "", "```sh", clean(bundle.rerun or "(no command recorded)"), "```", ""]
    return lines


def _printed_section(shown: Shown, replayed: list[Replayed] | None, clean) -> list[str]:
    lines = ["## What it printed", ""]
    if replayed:
        last = replayed[-1]
        verdict = (f"`{last.command[0]}` exited with status {last.status}" if last.status
                   else "every command exited with status 0: **the failure did not reproduce** with the public tools")
        lines += [f"Replayed just now, as above: {verdict}.", ""]
        lines += _block("text", _clip(clean(last.output)) or "(nothing)", f"output of `{last.command[0]}`")
    else:
        lines += ["As recorded when the case failed (not replayed):", ""]
        lines += _block("text", _clip(clean(_tool_output(shown.bundle.printed))) or "(nothing)", "the tool's output")
    return lines


def _expected_section(shown: Shown, clean) -> list[str]:
    r = shown.result
    lines = ["## Expected vs got", "", f"- **Expected:** {_EXPECTED.get(r.stage or '', 'the stage succeeds')}."]
    lines += [f"- **Got:** {clean(r.explanation)}"]
    numeric = (r.extras or {}).get(NUMERIC)
    if r.code == Code.NUMERIC_MISMATCH or numeric:
        leaf = _LEAF.match(r.explanation)
        if leaf:
            lines += [f"- **Output:** `{leaf.group(1)}`; tolerances as in the sentence above (`rtol`, `atol`)."]
        if isinstance(numeric, dict):
            factor = numeric.get("factor")
            against = (f"the backend's largest error against the same program in float64 is {factor:.3g}x eager's own "
                       "(up to 100x counts as precision: another summation order, narrower intermediates)" if factor is not None
                       else "integer results, wrong where eager agrees with the same program in float64" if numeric.get("kind") != "precision"
                       else "integer results, wrong only where eager too differs from the same program in float64")
            lines += [
                f"- **Precision or wrong answer:** {numeric.get('kind')}: {against}; "
                f"{100 * numeric.get('mismatch_fraction', 0):.3g}% of elements outside tolerance"
                + (f", SQNR {numeric['sqnr_db']:.1f} dB" if numeric.get("sqnr_db") is not None else "") + "."
            ]
        values = _expected_values(shown.bundle.path, leaf.group(1) if leaf else None)
        if values:
            lines += [f"- **Eager's values** (the first {VALUES_SHOWN}, flattened): `{values}`; the replayed tool prints the backend's above."]
    return lines + [""]


def _others_section(group: Group, shown: Shown, clean) -> list[str]:
    others = [m for m in group.members if (m.case, m.backend) != (shown.result.case, shown.result.backend)]
    if not others:
        return ["## Other cases of this group", "", "None: this is the group's only failure.", ""]
    by_case: dict[str, list[str]] = {}
    for m in others:
        by_case.setdefault(m.case, []).append(m.backend)
    lines = [f"## Other cases of this group ({len(others)} failure{'s' if len(others) != 1 else ''})", "",
             "| case | backends |", "|---|---|"]
    for case, backends in list(by_case.items())[:OTHER_CASES_SHOWN]:
        lines.append(f"| `{clean(case)}` | {', '.join(backends)} |")
    if len(by_case) > OTHER_CASES_SHOWN:
        lines.append(f"| … and {len(by_case) - OTHER_CASES_SHOWN} more cases | |")
    return lines + [""]


def _expected_values(bundle: Path, leaf: str | None) -> str | None:
    """Eager's first few values of the output, from the bundle's expected/set0 (the flat output index from `output[i]`)."""
    index = 0
    if leaf:
        found = re.match(r"output\[(\d+)\]", leaf)
        index = int(found.group(1)) if found else 0
    path = bundle / "expected" / "set0" / f"{index}.npy"
    if not path.is_file():
        return None
    array = np.load(path).reshape(-1)[:VALUES_SHOWN]
    return " ".join(str(v) for v in array)


def _tool_output(details: str) -> str:
    """What the tool printed, without our traceback after it (details.txt: the text the classifier read, then the traceback)."""
    text = details.split("\nTraceback (most recent call last):", 1)[0]
    first, _, rest = text.partition("\n")
    if re.match(r"^[\w.]+(Error|Failure|Exception): \S+ (exited with status|killed by signal)", first):
        return rest  # "conformance.toolchain.tools.ToolError: iree-compile exited with status 1:" is ours
    return text


def _clip(text: str) -> str:
    text = text.strip()
    if len(text) <= PRINTED_SHOWN:
        return text
    half = PRINTED_SHOWN // 2
    return f"{text[:half]}\n... ({len(text) - 2 * half:,} characters left out) ...\n{text[-half:]}"


def _block(language: str, text: str, summary: str, folded: bool | None = None) -> list[str]:
    fence = "````" if "```" in text else "```"
    block = [f"{fence}{language}", text.rstrip("\n"), fence]
    if folded is None:
        folded = text.count("\n") > COLLAPSED_LINES
    if folded:
        return [f"<details><summary>{summary}</summary>", "", *block, "", "</details>", ""]
    return [f"{summary}:", "", *block, ""]
