"""Gates: golden compile figures and run times per backend, like the xfail sets pin failures.

  selection.py  which cases are gated (models and the ops tagged `gated`, or any case a file names)
  figures.py    the figures: how each is read from a Result, its default tolerance, how it is judged
  sets.py       the file format: one TOML file per backend (and target) in gate_sets/, read with tomllib
  judge.py      a Result against its golden figures: within, beyond (a regression of its own kind)
  update.py     rewriting a file from a run's results (what `conformance gates update` does)
  timing.py     the run stage timed again and again, the median kept (only when gates are asked for)

A gate is never a verdict: a pair beyond tolerance stays PASS; its outcome
is `extras["gates"]`, a section of the reports, and a failure of
`pytest --gates`.
"""
