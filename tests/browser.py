"""Headless Chromium driven over the DevTools protocol, on a pipe: a page's script runs, a test asks its DOM.

`chromium --remote-debugging-pipe` reads protocol commands on file
descriptor 3 and writes answers and events on 4, each a JSON message ended
by a NUL byte; no WebSocket client or driver package is needed. A test opens
a page at a viewport size, evaluates JavaScript in it (getting plain values
back), clicks, and takes screenshots; script errors in the page are kept in
`Page.errors`.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

TIMEOUT = 60.0


def chromium() -> str | None:
    for name in filter(None, [os.environ.get("CONFORMANCE_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"]):
        path = shutil.which(name)
        if path:
            return path
    return None


def browser_command(binary: str, profile: str, *args: str) -> list[str]:
    return [
        binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
        f"--user-data-dir={profile}", *args,
    ]


def _high(fd: int) -> int:
    """The same pipe end on a descriptor above 9, clear of the 3 and 4 the browser gets."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, binary: str, workdir: Path):
        commands_in, self._commands = os.pipe()
        self._answers, answers_out = os.pipe()
        commands_in, answers_out = _high(commands_in), _high(answers_out)
        profile = tempfile.mkdtemp(dir=workdir)
        # bash: dash's redirections take one-digit descriptors only.
        line = f'exec "$@" 3<&{commands_in} 4>&{answers_out} {commands_in}<&- {answers_out}>&-'
        self.log = open(Path(workdir) / "chromium.log", "w")
        self.process = subprocess.Popen(
            ["bash", "-c", line, "bash", *browser_command(binary, profile, "--remote-debugging-pipe", "about:blank")],
            pass_fds=(commands_in, answers_out), stdout=self.log, stderr=subprocess.STDOUT,
        )
        os.close(commands_in)
        os.close(answers_out)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            answer = self._read(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._answers], [], [], left)[0]:
                raise BrowserError(f"chromium did not answer within {TIMEOUT:g} s")
            chunk = os.read(self._answers, 1 << 16)
            if not chunk:
                raise BrowserError(f"chromium exited (status {self.process.poll()}); see {self.log.name}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def open(self, url: str, width: int, height: int = 900, mobile: bool = False, before: str | None = None) -> Page:
        """A new tab at `url`, once the page's script said it is ready; `before`: JavaScript run ahead of the page's own."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        page.call("Runtime.enable")
        if before:
            page.call("Page.enable")
            page.call("Page.addScriptToEvaluateOnNewDocument", {"source": before})
        page.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
        page.call("Page.navigate", {"url": url})
        page.wait_for("document.documentElement && document.documentElement.dataset.ready === '1'")
        return page

    def close(self) -> None:
        try:
            self.call("Browser.close")
            self.process.wait(timeout=20)
        except (BrowserError, OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        finally:
            os.close(self._commands)
            os.close(self._answers)
            self.log.close()


class Page:
    def __init__(self, browser: Browser, session: str):
        self.browser = browser
        self.session = session

    def call(self, method: str, params: dict | None = None) -> dict:
        return self.browser.call(method, params, self.session)

    @property
    def errors(self) -> list[str]:
        """Uncaught script errors in this page so far."""
        return [
            e["params"]["exceptionDetails"].get("exception", {}).get("description") or e["params"]["exceptionDetails"].get("text")
            for e in self.browser.events
            if e.get("sessionId") == self.session and e.get("method") == "Runtime.exceptionThrown"
        ]

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (JSON-able values only)."""
        answer = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            raise BrowserError(details.get("exception", {}).get("description") or details.get("text"))
        return answer["result"].get("value")

    def wait_for(self, condition: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.evaluate(f"!!({condition})"):
            if time.monotonic() > deadline:
                raise BrowserError(f"still not true after {timeout:g} s: {condition}; page errors: {self.errors}")
            time.sleep(0.05)

    def click(self, selector: str) -> None:
        """A real mouse click in the middle of the element (scrolled into view first)."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView({{block: 'center'}});"
            " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1})

    def sideways_overflow(self, grids: tuple[str, ...] = ()) -> list[str]:
        """What sticks out sideways: elements reaching past the viewport, and boxes that scroll or clip sideways.

        A box that scrolls or clips (overflow-x other than visible) is the
        boundary of its content: its own rectangle must be in the viewport
        and its content must fit it, unless it holds one of `grids` (CSS
        selectors of tables meant to scroll sideways in their box) or it
        clips text with an ellipsis on purpose. Each finding is a line
        naming the element (tag#id.class) and by how many pixels.
        """
        return self.evaluate(
            "((grids) => { const W = document.documentElement.clientWidth, found = [];"
            " const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && e.className.baseVal === undefined"
            "   && e.className ? '.' + e.className.trim().split(/\\s+/).join('.') : '');"
            " const walk = e => { const st = getComputedStyle(e); if (st.display === 'none') return;"
            "   const r = e.getBoundingClientRect();"
            "   if (r.width && (r.right > W + 0.5 || r.left < -0.5)) found.push(name(e) + ' reaches ' + Math.round(r.left) + '..' + Math.round(r.right) + ' of ' + W);"
            "   if (st.overflowX !== 'visible' && e !== document.body && e !== document.documentElement) {"
            "     const over = e.scrollWidth - e.clientWidth;"
            "     if (over > 1 && st.textOverflow !== 'ellipsis' && !grids.some(g => e.querySelector(g)))"
            "       found.push(name(e) + ' scrolls sideways by ' + over + ' px: ' + [...e.children].map(name).join(' '));"
            "     return; }"
            "   for (const c of e.children) walk(c); };"
            " walk(document.body); return found; })(" + json.dumps(list(grids)) + ")"
        )

    def screenshot(self, path: Path, selector: str | None = None) -> Path:
        """A PNG of the viewport, or of one element's box (the page scrolled to the top, so a sticky bar covers nothing)."""
        params: dict = {"format": "png"}
        if selector:
            box = self.evaluate(
                f"(() => {{ window.scrollTo(0, 0); const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                " return [r.x, r.y, r.width, r.height]; })()"
            )
            params["clip"] = {"x": box[0], "y": box[1], "width": box[2], "height": box[3], "scale": 1}
            params["captureBeyondViewport"] = True
        Path(path).write_bytes(base64.b64decode(self.call("Page.captureScreenshot", params)["data"]))
        return Path(path)
