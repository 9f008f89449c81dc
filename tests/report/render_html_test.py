#!/usr/bin/env python3
"""`servebench report --format html` and `--chart` end to end, and the page in headless Chromium.

Usage: render_html_test.py SERVEBENCH TESTDATA_DIR

Makes the HTML report and the charts of seed 000's sweep (src/report/testdata/seed000), checks
that the SVGs parse as XML, the PNG and PDF have their headers, and that Chromium renders the page
with no console message and a screenshot that is not blank (many colours, the series' colours
among them). Chromium missing is a failure, not a skip: CI installs it
(scripts/install-deps.sh --tests).
Python's standard library only (no PIL on the machines): the PNG is decoded with zlib.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

# The first three series colours of src/report/charts.cpp (matplotlib's tab10).
SERIES_COLOURS = [(31, 119, 180), (255, 127, 14), (44, 160, 44)]
WINDOW = (1280, 1600)


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def run(args):
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        fail(f"{' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return done


def png_rgb_rows(data):
    """The PNG's pixels as rows of bytes (RGB or RGBA, 8 bits), filters undone."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("the screenshot is not a PNG")
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour_type = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour_type not in (2, 6):
                fail(f"unexpected PNG format: depth {depth}, colour type {colour_type}")
            channels = 3 if colour_type == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, previous))
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = previous[i]
                c = previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(line)
        previous = line
    return width, height, channels, rows


def check_screenshot(path):
    with open(path, "rb") as f:
        width, height, channels, rows = png_rgb_rows(f.read())
    if (width, height) != WINDOW:
        fail(f"screenshot is {width}x{height}, asked for {WINDOW[0]}x{WINDOW[1]}")
    colours = {}
    for line in rows:
        for i in range(0, len(line), channels):
            rgb = bytes(line[i : i + 3])
            colours[rgb] = colours.get(rgb, 0) + 1
    background = max(colours.values()) / (width * height)
    print(f"screenshot: {len(colours)} distinct colours, {background:.1%} background")
    if len(colours) < 100:
        fail(f"screenshot looks blank: {len(colours)} distinct colours")
    if background > 0.97:
        fail(f"screenshot looks blank: {background:.1%} of it is one colour")
    for colour in SERIES_COLOURS:
        near = sum(
            n
            for rgb, n in colours.items()
            if all(abs(rgb[k] - colour[k]) <= 6 for k in range(3))
        )
        if near < 200:
            fail(f"series colour {colour} is on {near} pixels: the charts did not render")


def main():
    if len(sys.argv) != 3:
        fail("usage: render_html_test.py SERVEBENCH TESTDATA_DIR")
    servebench, testdata = sys.argv[1], sys.argv[2]
    seed000 = os.path.join(testdata, "seed000")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        fail("chromium is not installed (scripts/install-deps.sh --tests installs it)")

    with tempfile.TemporaryDirectory(prefix="servebench-html-") as tmp:
        # Charts in all three formats.
        run([servebench, "report", seed000, "--chart", "all", "--chart-format", "svg",
             "--output", os.path.join(tmp, "svg")])
        svgs = sorted(os.listdir(os.path.join(tmp, "svg")))
        expected = ["itl-vs-throughput.svg", "itl.svg", "throughput.svg", "tpot-vs-throughput.svg",
                    "tpot.svg", "ttft-vs-throughput.svg", "ttft.svg"]
        if svgs != expected:
            fail(f"--chart all wrote {svgs}, expected {expected}")
        for name in svgs:
            root = ET.parse(os.path.join(tmp, "svg", name)).getroot()
            title = root.find("{http://www.w3.org/2000/svg}title")
            if not root.tag.endswith("svg") or title is None or not title.text:
                fail(f"{name}: not an SVG with a title")
            desc = root.find("{http://www.w3.org/2000/svg}desc").text
            if "tp8_pp1" not in desc or "tp4_pp2_no_IB" not in desc:
                fail(f"{name}: the series are not named in <desc>: {desc}")
        run([servebench, "report", seed000, "--chart", "ttft", "--output",
             os.path.join(tmp, "ttft.png")])
        with open(os.path.join(tmp, "ttft.png"), "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                fail("ttft.png is not a PNG")
        run([servebench, "report", seed000, "--chart", "all", "--output",
             os.path.join(tmp, "charts.pdf")])
        with open(os.path.join(tmp, "charts.pdf"), "rb") as f:
            pdf = f.read()
        pages = len(re.findall(rb"/Type\s*/Page[^s]", pdf))
        if not pdf.startswith(b"%PDF-") or pages != 7:
            fail(f"charts.pdf: expected a PDF of 7 pages, found {pages}")

        # The HTML report, self-contained.
        html_path = os.path.join(tmp, "report.html")
        run([servebench, "report", seed000, "--format", "html", "--output", html_path])
        with open(html_path, encoding="utf-8") as f:
            html = f.read()
        if re.search(r'(src|href)\s*=\s*"(?!#)', html) or "<script" in html:
            fail("the HTML refers to something outside the page, or runs a script")

        # Rendered in headless Chromium; flags as docs (cpp.md) say this machine needs.
        screenshot = os.path.join(tmp, "screenshot.png")
        args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
                "--user-data-dir=" + os.path.join(tmp, "profile"),
                "--enable-logging=stderr", "--v=0", "--hide-scrollbars",
                f"--window-size={WINDOW[0]},{WINDOW[1]}", "--screenshot=" + screenshot,
                "file://" + html_path]
        done = subprocess.run(args, capture_output=True, text=True, timeout=90)
        console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
        if console:
            fail("console messages while rendering:\n" + "\n".join(console))
        if done.returncode != 0 or not os.path.exists(screenshot):
            fail(f"chromium exited {done.returncode} without a screenshot:\n{done.stderr[-2000:]}")
        check_screenshot(screenshot)
        keep = os.environ.get("SERVEBENCH_KEEP_SCREENSHOT")
        if keep:
            shutil.copy(screenshot, keep)
            shutil.copy(html_path, os.path.splitext(keep)[0] + ".html")
    print("ok")


if __name__ == "__main__":
    main()
