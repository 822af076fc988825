"""What is faked so a torch-mlir checkout's e2e registry imports beside the installed wheel.

Loading the checkout takes three stand-ins, none of which touches the
checkout: its python tree goes first on sys.path (the wheel's and the
checkout's `torch_mlir` are both namespace packages, so they merge:
loading.py); `multiprocess`, which framework.py imports for a pool this
never uses, is a module of its own when it is not installed (aliasing the
standard library's would let framework.py switch the whole process's start
method); and while the test modules are imported, an optional package that
is missing (torchvision) is a placeholder, so a module importing it at the
top still registers its other tests.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import multiprocessing
import sys
import types

OPTIONAL_PACKAGES = ("torchvision",)


class MissingPackage(ImportError):
    """A test uses an optional package that is not installed."""

    def __init__(self, package: str):
        super().__init__(f"needs {package}, which is not installed")
        self.package = package


class _Placeholder:
    """Anything of a missing package a test module names at import; using it raises MissingPackage."""

    def __init__(self, path: str):
        self._path = path

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(f"{self._path}.{name}")

    def __call__(self, *args, **kwargs):
        raise MissingPackage(self._path.split(".")[0])

    def __mro_entries__(self, bases):  # `class M(torchvision.SomeModule)` at import time
        raise MissingPackage(self._path.split(".")[0])


class _PlaceholderModule(types.ModuleType):
    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(f"{self.__name__}.{name}")


class _MissingPackages(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports placeholders for the packages named (and their submodules)."""

    def __init__(self, packages: list[str]):
        self.packages = set(packages)

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] not in self.packages:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = _PlaceholderModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def installed(name: str) -> bool:
    try:
        importlib.import_module(name)
        return True
    except Exception:  # a broken install (a CUDA build of torchvision beside a CPU torch) is as good as missing
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]
        return False


@contextlib.contextmanager
def placeholders_for_missing_packages():
    """Missing optional packages import as placeholders here, and only here.

    Afterwards they are gone from sys.modules again: other code asking whether
    torchvision is installed (transformers does) must still hear no.
    """
    finder = _MissingPackages([name for name in OPTIONAL_PACKAGES if not installed(name)])
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for key in [k for k in sys.modules if k.split(".")[0] in finder.packages]:
            del sys.modules[key]


def multiprocess_stand_in() -> types.ModuleType:
    module = types.ModuleType("multiprocess")
    context = multiprocessing.get_context("spawn")
    module.Pool, module.cpu_count = context.Pool, context.cpu_count
    module.set_start_method = lambda method, force=False: None  # the process's start method is not the suite's to set
    return module
