"""The compile cache on disk: compiled artifacts, keyed by what produced them.

How a run uses it (which stages a hit skips, what is stored when) is
compile_cache_use.py; this module is the store and its keys.

Six stores under one directory:

    blobs/ab/<sha256>          compiled artifacts (a .vmfb, a .tosa), lowered IR and exported programs, named by their content
    ir/ab/<key>.json           IR key -> blob + metadata (e.g. which function of the module)
    cases/ab/<key>.json        case key -> IR key, or a deterministic failure before compile
    lowered/ab/<key>.json      lowered key -> the IR handed to the compiler (a blob), or a failure before it
    exported/ab/<key>.json     exported key -> what the backend's export_stage made (a blob), or its failure;
                               kept key -> a value made from it with torch alone (CaseRun.kept: a blob)
    refused/ab/<key>.json      refused key -> the compiler's refusal of a case's IR

Each key names what its stage depends on, and nothing more, so a new
release of one tool re-does only the stages that tool takes part in:

    exported key what the case is + the export stage's shared key (the backends
                 that share it share the entry) + every version but those of the
                 translation after it (torch-mlir), the compiler and the runtime:
                 torch.export alone
    lowered key  what the case is (case_fingerprint) + the backend and its flags
                 + every version but the compiler's and the runtime's (torch,
                 torch-mlir, ..., and conformance's own code, which drives
                 them and classifies their failures): export, import and lowering
    IR key       the exact IR bytes handed to the compiler + the flags + the
                 compiler's version (and the host CPU's model, only for an
                 artifact compiled for `host`): the compile
    kept key     the exported key + the value's name + what else it depends on
                 (the decomposition table, not torch-mlir's version): torch's decomposition
    refused key  the IR key + what the case is (a refusal's diagnostics quote the
                 case: only the same case replays it): the compile that failed
    case key     the lowered key's inputs + every version: the whole walk up
                 to `run`, which is always run

What the case is: its program (the torch calls its module makes, with
their arguments, weights and constants: call_trace.py), the bytes of its
inputs and of its stored reference outputs, if it has them, and its
declaration. A run of unchanged cases finds its IR key without exporting or
lowering anything, then its artifact without compiling; a night with a new
IREE finds each case's lowered IR (exports nothing) and compiles it; a night
with a new torch-mlir loads the decomposed program (or what torch.export made,
when its table changed), imports and lowers it again, compiles only IR that
changed, and refuses again without compiling what the compiler refused before. A constant read from a data file, or inputs from a changed `gen=`
or loader, change every key.

Safe under parallel workers: every file is written to a temporary name and
renamed into place. A blob whose content does not match its name (a torn
write, a bad disk) is deleted and rebuilt. The blob store is bounded: past
`limit_bytes`, the least recently used blobs go first.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

from conformance.digests import code_digest, digest, tree_digest, values_digest

# 2: case records carry extras["mutations"]; 3: lowering failures name the torch ops left unconverted;
# 4: case keys hash the module's torch calls and the input and reference bytes, not source files;
# 5: keys per stage (lowered, IR, case), each naming only the versions its stage depends on;
# 6: conformance's own code among them (how it exports, lowers and classifies), not in the IR key
# (the exported store came later: a store of its own, no key above changed)
FORMAT = 6
DEFAULT_LIMIT_BYTES = 4 * 2**30


HOST_CPU = "cpu"  # toolchain()'s entry for the host CPU's model: only an artifact compiled for `host` depends on it


@functools.cache
def toolchain() -> dict[str, str | None]:
    """Every version a stage may depend on, the machine's architecture, and the host CPU's model."""
    import platform

    from conformance.toolchain.versions import toolchain_versions

    versions: dict[str, str | None] = {"format": str(FORMAT), **toolchain_versions(), "conformance": code_digest()}
    versions["machine"] = platform.machine()
    try:
        versions[HOST_CPU] = next(
            (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), None
        )
    except OSError:
        versions[HOST_CPU] = None
    return versions


def compiler_versions(backend) -> dict[str, str | None]:
    """What the backend's cache stage (its compiler) depends on besides the IR and flags: the IR key's versions."""
    versions = toolchain()
    # A backend that names no compiler shares no artifact with another: its name stands in for the compiler.
    named = {t: versions.get(t) for t in backend.compiler_tools} or {"backend": backend.name}
    return {"format": versions["format"], "machine": versions["machine"], **named}


def frontend_versions(backend) -> dict[str, str | None]:
    """Every version but the compiler's, the runtime's and the host CPU: the lowered key's."""
    later = {*backend.compiler_tools, *backend.runtime_tools, HOST_CPU}
    return {k: v for k, v in toolchain().items() if k not in later}


def export_versions(backend) -> dict[str, str | None]:
    """The lowered key's versions but those of the translation after the export stage: the exported key's."""
    return {k: v for k, v in frontend_versions(backend).items() if k not in backend.translation_tools}


def all_versions(backend) -> dict[str, str | None]:
    """Every version, and the host CPU's model only when the backend's compiler depends on it: the case key's."""
    return {k: v for k, v in toolchain().items() if k != HOST_CPU or HOST_CPU in backend.compiler_tools}


def case_fingerprint(case_run, values: str, program: str | None, options: dict) -> str:
    """What a case is, for its case key: `program` (the digest of its module's torch calls),
    `values` (its inputs' and stored reference's bytes), its declaration and the run's backend options.

    A module eager cannot run (a suite's stored reference stands for it) has no calls to show:
    the case's source files and what the module holds stand in for them.
    """
    case = case_run.case
    declared = (case.id, case.kind, [(spec.describe(), [d.sizes for d in spec.dynamic_dims.values()]) for spec in case.inputs],
                case.exact is not None and case.exact.dynamic_dims(), case.nondeterministic, case_run.export_mode)
    if program is None:
        source = tree_digest(case.origin) if case.origin else case.defined_at
        program = digest(source, _content_digest(case_run.module))
    return digest(declared, values, program, options)


def _content_digest(module) -> str:
    """What a module no trace can see holds: an nn.Module's weights, an ONNX model's bytes (the model is the program)."""
    serialize = getattr(module, "SerializeToString", None)  # a protobuf message: onnx's ModelProto
    if serialize is not None:
        return digest(serialize(deterministic=True))
    return values_digest(dict(module.state_dict()))


def write_atomically(path: Path, data: bytes) -> None:
    """`data` at `path`, whole: a reader (another worker) sees the old file or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path) -> dict | None:
    """A stored record, or None when there is none; a corrupt one is forgotten (it will be rebuilt)."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        path.unlink(missing_ok=True)
        return None


class CompileCache:
    def __init__(self, root: str | Path, limit_bytes: int = DEFAULT_LIMIT_BYTES):
        self.root = Path(root)
        self.limit_bytes = limit_bytes

    # -- low level ------------------------------------------------------------

    def _path(self, store: str, key: str, suffix: str = "") -> Path:
        return self.root / store / key[:2] / f"{key}{suffix}"

    def _write(self, path: Path, data: bytes) -> None:
        write_atomically(path, data)

    def _read_json(self, store: str, key: str) -> dict | None:
        return read_json(self._path(store, key, ".json"))

    # -- blobs ----------------------------------------------------------------

    def put_blob(self, source: Path) -> str:
        data = source.read_bytes()
        key = hashlib.sha256(data).hexdigest()
        path = self._path("blobs", key)
        if not path.exists():
            self._write(path, data)
        return key

    def blob(self, key: str, verify: bool = True) -> Path | None:
        path = self._path("blobs", key)
        if not path.exists():
            return None
        if verify and hashlib.sha256(path.read_bytes()).hexdigest() != key:
            path.unlink(missing_ok=True)
            return None
        os.utime(path)  # recently used: evicted last
        return path

    # -- indexes --------------------------------------------------------------

    def put_ir(self, ir_key: str, blob: str, meta: dict) -> None:
        self._write(self._path("ir", ir_key, ".json"), json.dumps({"blob": blob, "meta": meta}).encode())

    def ir(self, ir_key: str) -> tuple[Path, dict] | None:
        record = self._read_json("ir", ir_key)
        if record is None:
            return None
        path = self.blob(record["blob"])
        return (path, record["meta"]) if path else None

    def put_lowered(self, lowered_key: str, record: dict) -> None:
        self._write(self._path("lowered", lowered_key, ".json"), json.dumps(record).encode())

    def lowered(self, lowered_key: str) -> dict | None:
        return self._read_json("lowered", lowered_key)

    def put_exported(self, exported_key: str, record: dict) -> None:
        self._write(self._path("exported", exported_key, ".json"), json.dumps(record).encode())

    def exported(self, exported_key: str) -> dict | None:
        return self._read_json("exported", exported_key)

    def put_refused(self, refused_key: str, record: dict) -> None:
        self._write(self._path("refused", refused_key, ".json"), json.dumps(record).encode())

    def refused(self, refused_key: str) -> dict | None:
        return self._read_json("refused", refused_key)

    def put_case(self, case_key: str, record: dict) -> None:
        self._write(self._path("cases", case_key, ".json"), json.dumps(record).encode())

    def case(self, case_key: str) -> dict | None:
        return self._read_json("cases", case_key)

    # -- size bound -----------------------------------------------------------

    def evict(self) -> int:
        """Delete least recently used blobs until the store is under 90% of its limit."""
        blobs = []
        for path in (self.root / "blobs").glob("*/*"):
            try:
                st = path.stat()
            except FileNotFoundError:
                continue  # another worker evicted it
            blobs.append((st.st_mtime, st.st_size, path))
        total = sum(size for _, size, _ in blobs)
        removed = 0
        for _, size, path in sorted(blobs):
            if total <= self.limit_bytes * 0.9:
                break
            path.unlink(missing_ok=True)
            total -= size
            removed += 1
        return removed
