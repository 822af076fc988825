"""Reduction: a failing case made as small as it goes while it fails the same way.

    graph.py     any case as a program: its exported graph's ATen calls, its inputs exact
    edit.py      program surgery: values of every call, pruning, cutting a call into an input
    steps.py     the one-step reductions of a program (fewer ops, smaller dims, narrower dtypes, plainer values)
    loop.py      the greedy loop: every step of a round run in one batch, the smallest that still fails kept
    reducer.py   `conformance reduce CASE --backend B`: from a case id to its smallest case file and bundle

`conformance fuzz` ends its groups' shrinking with loop.py too.
"""
