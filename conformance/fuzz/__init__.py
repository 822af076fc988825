"""`conformance fuzz`: valid multi-op programs generated from a typed op table, run against eager.

    ops.py         the op table: operands (dtype kinds, ranks, domains, exactness), attributes, source
    strategies.py  the Hypothesis strategy: programs built op by op on actual values
    search.py      Hypothesis generating (seeded) and shrinking (by replaying the seed)
    known.py       is a failure news? the (code, op) pairs of the shipped xfail sets
    campaign.py    a run: budget, batches through the engine, root-cause groups, shrinking, case files
    upstream.py    groups that are one bug seen at different later ops, merged under where it first goes wrong

The programs themselves, their case files and how they reach the engine
are conformance/programs/; the reduction loop that finishes a shrink is
conformance/reduce/.
"""
