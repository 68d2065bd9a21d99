"""The HTML report laid out by a real browser: headless Chromium at 900 and 1400 pixels wide.

The report itself has no scripts; the test adds one to a copy, which measures the laid-out page and
writes its findings into the DOM, and reads them back with Chromium's --dump-dom. It also takes a
screenshot of each width (checked to be a PNG of that width; kept when KWIRE_SCREENSHOTS names a
folder). Checked: no element reaches outside its card (header, section, panel, KPI), the page does
not scroll sideways, every table fits its box without scrolling, every api with paired exchanges
has its histogram, lag is drawn as lines, and so are end-to-end latency and lag in time
(captures/problems/end-to-end-commits, a consumer's name made long). The documents come from real captures, filtered as in the
issue that found the overflow (--api Fetch,Produce), with names from the wire made long and hostile.
Skipped when Chromium is not installed (CI installs Debian's chromium).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from kwire.analytics import Aggregator
from kwire.pipeline import analyze_files
from kwire.query import ExchangeFilter
from kwire.render.html_report import html_report
from tests.render.hostile import escape_capture

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "captures"
CHROMIUM = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(name)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (apt-get install chromium)")

MEASURE = """<script>
(function () {
  function name(el) {
    return el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined && el.className
      ? "." + el.className.split(" ").join(".") : "") + " '" + (el.textContent || "").trim().slice(0, 40) + "'";
  }
  var out = {width: window.innerWidth, pageWidth: document.documentElement.scrollWidth, outside: [],
             scrolling: [], histograms: document.querySelectorAll("#latency .panel.hist svg").length,
             lagLines: document.querySelectorAll("#lag polyline.series").length,
             endToEndLines: document.querySelectorAll("#end-to-end polyline.series").length,
             cards: 0, tables: document.querySelectorAll(".tw table").length};
  var cards = document.querySelectorAll("header, section, .panel, .kpi");
  for (var i = 0; i < cards.length; i++) {
    var card = cards[i], box = card.getBoundingClientRect();
    out.cards++;
    var inner = card.querySelectorAll("*");
    for (var j = 0; j < inner.length; j++) {
      var el = inner[j];
      if (el.closest("svg") && el.tagName.toLowerCase() !== "svg") continue;  // an SVG clips its own
      var r = el.getBoundingClientRect();
      if (!r.width && !r.height) continue;
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5)
        out.outside.push(name(card) + " > " + name(el) + " [" + r.left.toFixed(1) + ", " + r.right.toFixed(1)
                         + "] outside [" + box.left.toFixed(1) + ", " + box.right.toFixed(1) + "]");
    }
  }
  var boxes = document.querySelectorAll(".tw");
  for (var k = 0; k < boxes.length; k++)
    if (boxes[k].scrollWidth > boxes[k].clientWidth + 0.5)
      out.scrolling.push(name(boxes[k].closest("section")) + ": " + boxes[k].scrollWidth + " > " + boxes[k].clientWidth);
  var pre = document.createElement("pre");
  pre.id = "kwire-layout";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars", "--force-device-scale-factor=1"]


def chromium(tmp_path: Path, *args: str) -> str:
    profile = tmp_path / f"profile-{random.randrange(1 << 30)}"
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def document(paths, keep=ExchangeFilter()) -> dict:
    agg = Aggregator()
    for ex in analyze_files([str(p) for p in paths]):
        if keep(ex):
            agg.add_exchange(ex)
        else:
            agg.learn_names(ex)
    return agg.document()


def lengthen(doc: dict, rng: random.Random) -> dict:
    """The document with its wire names made long (no spaces, so only wrapping anywhere helps)."""
    long = "very-long-topic-name-" + "".join(rng.choice("abcdefghij0123456789_.") for _ in range(140))
    topics = doc["partitions"]
    if topics:
        first = next(iter(topics))
        topics[long] = topics.pop(first)
    clients = doc["client_ids"]
    if clients:
        first = next(iter(clients))
        clients["client-" + long] = clients.pop(first)
    for item in doc["slowest"][:3]:
        item["client_id"] = "client-" + long
    return doc


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def probed(tmp_path: Path, page: str, script: str, pre_id: str, width: int, label: str):
    """What `script` (added to `page`) writes as JSON into <pre id=pre_id>, the page laid out by Chromium
    `width` pixels wide."""
    probe = tmp_path / f"{label}-{width}.html"
    probe.write_text(page.replace("</body>", script + "</body>"), encoding="utf-8")
    dom = chromium(tmp_path, f"--window-size={width},1200", "--dump-dom", probe.as_uri())
    found = re.search(rf'<pre id="{pre_id}">(.*?)</pre>', dom, re.S)
    assert found, dom[-500:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))


def layout(tmp_path: Path, page: str, width: int, label: str) -> dict:
    report = probed(tmp_path, page, MEASURE, "kwire-layout", width, label)
    plain = tmp_path / f"{label}.html"
    plain.write_text(page, encoding="utf-8")
    shot = tmp_path / f"{label}-{width}.png"
    chromium(tmp_path, f"--window-size={width},2400", f"--screenshot={shot}", plain.as_uri())
    assert png_size(shot)[0] == width
    keep = os.environ.get("KWIRE_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)
    return report


def fetch_produce(tmp_path):
    keep = ExchangeFilter(api_keys=frozenset({0, 1}))
    doc = document([CAPTURES / "produce-consume-zstd.pcap", CAPTURES / "multi-broker-3.pcap"], keep)
    return doc, "--api Fetch,Produce"


def everything(tmp_path):
    hostile = tmp_path / "hostile.pcap"
    hostile.write_bytes(escape_capture(random.Random(12))[0])
    paths = [CAPTURES / name for name in ("share-consumer.pcap", "produce-consume-zstd.pcap",
                                          "consumer-protocol-lz4.pcap", "multi-broker-3.pcap")] + [hostile]
    return lengthen(document(paths), random.Random(12)), ""


@pytest.mark.parametrize("make", [fetch_produce, everything], ids=["fetch-produce", "everything"])
def test_report_fits_its_cards_at_900_and_1400(tmp_path, make):
    doc, filters = make(tmp_path)
    page = html_report(doc, sources=["captures/a.pcap", "captures/b.pcap"], filters=filters)
    with_latency = sum(1 for fig in doc["apis"].values() if fig["latency_ms"]["count"])
    for width in (900, 1400):
        report = layout(tmp_path, page, width, make.__name__)
        assert report["width"] == width
        assert report["cards"] > 10 and report["tables"] >= 4
        assert report["outside"] == [], "\n".join(report["outside"][:10])
        assert report["scrolling"] == [], report["scrolling"]
        assert report["pageWidth"] <= width
        assert report["histograms"] == with_latency
        assert report["lagLines"] >= 1


def end_to_end(tmp_path):
    doc = lengthen(document([CAPTURES / "problems" / "end-to-end-commits.pcap.gz"]), random.Random(47))
    section = doc["end_to_end"]
    long = "consumer-" + "x" * 150
    section["consumers"][0]["consumer"] = long
    section["timeline"]["latency"][0]["name"] = long
    return doc, ""


def test_end_to_end_charts_fit_and_draw_every_series(tmp_path):
    doc, filters = end_to_end(tmp_path)
    timeline = doc["end_to_end"]["timeline"]
    drawn = [s for s in timeline["latency"] + timeline["time_lag"] if sum(v is not None for v in s["values_ms"])]
    assert len(timeline["latency"]) == 2 and len(timeline["time_lag"]) == 4  # 2 consumers; and 2 groups' commits
    page = html_report(doc, sources=["captures/problems/end-to-end-commits.pcap.gz"], filters=filters)
    for width in (900, 1400):
        report = layout(tmp_path, page, width, "end-to-end")
        assert report["outside"] == [], "\n".join(report["outside"][:10])
        assert report["scrolling"] == [], report["scrolling"]
        assert report["pageWidth"] <= width
        assert report["endToEndLines"] == len(drawn)
