"""A run, as both front ends make one: `pytest --backend=...` (pytest_plugin/) and `conformance nightly` (cli/).

  session.py  Run: the backends resolved, the xfail sets it judges by, --localize after a
              pair fails, how to rerun a pair
  record.py   what run.json and cases.json say: how the run was made, what it covered
              (a case as JSON, the one way)
  writer.py   the report directory as a run writes it: run.json and cases.json first, each
              Result as it comes, the reports last

Where the pairs run is each front end's own (pytest items and xdist; the
nightly's executors); the file names are report_dir.py's, the reports report/'s.
"""


class RunError(Exception):
    """The run cannot start as asked; the message names the problem (each front end shows it as its usage error)."""
