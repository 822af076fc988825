"""A process of ours exits with its heap frozen (process_exit.py), so Python's exit does not collect it again."""

import subprocess
import sys

PROGRAM = """
import atexit, gc
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0, flush=True))  # runs after later ones
from conformance.process_exit import skip_last_collection
skip_last_collection()
skip_last_collection()
print("frozen before exit:", gc.get_freeze_count() > 0, flush=True)
"""


def test_the_heap_is_frozen_as_the_process_exits_and_not_before():
    proc = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["frozen before exit: False", "frozen at exit: True"]
