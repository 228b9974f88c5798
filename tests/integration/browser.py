"""Drives headless Chromium to load a local HTML page (the `ktune report` dashboard) the way a
person opening it from file:// would, and hands back the DOM after its scripts ran, the console
messages, or a screenshot. Stdlib only.

    import browser
    result = browser.render("/tmp/report/index.html")   # RenderResult(dom=..., console=[...])
    browser.screenshot("/tmp/report/index.html", "/tmp/report.png")

The flags (checked against Debian's Chromium 156):
  --headless=new                    the current headless mode: the same renderer as a desktop
                                    window, no display needed.
  --no-sandbox                      the tests run as root, where Chromium refuses to start with
                                    its sandbox.
  --disable-gpu                     software rendering; no GPU process probing in CI containers.
  --allow-file-access-from-files    lets a file:// page use other local files as same-origin;
                                    without it, errors thrown in data.js or chart.min.js reach
                                    window.onerror only as an anonymous "Script error.".
  --virtual-time-budget=5000        runs the page on a virtual clock and stops after 5 s of it,
                                    once timers and loads have settled: the DOM is dumped after
                                    the scripts finished, not when the parser did, and in far less
                                    than 5 s of real time.
  --enable-logging=stderr --v=0     writes the page's console messages (and uncaught exceptions)
                                    to stderr as "...:INFO:CONSOLE:<line>] "<text>", source: ...".
                                    Chromium 156 logs every console level as INFO, so a caller
                                    cannot tell console.error from console.log here.
  --user-data-dir=<temp dir>        a fresh profile per run: no state leaks between runs and two
                                    runs at once do not fight over the profile lock.
  --dump-dom                        prints the serialised DOM to stdout.
  --screenshot=PATH --window-size=W,H --hide-scrollbars --force-device-scale-factor=1
                                    a PNG of the first W x H CSS pixels, at 1 image pixel each.
"""
import collections
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

RenderResult = collections.namedtuple("RenderResult", ["dom", "console"])

COMMON_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                "--virtual-time-budget=5000", "--enable-logging=stderr", "--v=0"]

# Each Chromium log record starts with "[pid:tid:MMDD/HHMMSS.micros:LEVEL:..."; a console message
# holding newlines (a stack trace) continues on the following lines without that prefix.
LOG_RECORD_START = re.compile(r"^\[\d+:\d+:\d{4}/\d{6}\.\d+:")


def find_chromium():
    """The path of the Chromium binary, or None when it is not installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def render(html_path, timeout=60):
    """Loads html_path, lets its scripts finish and returns the DOM and the console messages."""
    result = _run_chromium(["--dump-dom"], html_path, timeout)
    return RenderResult(dom=result.stdout, console=console_messages(result.stderr))


def screenshot(html_path, png_path, width=1400, height=2400, timeout=60):
    """Writes a PNG of the top width x height pixels of the page once its scripts have finished."""
    png_path = os.path.abspath(png_path)
    _run_chromium([f"--screenshot={png_path}", f"--window-size={width},{height}", "--hide-scrollbars",
                   "--force-device-scale-factor=1"], html_path, timeout)
    if not os.path.exists(png_path):
        raise RuntimeError(f"chromium wrote no screenshot to {png_path}")


def console_messages(stderr):
    """The console records (and uncaught exceptions) in Chromium's stderr log, one string each,
    without the log prefix; the launcher's and D-Bus noise is left out."""
    records = []
    for line in stderr.splitlines():
        if LOG_RECORD_START.match(line) or not records:
            records.append(line)
        else:
            records[-1] += "\n" + line
    return [re.sub(r"^\[[^\]]*\] ", "", record) for record in records
            if ":CONSOLE" in record or "Uncaught" in record]


def _run_chromium(flags, html_path, timeout):
    chromium = find_chromium()
    if chromium is None:
        raise RuntimeError("chromium is not installed (apt-get install chromium)")
    url = pathlib.Path(html_path).resolve().as_uri()
    with tempfile.TemporaryDirectory(prefix="ktune-chromium-") as profile:
        result = subprocess.run([chromium, *COMMON_FLAGS, f"--user-data-dir={profile}", *flags, url],
                                capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"chromium exited {result.returncode} on {url}\nstderr:\n{result.stderr}")
    return result
