"""Localization: the op that breaks a case (a model, an op case of several ops) on a backend, found by cutting its exported graph.

    graph.py      the exported program: its ops, a prefix cut at an op, eager's activations
    inline.py     higher-order ops (no_grad, autocast, cond, while_loop ...) opened: their bodies' ops are the graph's
    cuts.py       the prefixes as cases the supervised child runs like any other
    named.py      the op a failure names by its node (the importer's), confirmed without a search
    search.py     the binary search for the first cut that fails as the model does
    oracle.py     an op's own error against fp64, beside eager's (the noise floor)
    emit.py       one op (or the op after the op before it) as a case file of its own, its activations as exact inputs
    context.py    an op that passes alone: the contexts to try it in (its constants frozen, the op before it)
    blame.py      past the first failing cut: the suspects, the op blamed, the verdict
    localizer.py  the whole, step by step: from a failing Result to the record a report shows
    record.py     that record: its fields, as Results carry it and reports show it (no torch: reports import it)

`conformance localize CASE --backend X`, or `--localize` on nightly and pytest.
"""
