"""Headless Chromium driven over the Chrome DevTools protocol (tests and screenshots).

No browser is downloaded: the system's Chromium (Debian's ``chromium``) is
started headless with a fresh profile and a DevTools port on loopback, and
this module speaks the protocol over its websocket (``websockets``, which
viser depends on): navigate, evaluate JavaScript, capture a PNG.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-unsafe-swiftshader",  # WebGL in software (no GPU in headless runs)
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
)
# Closes viser's notices (e.g. "Software WebGL rendering detected") so they do not cover a screenshot.
CLOSE_NOTICES = (
    "document.querySelectorAll('.mantine-Notification-root button, .mantine-Notification-closeButton')"
    ".forEach(b => b.click()); true"
)


def find_chromium() -> str | None:
    """The Chromium executable: ``$NAO_IK_CHROMIUM``, else the first of :data:`CANDIDATES` on the PATH."""
    env = os.environ.get("NAO_IK_CHROMIUM")
    if env:
        return env if shutil.which(env) else None
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    """The browser did not start or did not answer."""


class Browser:
    """One headless Chromium with one page.

    Args:
        executable: the browser (default :func:`find_chromium`).
        width: window width, pixels.
        height: window height, pixels.
        timeout: seconds to wait for the browser to start and for each command.
    """

    def __init__(self, executable: str | None = None, width: int = 1200, height: int = 800, timeout: float = 30.0):
        from websockets.sync.client import connect

        exe = executable or find_chromium()
        if exe is None:
            raise BrowserError("no Chromium found (install Debian's chromium package, or set NAO_IK_CHROMIUM)")
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="nao-ik-chromium-")
        self.process = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={self._profile}", f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            port = self._devtools_port()
            page = self._page_socket(port)
            self._ws = connect(page, max_size=100 * 1024 * 1024, open_timeout=timeout)
            self._id = 0
            # The page gets exactly width x height (the window would lose some to the browser's own bars).
            self.call(
                "Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False
            )
        except Exception:
            self.close()
            raise

    def _devtools_port(self) -> int:
        path = os.path.join(self._profile, "DevToolsActivePort")
        end = time.monotonic() + self.timeout
        while time.monotonic() < end:
            if self.process.poll() is not None:
                raise BrowserError(f"the browser exited with status {self.process.returncode}")
            try:
                with open(path, encoding="utf-8") as fh:
                    first = fh.readline().strip()
                if first:
                    return int(first)
            except (FileNotFoundError, ValueError):
                pass
            time.sleep(0.05)
        raise BrowserError(f"the browser did not open its DevTools port within {self.timeout:g} s")

    def _page_socket(self, port: int) -> str:
        end = time.monotonic() + self.timeout
        while time.monotonic() < end:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=self.timeout) as r:
                pages = [t for t in json.load(r) if t.get("type") == "page"]
            if pages:
                return pages[0]["webSocketDebuggerUrl"]
            time.sleep(0.05)
        raise BrowserError("the browser has no page")

    def call(self, method: str, **params) -> dict:
        """Send one DevTools command and return its result (events in between are dropped)."""
        self._id += 1
        self._ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        end = time.monotonic() + self.timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise BrowserError(f"no answer to {method} within {self.timeout:g} s")
            reply = json.loads(self._ws.recv(timeout=left))
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})

    def open(self, url: str) -> None:
        """Load ``url`` in the page."""
        self.call("Page.navigate", url=url)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"JavaScript error: {result['exceptionDetails'].get('text')}")
        return result.get("result", {}).get("value")

    def text(self) -> str:
        """The page's visible text."""
        return self.evaluate("document.body ? document.body.innerText : ''") or ""

    def wait_for_text(self, needle: str, timeout: float = 30.0) -> str:
        """Wait until the page's text contains ``needle``; return the text."""
        end = time.monotonic() + timeout
        text = ""
        while time.monotonic() < end:
            text = self.text()
            if needle in text:
                return text
            time.sleep(0.1)
        raise BrowserError(f"the page never showed {needle!r} within {timeout:g} s; it shows: {text[:300]!r}")

    def click_button(self, label: str) -> None:
        """Click the page's button whose text is ``label``."""
        found = self.evaluate(
            "(() => { const b = [...document.querySelectorAll('button')]"
            f".find(e => e.innerText.trim() === {json.dumps(label)}); if (b) b.click(); return !!b; }})()"
        )
        if not found:
            raise BrowserError(f"no button {label!r} on the page")

    def drag(self, start: tuple[float, float], end: tuple[float, float], steps: int = 10) -> None:
        """Press the left button at ``start`` (pixels), move to ``end`` in ``steps``, release."""
        (x0, y0), (x1, y1) = start, end
        mouse = "Input.dispatchMouseEvent"
        self.call(mouse, type="mouseMoved", x=x0, y=y0)
        self.call(mouse, type="mousePressed", x=x0, y=y0, button="left", buttons=1, clickCount=1)
        for k in range(1, steps + 1):
            x, y = x0 + (x1 - x0) * k / steps, y0 + (y1 - y0) * k / steps
            self.call(mouse, type="mouseMoved", x=x, y=y, button="left", buttons=1)
            time.sleep(0.03)
        self.call(mouse, type="mouseReleased", x=x1, y=y1, button="left", buttons=0, clickCount=1)

    def close_notices(self) -> None:
        """Close the viewer's notices (they would cover part of a screenshot)."""
        self.evaluate(CLOSE_NOTICES)

    def screenshot(self, path: str) -> int:
        """Save the page as a PNG; returns its size in bytes."""
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        with open(path, "wb") as fh:
            fh.write(data)
        return len(data)

    def close(self) -> None:
        """Stop the browser and remove its profile."""
        ws = getattr(self, "_ws", None)
        if ws is not None:
            try:
                ws.close()
            except Exception:  # noqa: BLE001 (closing a socket the browser may have closed)
                pass
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
