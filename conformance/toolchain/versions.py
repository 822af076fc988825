"""The versions of everything whose change changes what a run produces.

One list for the reports (summary.json's `toolchain`) and for the compile
cache's keys, so a tool that moves both shows in the report and invalidates
what was compiled with the old one.
"""

from __future__ import annotations

import functools
import os
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
    versions.update(pretended_versions())
    return versions


PRETEND = "CONFORMANCE_PRETEND_VERSIONS"


def pretended_versions() -> dict[str, str]:
    """Versions $CONFORMANCE_PRETEND_VERSIONS claims instead of the installed ones ("torch-mlir=next,iree-base-compiler=3.99").

    A seam for the benchmark and the tests only: it shows what a new release
    of one tool costs the next night (which caches it invalidates) without
    installing another release. The tools that run are the installed ones,
    so the pretended night produces what tonight did; the reports record the
    pretended versions, saying which night it pretends to be.
    """
    text = os.environ.get(PRETEND, "").strip()
    pretended = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, equals, version = item.partition("=")
        if not equals or not name.strip() or not version.strip():
            raise ValueError(f"${PRETEND}: {item!r} is not NAME=VERSION (e.g. torch-mlir=next)")
        pretended[name.strip()] = version.strip()
    return pretended


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
