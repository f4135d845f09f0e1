"""Headless Chromium driven over the DevTools protocol, and PNG reading, for
the tests of the HTTP pages (tests/test_http_pages.py).

Debian's chromium (tools/deps.sh) is started with --remote-debugging-pipe:
the protocol's JSON messages go over two pipes (fd 3 into the browser,
fd 4 out of it), each ended by a NUL byte -- no port, no WebSocket, no
Python package.  Browser(...) opens one page; load() navigates it and
waits for its load event, eval() runs an expression in it, screenshot()
returns its PNG.  Extra request headers (a bearer token) go with every
request the page makes.  Every request the page makes is recorded
(Browser.requests), so a test can check that it loaded nothing from
elsewhere.

read_png(bytes) decodes an 8-bit RGB or RGBA PNG (what Chromium writes)
into (width, height, rows of (r, g, b) tuples) with zlib alone.
"""
import base64
import json
import os
import shutil
import struct
import subprocess
import time
import zlib

import pytest


def chromium_path():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("Chromium is not installed (tools/deps.sh installs Debian's chromium)")


class Browser:
    def __init__(self, profile_dir, width=1280, height=900, headers=None, timeout=60):
        self.timeout = timeout
        self.requests = []
        self._buf = b""
        self._id = 0
        self._events = []
        to_r, self._to_w = os.pipe()
        self._from_r, from_w = os.pipe()

        def child_fds():
            a, b = os.dup(to_r), os.dup(from_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [chromium_path(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
             "--font-render-hinting=none", f"--user-data-dir={profile_dir}",
             "--remote-debugging-pipe", "about:blank"],
            preexec_fn=child_fds, close_fds=False, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(to_r)
        os.close(from_w)
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.call("Target.attachToTarget",
                                     {"targetId": target, "flatten": True})["sessionId"]
            self.call("Page.enable", session=True)
            self.call("Network.enable", session=True)
            if headers:
                self.call("Network.setExtraHTTPHeaders", {"headers": headers}, session=True)
            self.call("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1,
                       "mobile": False}, session=True)
        except BaseException:
            self.close()
            raise

    # -- the protocol
    def _recv(self):
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("no message from Chromium")
            chunk = os.read(self._from_r, 1 << 20)
            if not chunk:
                err = self.proc.stderr.read().decode(errors="replace")[-2000:]
                raise EOFError(f"Chromium closed its pipe: {err}")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        msg = json.loads(msg)
        if msg.get("method") == "Network.requestWillBeSent":
            self.requests.append(msg["params"]["request"]["url"])
        return msg

    def call(self, method, params=None, session=False):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_w, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._recv()
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m["result"]
            if "method" in m:
                self._events.append(m)

    def _wait_event(self, name):
        while True:
            for i, m in enumerate(self._events):
                if m["method"] == name:
                    del self._events[i]
                    return m["params"]
            self._events.append(self._recv())

    # -- what tests use
    def load(self, url):
        """Navigates to url and waits for its load event; returns the HTTP
        status of the document."""
        self._events.clear()
        self.call("Page.navigate", {"url": url}, session=True)
        self._wait_event("Page.loadEventFired")
        return self.eval("performance.getEntriesByType('navigation')[0].responseStatus")

    def eval(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                      session=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, clip=None):
        """The whole page (beyond the viewport too), or the rectangle clip
        (x, y, width, height in CSS pixels of the page), as PNG bytes."""
        params = {"format": "png", "captureBeyondViewport": True}
        if clip is not None:
            x, y, w, h = clip
            params["clip"] = {"x": x, "y": y, "width": w, "height": h, "scale": 1}
        r = self.call("Page.captureScreenshot", params, session=True)
        return base64.b64decode(r["data"])

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    os.write(self._to_w, json.dumps(
                        {"id": 0, "method": "Browser.close", "params": {}}).encode() + b"\0")
                except OSError:
                    pass
                try:
                    self.proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        finally:
            for fd in (self._to_w, self._from_r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.proc.stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_png(data):
    """(width, height, pixels): pixels[y][x] is (r, g, b).  8-bit RGB or
    RGBA, not interlaced (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xFF
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows
