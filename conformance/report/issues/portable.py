"""Text with nothing of this machine in it: an issue file is read on other machines, by other people.

classify.text.stable already makes this checkout's, the virtualenv's and the
temp dir's paths portable (the explanations pinned in xfail sets need that);
an issue file also quotes whole tool outputs and commands, so here the
folders it was read from (a bundle, the results directory), the home folder,
the host and the user name go too.
"""

from __future__ import annotations

import getpass
import os
import re
import socket
from pathlib import Path

from conformance.classify.text import stable


def machine_words() -> dict[str, str]:
    """This machine's names an issue must not show, each with what replaces it."""
    words = {}
    for name, replacement in ((_hostname(), "<host>"), (_user(), "<user>")):
        if len(name or "") > 1:  # a one-letter name would be every such letter standing alone
            words[name] = replacement
    return words


def portable(text: str, folders: dict[str | Path, str] | None = None) -> str:
    """`text` with `folders` (a path -> what to write instead, e.g. the bundle -> "."), the home
    folder, this checkout's and the temp dir's paths, the host and the user name replaced."""
    for folder, replacement in sorted((folders or {}).items(), key=lambda item: -len(str(item[0]))):
        text = _replace_folder(text, str(folder), replacement)
    text = stable(text)
    home = os.path.expanduser("~")
    if home not in ("", "/"):
        text = _replace_folder(text, home, "~")
    for word, replacement in machine_words().items():
        # As a word of its own: a host named `vm` is not IREE's `--iree-vm-...`, `module.vmfb` or `vm.func`.
        text = re.sub(rf"(?<![\w.-]){re.escape(word)}(?![\w.-])", replacement, text)
    return text


def _replace_folder(text: str, folder: str, replacement: str) -> str:
    folder = folder.rstrip("/")
    if not folder:
        return text
    text = text.replace(folder + "/", replacement.rstrip("/") + "/" if replacement else "")
    return re.sub(rf"{re.escape(folder)}(?![\w.-])", replacement or ".", text)


def _hostname() -> str:
    return socket.gethostname().split(".")[0]


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name known (a container without one in /etc/passwd)
        return ""
