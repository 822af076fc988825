"""What a case may return: tensors, numbers and containers torch's pytree can open.

The comparison and torch.export both see a case's outputs through
torch.utils._pytree: a container it knows (tuples, lists, dicts, named
tuples, dataclasses and whatever a library registers, like transformers'
`ModelOutput`s) is opened, anything else is a leaf. A leaf that is neither a
tensor nor a plain value cannot be compared (two objects of a class without
`__eq__` never agree, which read as a nondeterministic reference) and stops
torch.export, so it is a CASE_ERROR naming where it sits and what to do.

One family of such objects is common enough to open ourselves: the key/value
caches of `transformers` (`DynamicCache` and its kin, returned by every
decoder unless `use_cache=False`). transformers ships the pytree
registration its own exporter uses; it is applied in the process that
builds a model once transformers is loaded, so eager's outputs and the
exported program's are flattened alike, into the cache's tensors.
"""

from __future__ import annotations

import sys
from typing import Any

import torch
from torch.utils._pytree import keystr, tree_flatten_with_path

from conformance.cases.spec import CaseError
from conformance.content import PACKAGE_ROOT as CONTENT_PACKAGE

PLAIN = (bool, int, float, complex, str, type(None))


def open_library_containers() -> None:
    """Make the containers of loaded libraries known to torch's pytree (today: transformers' caches)."""
    if "transformers.cache_utils" not in sys.modules:
        return  # no model of this process uses them: importing transformers would only cost time
    from transformers.cache_utils import Cache
    from transformers.exporters.exporter_dynamo import register_pytree_node

    pending = [Cache]
    while pending:
        cls = pending.pop()
        pending += cls.__subclasses__()
        if cls is not Cache:
            register_pytree_node(cls)  # transformers' own; a second registration is ignored


def check_outputs(case_id: str, outputs: Any, label: str = "output") -> None:
    """A CaseError for the first output leaf that is neither a tensor nor a plain value."""
    for path, leaf in tree_flatten_with_path(outputs)[0]:
        if isinstance(leaf, (torch.Tensor, *PLAIN)):
            continue
        where = f"{label}{keystr(path)}" if path else label
        raise CaseError(
            f"case {case_id!r}: {where} is an object of type {type_name(leaf)}: neither a tensor, a number "
            "nor a container torch.utils._pytree can open, so it can be neither exported nor compared; return tensors "
            "(for a transformers model e.g. use_cache=False, or pick the fields: outputs.logits), or register the type "
            "with torch.utils._pytree.register_pytree_node"
        )


def type_name(value: Any) -> str:
    """A library's class by its module path; a case file's by its own name (its module name holds a path digest)."""
    kind = type(value)
    if kind.__module__.startswith(CONTENT_PACKAGE):
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"
