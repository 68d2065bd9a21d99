#!/usr/bin/env python3
"""The worst cases of the second hostile-input campaign (issue 25), measured: each class's input built
afresh by tests/hostile/generators.py (issue 49's mid-stream TLS cases: tests/hostile3/midstream_tls.py) at a
size under 20 MB, each command run under /usr/bin/time -v
(wall time, peak RSS of kwire's process), as docs/bounds.md quotes them.

    python scripts/bounds_hostile.py [--tree DIR] [--only NAME,...] [--folder /tmp/kwire-bounds] [--limit 300]

`--tree`: the kwire to run (PYTHONPATH; default this checkout), e.g. a checkout of an older commit to
compare. Prints one markdown row per run: case, input size, command, wall time, peak RSS, exit
status, and whether stderr held a traceback (a run past `--limit` seconds is killed and says so).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.hostile import generators as g  # noqa: E402
from tests.hostile3 import midstream_tls  # noqa: E402

KEYS = "{capture}.keys"
# name: (file name, maker, [kwire arguments before the capture])
CASES = {
    "tls-detector-rescan": ("rescan.pcap", lambda p: g.tls_detector_rescan(p, 3), [["stats"]]),
    "tls-gap-garbage": ("gap.pcap", lambda p: g.tls_gap_garbage(p, 40), [["stats", "--keylog", KEYS]]),
    "assignment-repeats": ("assign.pcap", lambda p: g.assignment_repeats(p, 5), [["stats"]]),  # 200,000: under the body-entries cap
    "unanswered-joins": ("joins.pcap", lambda p: g.unanswered_joins(p, 8), [["stats"]]),
    "excerpt-ranges": ("ranges.pcap", lambda p: g.excerpt_ranges(p, 3),
                       [["inspect", "--api", "ApiVersions", "-w", "{folder}/cut.pcap"]]),
    "many-names": ("names.pcap", lambda p: g.many_names(p, 6), [["stats"], ["stats", "--html", "{folder}/r.html"]]),
    "many-client-ids": ("ids.pcap.gz", lambda p: g.many_client_ids(p, 200_000), [["stats"]]),
    "big-metadata": ("meta.pcap", lambda p: g.big_metadata(p, 10), [["inspect", "-V"]]),
    "secrets-block": ("secrets.pcapng", lambda p: g.secrets_block(p, 2, two_byte_lines=True), [["stats"]]),
    "secrets-block-entries": ("entries.pcapng.gz", lambda p: _gzip(p, lambda q: g.secrets_block(q, 20)), [["stats"]]),
    "short-key-lines": ("keys.pcap", lambda p: g.short_key_lines(p, 3), [["stats", "--keylog", KEYS]]),
    "client-hellos": ("hellos.pcap.gz", lambda p: _gzip(p, lambda q: g.client_hellos(q, 40)), [["stats"]]),
    "far-future": ("far.pcapng", g.far_future, [["stats", "--html", "{folder}/far.html"]]),
    "midstream-fake-tls": ("fake.pcap", lambda p: g.midstream_fake_tls(p, 100, inside=True), [["inspect"]]),
    "big-first-request": ("big.pcap", lambda p: g.big_first_request(p, 8 << 20, handshake=True), [["inspect"]]),
    "keylog-device": ("small.pcap", lambda p: g.midstream_fake_tls(p, 1), [["inspect", "--keylog", "/dev/zero"]]),
    "write-over-input": ("over.pcap", lambda p: g.midstream_fake_tls(p, 1), [["inspect", "-w", "{capture}"]]),
    # issue 49: mid-stream Kafka whose first bytes chain as TLS records; TLS connections held to the window's end
    "midstream-tls": ("midtls.pcap", lambda p: midstream_tls.write_capture(p, 6, "both", True, scale=800),
                      [["inspect"]]),
    "midstream-tls-bytes": ("midtls1.pcap", lambda p: midstream_tls.write_capture(p, 6, "both", False, scale=8, mss=1),
                            [["inspect"]]),
    "tls-windows": ("windows.pcap", lambda p: midstream_tls.tls_windows(p, 450), [["stats"]]),
}


def _gzip(path, make) -> None:
    import gzip
    import shutil

    plain = Path(str(path)[:-3])
    make(plain)
    with open(plain, "rb") as src, gzip.open(path, "wb", compresslevel=6) as out:
        shutil.copyfileobj(src, out, 1 << 20)
    plain.unlink()


def run(tree: Path, argv: list[str], limit: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    start = time.monotonic()
    try:
        proc = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "kwire", *argv], env=env, cwd=tree,
                              capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return {"status": "killed", "seconds": time.monotonic() - start, "rss_mb": None, "traceback": False}
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    return {"status": proc.returncode, "seconds": time.monotonic() - start,
            "rss_mb": int(rss.group(1)) / 1024 if rss else None, "traceback": "Traceback" in proc.stderr,
            "last": [line for line in proc.stderr.splitlines() if line.startswith(("kwire:", "Error"))][-1:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, default=ROOT)
    parser.add_argument("--only", default="")
    parser.add_argument("--folder", type=Path, default=Path("/tmp/kwire-bounds"))
    parser.add_argument("--limit", type=int, default=300)
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    names = [n for n in CASES if not args.only or n in args.only.split(",")]
    print("| case | input | command | wall | peak RSS | exit | traceback |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in names:
        file, make, commands = CASES[name]
        capture = args.folder / file
        if not capture.exists():
            make(capture)
        size = capture.stat().st_size
        for command in commands:
            argv = [a.format(capture=capture, folder=args.folder) for a in command] + [str(capture)]
            before = capture.read_bytes() if "-w" in command else None
            r = run(args.tree, argv, args.limit)
            intact = "" if before is None else (" (input intact)" if capture.read_bytes() == before else " (INPUT MODIFIED)")
            rss = f"{r['rss_mb']:.0f} MB" if r["rss_mb"] is not None else "-"
            shown = " ".join("KEYS" if a.endswith(".keys") else Path(a).name if "/" in a else a for a in command)
            print(f"| {name} | {size / 2**20:.1f} MiB | `kwire {shown}` | {r['seconds']:.1f} s | {rss} | "
                  f"{r['status']}{intact} | {'yes' if r['traceback'] else 'no'} |", flush=True)


if __name__ == "__main__":
    main()
