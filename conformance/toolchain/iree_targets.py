"""IREE's compilation targets: what `tosa@cuda`, `linalg@rocm:gfx942` or `tosa@llvm-cpu:O0` compile for.

An IREE backend compiles for one target, chosen after `@` in its name:

    <backend>@<target>[:<chip>][:<level>]     tosa@cuda, tosa@cuda:sm_80, linalg@rocm:gfx942,
                                              stablehlo@vulkan-spirv, tosa@llvm-cpu:O0

`target` is one of IREE's target backends (`iree-compile
--iree-hal-list-target-backends`), `chip` the GPU it compiles for (its
`--iree-<target>-target`) or, for llvm-cpu, the CPU
(`--iree-llvmcpu-target-cpu`), `level` IREE's global optimization level
(`--iree-opt-level`). Without `@`, a backend compiles for llvm-cpu at
IREE's default level, and `tosa@llvm-cpu` is `tosa` itself.

The CPU is a fixed, named one by default (x86-64-v3 on x86-64 hosts: AVX2,
which every x86 server of the last ten years runs), never `host`: code
generated for the host differs between CPU models, and with it some
verdicts (f32 -> u8 casts give 253 on an AVX-512 machine and 127 on an
AVX2 one), so a verdict would depend on the machine that ran it. Every
chip is passed explicitly, defaults included, so a reproducer's flags say
what was compiled for. `tosa@llvm-cpu:host` compiles for the machine at
hand, and is a backend name (and xfail set) of its own.

Compiling needs no device; running does. IREE's runtime is asked (once per
process) whether a device of the target's driver is present: when none is,
the run stage ends the pair as COMPILED, not PASS (backends.protocol.NotRun).
"""

from __future__ import annotations

import functools
import platform
import re
from dataclasses import dataclass

# The chips each target takes, as IREE 3.13 knows them: every name here was
# compiled for by iree-compile 3.13.0 (a name IREE does not know fails with
# "Unknown ROCM target", "missing GPU target", or, for vulkan, a crash).
CUDA_CHIPS = ("sm_60", "sm_61", "sm_62", "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_120", "sm_121")
ROCM_CHIPS = ("gfx908", "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1103", "gfx1150", "gfx1151", "gfx1200", "gfx1201", "gfx1250")
# Vulkan also takes gfx*/sm_* chips and product names (rx7900xtx, a100); the architectures name the families.
VULKAN_CHIPS = (
    "pascal", "volta", "turing", "ampere", "ada", "rdna1", "rdna2", "rdna3", "rdna4",
    "cdna1", "cdna2", "cdna3", "cdna4", "valhall1", "valhall2", "valhall3", "valhall4", "adreno",
)
# CPUs llvm-cpu compiles for here (LLVM's names; iree-compile lists them on a name it does not know),
# by host architecture: the first is the default. `host` is the machine at hand.
LLVM_CPUS = {
    "x86_64": ("x86-64-v3", "x86-64", "x86-64-v2", "x86-64-v4", "haswell", "skylake", "skylake-avx512", "icelake-server",
               "sapphirerapids", "znver2", "znver3", "znver4", "host"),
    "aarch64": ("generic", "neoverse-n1", "neoverse-v1", "neoverse-v2", "cortex-a76", "apple-m1", "host"),
}
CPU_CHIPS = LLVM_CPUS.get(platform.machine(), ("generic", "host"))
OPT_LEVELS = ("O0", "O1", "O2", "O3")
# PyTorch's f64 semantics are tested: IREE would otherwise demote f64 to f32. Input semantics, not a target's.
F64_FLAGS = ("--iree-input-demote-f64-to-f32=false", "--iree-vm-target-extension-f64")
# Constant subexpressions are computed when the module loads (by the kernels IREE compiles for the
# target, like every other op) rather than folded while compiling by a second, JIT-compiled copy
# of them for the host: the same program, the same ops compiled and run. The JIT was a third of
# iree-compile's CPU time on torch-mlir's e2e cases (benchmarks/peer.py, /work/coord/research/perf.md).
EVALUATION_FLAGS = ("--iree-opt-const-eval=false",)


@dataclass(frozen=True)
class Target:
    """One of IREE's target backends: the flags compiling for it, the runtime driver running its modules."""

    name: str  # as iree-compile --iree-hal-list-target-backends names it
    device_flags: tuple[str, ...]
    driver: str  # the IREE runtime driver (iree-run-module --device=)
    chip_flag: str | None = None  # the flag naming the chip; None: the target takes no chip
    chips: tuple[str, ...] = ()
    default_chip: str | None = None  # what IREE compiles for when no chip is named (None: a chip is required)


TARGETS = {
    t.name: t
    for t in (
        Target("llvm-cpu", ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu"), "local-task",
               "--iree-llvmcpu-target-cpu", CPU_CHIPS, default_chip=CPU_CHIPS[0]),
        Target("vmvx", ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=vmvx"), "local-task"),
        Target("cuda", ("--iree-hal-target-device=cuda",), "cuda", "--iree-cuda-target", CUDA_CHIPS, default_chip="sm_60"),
        Target("rocm", ("--iree-hal-target-device=hip",), "hip", "--iree-rocm-target", ROCM_CHIPS),
        Target("vulkan-spirv", ("--iree-hal-target-device=vulkan",), "vulkan", "--iree-vulkan-target", VULKAN_CHIPS,
               default_chip="vp_android_baseline_2022"),
        Target("metal-spirv", ("--iree-hal-target-device=metal",), "metal"),
    )
}
HOST_DRIVERS = {"local-task", "local-sync"}  # always have a device: the CPU this runs on


class TargetError(ValueError):
    """A target spelling IREE cannot compile for; the message names what it can."""


@dataclass(frozen=True)
class CompileTarget:
    """A target with its chip and optimization level: everything `@...` in a backend name chooses."""

    target: Target
    chip: str | None = None
    opt_level: str | None = None

    @property
    def label(self) -> str:
        """The canonical spelling after `@`: `cuda`, `rocm:gfx942`, `llvm-cpu:O0`."""
        return ":".join(p for p in (self.target.name, self.chip, self.opt_level) if p)

    @property
    def is_default(self) -> bool:
        return self == DEFAULT

    @property
    def driver(self) -> str:
        return self.target.driver

    def flags_chip(self) -> str | None:
        """The chip (or CPU) compiled for: the one named, else the target's default."""
        return self.chip or self.target.default_chip

    def flags(self) -> list[str]:
        """iree-compile's flags for this target (input type aside: that is the backend's own)."""
        named = self.flags_chip()
        chip = [f"{self.target.chip_flag}={named}"] if named else []
        level = [f"--iree-opt-level={self.opt_level}"] if self.opt_level else []
        return [*self.target.device_flags, *chip, *F64_FLAGS, *EVALUATION_FLAGS, *level]


DEFAULT = CompileTarget(TARGETS["llvm-cpu"])


def compile_target(name: str, options: list[str]) -> CompileTarget:
    """The CompileTarget of `name` (a target) and `options` (a chip, a level); TargetError names the valid ones."""
    target = TARGETS.get(name)
    if target is None:
        raise TargetError(f"unknown IREE target {name!r}; known: {', '.join(TARGETS)}")
    chip = level = None
    for option in options:
        if re.fullmatch(r"[oO]\d+", option):
            if option not in OPT_LEVELS:
                raise TargetError(f"unknown optimization level {option!r}; IREE's are {', '.join(OPT_LEVELS)}")
            if level:
                raise TargetError(f"two optimization levels ({level}, {option}); give one")
            level = option
            continue
        if target.chip_flag is None:
            raise TargetError(f"{name} takes no chip (got {option!r}), only an optimization level: {', '.join(OPT_LEVELS)}")
        if chip:
            raise TargetError(f"two {name} chips ({chip}, {option}); give one")
        if option not in target.chips:
            raise TargetError(f"unknown {name} chip {option!r}; known: {', '.join(target.chips)}")
        chip = None if option == target.default_chip else option  # the default has one name: `tosa`, not `tosa@llvm-cpu:x86-64-v3`
    if target.chip_flag and chip is None and target.default_chip is None:
        raise TargetError(f"{name} needs a chip (@{name}:CHIP); known: {', '.join(target.chips)}")
    return CompileTarget(target, chip, level)


@functools.cache
def missing_device(driver: str) -> str | None:
    """Why IREE's runtime has no `driver` device here (its own words), or None when it has one."""
    if driver in HOST_DRIVERS:
        return None
    import iree.runtime as rt

    if driver not in rt.query_available_drivers():
        return f"this IREE runtime has no {driver} driver"
    try:
        devices = rt.get_driver(driver).query_available_devices()
    except Exception as e:  # the driver's library is absent: libcuda.so, libamdhip64.so, libvulkan.so
        # "Error creating driver: <file>:<line>: UNAVAILABLE; CUDA driver library 'libcuda.so'... not available; please ..."
        parts = str(e).strip().splitlines()[0].split(";")
        return re.split(r"[:;] please|; ensure", parts[1] if len(parts) > 1 else parts[0])[0].strip()
    return None if devices else f"the {driver} driver finds no device"
