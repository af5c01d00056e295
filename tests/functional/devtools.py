"""Headless Chromium driven through its DevTools protocol on a pipe (`--remote-debugging-pipe`: JSON
commands on the browser's fd 3, answers and events on its fd 4, each message ending in a NUL byte), for
pages that need a session cookie, which the command line's --dump-dom and --screenshot cannot set. No
client library: the protocol on a pipe is JSON lines with a NUL in place of the newline."""

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
COMMAND_TIMEOUT = 120  # seconds for one answer


def _high(fd: int) -> int:
    """A copy of `fd` numbered 100 or above and closed on exec, so that placing the pipes at 3 and 4 in the
    child clobbers neither and the child keeps only those two."""
    copy = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100)
    os.close(fd)
    return copy


def chromium_binary() -> str:
    """Chromium's path, or the test fails saying what to install."""
    binary = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if binary is None:
        pytest.fail("Chromium is not installed (apt-get install chromium); the browser tests need it")
    return binary


class Browser:
    def __init__(self, profile: Path, width: int, height: int):
        binary = chromium_binary()
        commands_in, self._commands = map(_high, os.pipe())
        self._answers, answers_out = map(_high, os.pipe())
        self.process = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
             "--remote-debugging-pipe", "about:blank"],
            # the child's fds 3 and 4; not pass_fds, whose closing of every other fd comes after preexec_fn
            close_fds=False, preexec_fn=lambda: (os.dup2(commands_in, 3), os.dup2(answers_out, 4)),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(commands_in)
        os.close(answers_out)
        self._buffer, self._next_id, self.session = b"", 0, None

    def call(self, method: str, **params) -> dict:
        """Send one command (to the attached page, once there is one) and wait for its answer."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if self.session and not method.startswith(("Target.", "Storage.", "Browser.")):
            message["sessionId"] = self.session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + COMMAND_TIMEOUT
        while True:
            answer = self._read(deadline)
            if answer.get("id") == self._next_id:
                assert "error" not in answer, answer
                return answer["result"]

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._answers], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(self._answers, 1 << 20) if ready else b""
            assert chunk, "Chromium did not answer in time" if not ready else "Chromium closed its pipe"
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def open(self, url: str, cookies: list[dict]) -> None:
        """A new page at `url`, with `cookies` set first, attached for the page-level commands."""
        self.call("Storage.setCookies", cookies=cookies)
        target = self.call("Target.createTarget", url=url)["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def evaluate(self, expression: str):
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))
        return path

    def close(self) -> None:
        try:
            self.call("Browser.close")
            self.process.wait(timeout=30)
        except (AssertionError, OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        finally:
            os.close(self._commands)
            os.close(self._answers)
