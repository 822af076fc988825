"""`eager`: PyTorch itself, the golden reference run through the whole harness.

It must pass every case: a failure here is a bug in the case or the harness.
"""

import torch

from conformance.backends.protocol import Backend


class Eager(Backend):
    name = "eager"
    description = "PyTorch eager on CPU (the reference; must pass everything)"
    stages = ("run",)

    def run(self, _, inputs, case_run):
        with torch.no_grad(), case_run.case.eager():  # the context the case's reference ran in
            return case_run.module(*inputs)


BACKEND = Eager()
