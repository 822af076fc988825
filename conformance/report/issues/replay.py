"""Running an issue's commands now, as its reader would: in an empty folder holding only the files the
issue gives (the IR it quotes, its attachments), in a fresh environment whose PATH has the public tools
and the system's own, nothing else. What they print is what the issue quotes; whether one fails is
whether the failure reproduces outside this framework.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from conformance.report.issues.commands import Commands
from conformance.toolchain.tools import public_tool_path

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass
class Replayed:
    command: list[str]
    status: int  # its exit status (124: stopped after the timeout)
    output: str  # stdout and stderr, as the tool interleaved them


def replay(commands: Commands, bundle: Path, text_files: list[str], timeout: float = 300.0) -> list[Replayed]:
    """Run the commands in order, until the first that fails; each with its status and output."""
    done = []
    with tempfile.TemporaryDirectory(prefix="conformance-issue-") as folder:
        work = Path(folder)
        for name in [*text_files, *commands.attachments]:
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(bundle / name, work / name)
        env = {"PATH": f"{public_tool_path()}:{SYSTEM_PATH}", "HOME": folder, "LANG": "C.UTF-8", **commands.environment}
        for command in commands.lines:
            try:
                proc = subprocess.run(command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True, errors="replace", timeout=timeout)
                status, output = proc.returncode, proc.stdout
            except subprocess.TimeoutExpired as e:
                status, output = 124, (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
                output += f"\n(still running after {timeout:g} s: stopped)"
            except FileNotFoundError:
                status, output = 127, f"{command[0]}: command not found (PATH={os.pathsep.join(env['PATH'].split(os.pathsep))})"
            done.append(Replayed(command, status, output))
            if status != 0:
                break
    return done
