"""A real headless Chromium driven by the tests over the DevTools protocol on a pipe (``--remote-debugging-pipe``):
no WebDriver, no websocket library, nothing but the browser the other browser tests find
(``test_report_browser.CHROMIUM``: Debian's ``chromium``, or ``TAPETRACE_CHROMIUM``).

The protocol's messages are JSON, each ended by a NUL byte; Chromium reads them on its fd 3 and writes on its fd 4.
:class:`Chromium` starts one browser; :meth:`Chromium.page` opens a tab (in a fresh profile context when asked:
no cookie of another tab) and returns a :class:`Page` that navigates, evaluates JavaScript, types, clicks, presses
keys as a user does (``Input.*``: trusted events, real navigations, real form submissions) and takes screenshots.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-extensions", "--hide-scrollbars",
         "--remote-debugging-pipe")
KEYS = {"j": ("KeyJ", 74, "j"), "k": ("KeyK", 75, "k"), "Enter": ("Enter", 13, "\r"),
        "ArrowRight": ("ArrowRight", 39, ""), "ArrowLeft": ("ArrowLeft", 37, "")}


class ProtocolError(RuntimeError):
    """The browser answered a command with an error."""


class Chromium:
    """One headless browser on a pipe; a context manager that stops it."""

    def __init__(self, binary: str, profile: Path, timeout: float = 30.0) -> None:
        self.timeout = timeout
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # bash (dash takes one-digit descriptors only) puts our pipe ends at the browser's fd 3 (its commands) and
        # fd 4 (its answers); they are moved to 10 and above first, so that neither is 3 or 4 already
        low = (to_browser_r, from_browser_w)
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in low]
        for fd in low:
            os.close(fd)
        cmd = ["bash", "-c", f'exec "$0" "$@" 3<&{ends[0]} 4>&{ends[1]}', binary, *FLAGS,
               f"--user-data-dir={profile}", "about:blank"]
        self.proc = subprocess.Popen(cmd, pass_fds=tuple(ends), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in ends:
            os.close(fd)
        self._next = 0
        self._answers: dict[int, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self._cond:
                    self._answers[-1] = {"closed": True}
                    self._cond.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                with self._cond:
                    if "id" in msg:
                        self._answers[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self._cond.notify_all()

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        """One command's result.

        Raises:
            ProtocolError: the browser answered with an error, or closed.
            TimeoutError: no answer in time.
        """
        with self._cond:
            self._next += 1
            n = self._next
        msg: dict[str, Any] = {"id": n, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        with self._cond:
            while n not in self._answers:
                if -1 in self._answers:
                    raise ProtocolError(f"the browser closed before answering {method}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no answer to {method}")
                self._cond.wait(left)
            answer = self._answers.pop(n)
        if "error" in answer:
            raise ProtocolError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def mark(self) -> int:
        """Where the event list ends now (wait for an event after it)."""
        with self._cond:
            return len(self.events)

    def wait_event(self, method: str, session: str | None, after: int, timeout: float | None = None) -> dict:
        """The first event ``method`` of ``session`` after ``after``.

        Raises:
            TimeoutError: none came in time.
        """
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._cond:
            while True:
                for ev in self.events[after:]:
                    if ev.get("method") == method and (session is None or ev.get("sessionId") == session):
                        return ev
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no {method} event")
                self._cond.wait(left)

    def page(self, fresh_context: bool = False) -> Page:
        """A new tab (``fresh_context``: in a context of its own, without the other tabs' cookies)."""
        params: dict[str, Any] = {"url": "about:blank"}
        if fresh_context:
            params["browserContextId"] = self.send("Target.createBrowserContext")["browserContextId"]
        target = self.send("Target.createTarget", params)["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page.enable", "Runtime.enable", "Network.enable"):
            self.send(domain, session=session)
        return Page(self, session)

    def close(self) -> None:
        """Stops the browser."""
        try:
            self.send("Browser.close")
        except (ProtocolError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class Page:
    """One tab: what a user does with it, as trusted input events."""

    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser = browser
        self.session = session

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A command to this tab."""
        return self.browser.send(method, params, self.session)

    def size(self, width: int, height: int) -> None:
        """The viewport, as a phone (``width`` < 600: a mobile viewport) or a laptop shows it."""
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": width < 600})

    def _loaded(self, action: Any) -> int:
        """Runs ``action`` and waits for the page it leads to; returns that page's HTTP status."""
        mark = self.browser.mark()
        action()
        self.browser.wait_event("Page.loadEventFired", self.session, mark)
        statuses = [ev["params"]["response"]["status"] for ev in self.browser.events[mark:]
                    if ev.get("method") == "Network.responseReceived" and ev.get("sessionId") == self.session
                    and ev["params"].get("type") == "Document"]
        return int(statuses[-1]) if statuses else 0

    def goto(self, url: str) -> int:
        """Navigates and waits for the load; the document's HTTP status."""
        return self._loaded(lambda: self.send("Page.navigate", {"url": url}))

    def eval(self, expression: str) -> Any:
        """A JavaScript expression's value (JSON-able)."""
        got = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in got:
            raise ProtocolError(f"{expression}: {got['exceptionDetails']}")
        return got["result"].get("value")

    def url(self) -> str:
        """The tab's address now."""
        return str(self.eval("location.href"))

    def _key_events(self, key: str) -> None:
        code, vk, text = KEYS[key]
        down = {"type": "keyDown", "key": key, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}
        if text:
            down["text"] = text
        self.send("Input.dispatchKeyEvent", down)
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk,
                                             "nativeVirtualKeyCode": vk})

    def press(self, key: str, navigates: bool = False) -> int:
        """Presses a key (:data:`KEYS`); with ``navigates``, waits for the page it opens (its status)."""
        if navigates:
            return self._loaded(lambda: self._key_events(key))
        self._key_events(key)
        return 0

    def type_into(self, selector: str, text: str) -> None:
        """Focuses the field and types ``text`` into it (as an input method inserts it)."""
        self.eval(f"(() => {{ const el = document.querySelector({json.dumps(selector)}); el.focus(); "
                  "if ('value' in el) el.value = ''; return true; })()")
        self.send("Input.insertText", {"text": text})

    def click(self, selector: str, navigates: bool = False) -> int:
        """Clicks the middle of the element with the mouse; with ``navigates``, waits for the page (its status)."""
        box = self.eval(f"(() => {{ const el = document.querySelector({json.dumps(selector)}); "
                        "el.scrollIntoView({block: 'center'}); const r = el.getBoundingClientRect(); "
                        "return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        x, y = box

        def press() -> None:
            for kind in ("mousePressed", "mouseReleased"):
                self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                       "clickCount": 1})

        if navigates:
            return self._loaded(press)
        press()
        return 0

    def screenshot(self, path: Path) -> tuple[int, int]:
        """A PNG of the viewport written to ``path``; its (width, height) in pixels, read from the PNG."""
        data = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"])
        path.write_bytes(data)
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")

    def content_width(self) -> float:
        """The width of everything laid out (a page wider than its viewport scrolls sideways)."""
        metrics = self.send("Page.getLayoutMetrics")
        return float((metrics.get("cssContentSize") or metrics["contentSize"])["width"])
