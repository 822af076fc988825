"""Localization: the op that breaks a model on a backend, found by cutting its exported graph.

    graph.py      the exported program: its ops, a prefix cut at an op, eager's activations
    cuts.py       the prefixes as cases the supervised child runs like any other
    search.py     the binary search for the first cut that fails as the model does
    oracle.py     an op's own error against fp64, beside eager's (the noise floor)
    emit.py       one op as a case file of its own, its activations as exact inputs
    blame.py      past the first failing cut: the suspects, the op blamed, the verdict
    localizer.py  the whole, step by step: from a failing Result to the record a report shows
    record.py     that record: its fields, as Results carry it and reports show it (no torch: reports import it)

`conformance localize CASE --backend X`, or `--localize` on nightly and pytest.
"""
