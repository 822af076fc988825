"""The versions of everything whose change changes what a run produces.

One list for the reports (summary.json's `toolchain`) and for the compile
cache's keys, so a tool that moves both shows in the report and invalidates
what was compiled with the old one.
"""

from __future__ import annotations

import functools
import platform
from importlib import metadata

from conformance.toolchain.iree_targets import DEFAULT
from conformance.toolchain.tools import tosa_tools_prefixes, tosa_tools_site

PACKAGES = ["torch", "torch-mlir", "iree-base-compiler", "iree-base-runtime", "transformers", "numpy", "onnx", "onnxscript", "onnx-ir"]


@functools.cache
def toolchain_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    versions["tosa-tools"] = tosa_tools_version()
    versions["python"] = platform.python_version()
    # What the IREE CPU backends compile for unless told otherwise: it decides some verdicts.
    versions["llvm-cpu target cpu"] = DEFAULT.flags_chip()
    return versions


def tosa_tools_version() -> str | None:
    """tosa-tools lives in a virtualenv of its own: read its metadata there."""
    for prefix in tosa_tools_prefixes():
        site = tosa_tools_site(prefix)
        if site is None:
            continue
        for dist in metadata.distributions(path=[str(site)]):
            if dist.metadata["Name"] == "tosa-tools":
                return dist.version
    return None
