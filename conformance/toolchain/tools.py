"""Running an external tool (iree-compile, tosa-opt, tosa_reference_model) as a stage step."""

from __future__ import annotations

import signal
import subprocess


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
