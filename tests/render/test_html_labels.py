"""The labels of the HTML report's charts as headless Chromium draws them, at 700 and 1400 pixels wide.

A script added to a copy of the page measures the boxes the browser gives every label: in each latency
histogram, no p50/p90/p99 label meets another text of the chart or another percentile's line; in each
group timeline, the member labels are distinct, stay inside the chart and clear of each other and of
the bars, and the generation numbers clear of each other. Pages from real captures: rebalance-storm
(seven members whose ids share `0x7f1c680`, and percentiles that coincide), two kafkajs captures
(members `kwire-admin-kafkajs-<uuid>`), and rebalance-storm with its member ids made `rdkafka-<uuid>`
sharing their first 40 characters, hostile and wide client ids, and an api whose percentiles sit at the axis' end.
Skipped without Chromium, as tests/render/test_html_layout.py is.
"""

from __future__ import annotations

import copy
import uuid
from pathlib import Path

import pytest

from kwire.render.html_report import html_report
from tests import problems as P
from tests.render.test_html_layout import CAPTURES, CHROMIUM, document, probed

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (apt-get install chromium)")

MEASURE = """<script>
(function () {
  function box(el) { var r = el.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; }
  function meet(a, b) { return a[0] < b[1] - 0.01 && b[0] < a[1] - 0.01 && a[2] < b[3] - 0.01 && b[2] < a[3] - 0.01; }
  function shown(el) {  // a text's own characters, not its tooltip's
    var s = ""; el.childNodes.forEach(function (n) { if (n.nodeName !== "title") s += n.textContent; }); return s;
  }
  var out = {width: window.innerWidth, histograms: 0, pct: 0, timelines: 0, members: [], problems: []};
  document.querySelectorAll(".panel.hist svg").forEach(function (svg, h) {
    out.histograms++;
    var pct = svg.querySelectorAll("text.pct"), texts = svg.querySelectorAll("text"),
        lines = svg.querySelectorAll('line[stroke-dasharray="4 3"]');
    pct.forEach(function (t, i) {
      out.pct++;
      texts.forEach(function (u) {
        if (u !== t && meet(box(t), box(u)))
          out.problems.push("histogram " + h + ": " + shown(t) + " meets " + shown(u));
      });
      lines.forEach(function (l, j) {
        if (j !== i && meet(box(t), box(l)))
          out.problems.push("histogram " + h + ": " + shown(t) + " over the line of " + shown(pct[j]));
      });
    });
  });
  document.querySelectorAll('svg[aria-label="generations of the group"]').forEach(function (svg, g) {
    out.timelines++;
    var frame = box(svg), labels = svg.querySelectorAll("text.member"), bars = svg.querySelectorAll("rect"),
        numbers = svg.querySelectorAll('text[y="10"]'), names = [];
    labels.forEach(function (t, i) {
      var b = box(t);
      names.push(shown(t));
      if (b[0] < frame[0] - 0.5) out.problems.push("timeline " + g + ": " + shown(t) + " cut at the left");
      labels.forEach(function (u, j) {
        if (j > i && meet(b, box(u))) out.problems.push("timeline " + g + ": " + shown(t) + " meets " + shown(u));
      });
      bars.forEach(function (r) {
        if (meet(b, box(r))) out.problems.push("timeline " + g + ": " + shown(t) + " over a bar");
      });
    });
    numbers.forEach(function (t, i) {
      numbers.forEach(function (u, j) {
        if (j > i && meet(box(t), box(u)))
          out.problems.push("timeline " + g + ": generation " + shown(t) + " meets " + shown(u));
      });
    });
    out.members.push(names);
  });
  var pre = document.createElement("pre");
  pre.id = "kwire-labels";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def measure(tmp_path: Path, page: str, width: int, label: str) -> dict:
    return probed(tmp_path, page, MEASURE, "kwire-labels", width, label)


def rdkafka_ids(doc: dict) -> dict:
    """rebalance-storm with member ids `rdkafka-<uuid>` sharing their first 40 characters, hostile and
    wide client ids, and an api whose p50, p90 and p99 all sit at the end of the latency axis."""
    doc = copy.deepcopy(doc)
    group = doc["groups"]["kwire-app"]
    new = {m: f"rdkafka-{str(uuid.UUID(int=0x3f2a1b7c_9d4e_4f60_8a1b_000000000000 + 7919 * i))}"
           for i, m in enumerate(sorted(group["members"]))}
    assert len({v[:40] for v in new.values()}) == 1
    group["members"] = {new[m]: v for m, v in group["members"].items()}
    for i, v in enumerate(group["members"].values()):
        v["client_id"] = ("\x1b]0;pwned\x07" if i % 2 else "消费者消费者消费者") + v["client_id"]
    for g in group["generations"]:
        for m in g["members"]:
            m["member_id"] = new[m["member_id"]]
    edge = copy.deepcopy(doc["apis"]["JoinGroup"])
    edge["latency_ms"].update(p50=9990.0, p90=9995.0, p99=9999.0)
    edge["latency_histogram"] = [[8000.0, 9999.0, 5]]
    doc["apis"]["AtTheEdge"] = edge
    return doc


def pages():
    storm = P.document("rebalance-storm")
    kafkajs = document([CAPTURES / "admin" / "kafkajs-tansu.pcap", CAPTURES / "changes" / "kafkajs-tansu.pcap"])
    return {"rebalance-storm": (storm, 7), "kafkajs": (kafkajs, 2), "rdkafka-ids": (rdkafka_ids(storm), 7)}


@pytest.mark.parametrize("width", [700, 1400])
def test_chart_labels_never_meet_in_chromium(tmp_path, width):
    for name, (doc, members) in pages().items():
        report = measure(tmp_path, html_report(doc), width, name)
        assert report["width"] == width
        assert report["problems"] == [], (name, report["problems"][:10])
        with_latency = sum(1 for fig in doc["apis"].values() if fig["latency_ms"]["count"])
        assert report["histograms"] == with_latency and report["pct"] == 3 * with_latency
        assert report["timelines"] == 1
        names = report["members"][0]
        assert len(names) == members and len(set(names)) == members, names
        assert all(len(n) <= 40 for n in names), names
