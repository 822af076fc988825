"""Capture real failures as corpus fixtures: the exact text the classifier reads.

    .venv/bin/python tests/corpus/capture.py REPORT_DIR CASE BACKEND [CASE BACKEND ...]

Writes tests/corpus/<backend>--<case>.txt. The expected stage, code and op
go into labels.toml by hand, after reading the text: the label is a human's
judgement of the failure, never the classifier's output copied back.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conformance.classify import parser_text  # noqa: E402
from conformance.report_dir import read_results  # noqa: E402
from conformance.paths import safe_name  # noqa: E402

HERE = Path(__file__).parent


def main(argv: list[str]) -> int:
    report, pairs = Path(argv[0]), list(zip(argv[1::2], argv[2::2]))
    wanted = set(pairs)
    for r in read_results(report):
        if (r.case, r.backend) in wanted:
            path = HERE / f"{safe_name(r.backend)}--{safe_name(r.case)}.txt"
            path.write_text(parser_text(r.details))
            print(f"{path.name}: stage {r.stage}")
            wanted.discard((r.case, r.backend))
    for case, backend in wanted:
        print(f"not found: {case}[{backend}]", file=sys.stderr)
    return 1 if wanted else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
