#!/usr/bin/env bash
# The Spark benchmark's archive B (docs/speed.md, `kwire spark`): many connections of comparable work, as a
# busy broker's capture has. Four interleaved copies of the first 300,000 packets of the many-small
# recording (each copy its own connections, handshakes included) and two of bulk.pcap, time-aligned
# and merged: about 670 MB. Needs the recordings scripts/bench.py and scripts/bench_live.py make in
# /tmp/kwire-bench, and Wireshark's capinfos, editcap and mergecap. Then:
#     python scripts/bench_spark.py /tmp/kwire-bench/spark2/archive.pcap --repeat 1
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SMALL=${SMALL:-/tmp/kwire-bench/live/small-2.5m.pcap.first300000.pcap}
BULK=${BULK:-/tmp/kwire-bench/bulk.pcap}
OUT=${OUT:-/tmp/kwire-bench/spark2}
mkdir -p "$OUT" && cd "$OUT"
python - "$ROOT" "$SMALL" "$BULK" <<'PY'
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.spark.rotate import interleaved_copies
interleaved_copies(sys.argv[2], Path("small4.pcap"), 4)
interleaved_copies(sys.argv[3], Path("bulk2.pcap"), 2)
PY
t0=$(capinfos -a -S -T -r small4.pcap | awk '{print $2}')
bst=$(capinfos -a -S -T -r bulk2.pcap | awk '{print $2}')
editcap -t "$(python3 -c "print(f'{$t0-$bst:.9f}')")" bulk2.pcap bulk2s.pcap
mergecap -F pcap -w archive.pcap small4.pcap bulk2s.pcap
rm small4.pcap bulk2.pcap bulk2s.pcap
capinfos -c -u archive.pcap
