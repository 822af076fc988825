"""External tools (iree-compile, tosa-opt, tosa_reference_model): where they live, and running one as a stage step.

tosa-tools installs top-level Python packages (`conformance`, `checker`,
...) that would shadow ours and pins its own numpy, so the project installs it
into a virtualenv of its own (.venv/tosa-tools, see the Makefile) and only
calls its binaries. Its location is looked up here, for the backend that runs
it, for the versions recorded with every report, and for the PATH a
reproducer bundle's script sets.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from conformance import content


class ToolError(Exception):
    """A tool failed; the message starts with its name (parsers key on it), then all it printed."""

    def __init__(self, tool: str, returncode: int, output: str):
        how = f"killed by signal {signal_name(-returncode)}" if returncode < 0 else f"exited with status {returncode}"
        super().__init__(f"{tool} {how}:\n{output.strip()}")
        self.tool = tool
        self.returncode = returncode
        self.output = output


def signal_name(number: int) -> str:
    """`SIGSEGV (11)`; the bare number for a signal Python has no name for."""
    try:
        return f"{signal.Signals(number).name} ({number})"
    except ValueError:
        return str(number)


def run_tool(tool: str, command: list[str], **kwargs) -> subprocess.CompletedProcess:
    """Run `command`; raise ToolError with everything it printed when it fails."""
    proc = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        raise ToolError(tool, proc.returncode, "\n".join(p for p in (proc.stdout, proc.stderr) if p))
    return proc


def tosa_tools_prefixes() -> list[Path]:
    """Where tosa-tools may be installed: $CONFORMANCE_TOSA_TOOLS if set (and only
    there), else the project's .venv or the running venv."""
    chosen = os.environ.get("CONFORMANCE_TOSA_TOOLS")
    if chosen:
        return [Path(chosen)]
    return [content.PROJECT_ROOT / ".venv" / "tosa-tools", Path(sys.prefix) / "tosa-tools"]


def tosa_tools_site(prefix: Path) -> Path | None:
    """The folder holding the tosa-tools distribution in a prefix (a venv's site-packages)."""
    for site in sorted(prefix.glob("lib/python3*/site-packages")):
        if (site / "bin").is_dir():
            return site
    return None


def public_tool_path() -> str:
    """Where this machine's public tools live, as a PATH: the venv's bin and the tosa-tools prefix's."""
    bins = [Path(sys.executable).parent, *(prefix / "bin" for prefix in tosa_tools_prefixes())]
    return ":".join(str(b) for b in bins)
