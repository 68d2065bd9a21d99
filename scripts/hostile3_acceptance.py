#!/usr/bin/env python3
"""Issue 49's acceptance run: each class of the third hostile-input round built afresh by its generator
(tests/hostile3) with sizes, seeds and names the tests never use, every input under 20 MB, each command run
as `python -m kwire` under /usr/bin/time (wall time, peak RSS) and judged on what the issue asks:

- no traceback on stderr, no death by signal, no run past 60 s, peak RSS under 500 MB;
- `stats --json` the same document with -j 0, -j 1 and -j 2 (and the default);
- every destructive change listed whatever its padding (`acl_allow_all`, `topic_deleted` findings);
- no secret value in any output, no raw control character (C0 but the line break, C1, bidi, invisible);
- a compressed capture cut short says where it ended; a bomb says how far it expands.

    python scripts/hostile3_acceptance.py [--seed 7] [--folder /tmp/kwire-h3] [--only NAME,...] [--limit 120]

Prints a markdown row per run and a verdict line per input; exits 1 when any check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.hostile3 import changes, compressed, control, midstream_tls, nulls, resends, secrets  # noqa: E402
from tests.hostile3.control import raw_in  # noqa: E402

MAX_SECONDS, MAX_RSS_MB, MAX_INPUT = 60, 500, 20 << 20
TIME_LINE = re.compile(r"^kwire-time (\S+) (\d+)$", re.M)


def _bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def inputs(folder: Path, seed: int) -> dict[str, tuple[Path, dict]]:
    """name -> (capture, what it must show); written with sizes and seeds of their own."""
    at = ("first", "middle", "last")[seed % 3]
    out: dict[str, tuple[Path, dict]] = {}

    def add(name: str, path: Path, **expect) -> None:
        out[name] = (path, expect)

    p = folder / "padded_acls.pcap"
    changes.padded_acls(p, 255_000 + seed, at, seed)  # past KWIRE_MAX_BODY_ENTRIES (250,000)
    add("padded_acls", p, findings={"acl_allow_all", "topic_deleted"})
    p = folder / "padded_acls_small.pcap"
    changes.padded_acls(p, 777 + seed, at, seed + 1)
    add("padded_acls_small", p, findings={"acl_allow_all", "topic_deleted"})
    changes.huge_acls(p := folder / "huge_acls.pcap", 60)  # 180,000 bindings
    add("huge_acls", p)
    changes.full_log(p := folder / "full_log.pcap", 1_300, 180)
    add("full_log", p, findings={"acl_allow_all"})
    changes.leader_changes(p := folder / "leader_changes.pcap", 25_000 + seed)
    add("leader_changes", p, findings={"quorum_leader_change"})
    changes.many_brokers(p := folder / "many_brokers.pcap.gz", 120)
    add("many_brokers", p)
    changes.unreadable(p := folder / "unreadable.pcap")
    add("unreadable", p)
    resends.resends(p := folder / "resends.pcap", 3, seed)
    add("resends", p)
    control.write_capture(p := folder / "control.pcap", seed, 2)
    add("control", p)
    nulls.write_capture(p := folder / "nulls.pcap", seed, 2)
    add("nulls", p)
    made = secrets.secret_capture(seed, 3)
    add("secrets", _bytes(folder / "secrets.pcap", made.pcap), secrets=made.secrets)
    midstream_tls.write_capture(p := folder / "midstream_tls.pcap", 7, "both", True, scale=3, seed=seed, mss=1200)
    add("midstream_tls", p)
    midstream_tls.tls_windows(p := folder / "midstream_tls_windows.pcap", 150, seed)
    add("midstream_tls_windows", p)
    add("gzip_members", _bytes(folder / "members.pcap.gz", compressed.pending_in_members(3, 40_000 + seed)))
    plain = (ROOT / "captures" / "produce-consume-zstd.pcap").read_bytes()
    for fmt, suffix in (("gzip", "gz"), ("zstd", "zst"), ("lz4", "lz4"), ("xz", "xz"), ("bzip2", "bz2")):
        add(f"cut_{fmt}", _bytes(folder / f"cut.pcap.{suffix}", compressed.cut(fmt, plain, 0.83, 30_000)),
            stderr=r"ended|cut|truncated")
    add("bomb_zstd", _bytes(folder / "bomb.pcap.zst", compressed.bomb("zstd", 2)), stderr=r"expand")
    add("bomb_gzip", _bytes(folder / "bomb.pcapng.gz", compressed.bomb("gzip", 1, "pcapng")), stderr=r"expand")
    return out


def run(args: list[str], limit: int) -> dict:
    started = time.monotonic()
    cmd = ["/usr/bin/time", "-f", "kwire-time %e %M", sys.executable, "-m", "kwire", *args]
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=limit,
                              env=dict(os.environ, COLUMNS="160", NO_COLOR="1"))
    except subprocess.TimeoutExpired:
        return {"args": args, "killed": True, "seconds": time.monotonic() - started, "rss_mb": 0, "rc": None,
                "stdout": b"", "stderr": b""}
    stderr = done.stderr.decode(errors="replace")
    timed = TIME_LINE.findall(stderr)
    seconds, rss = (float(timed[-1][0]), int(timed[-1][1]) >> 10) if timed else (time.monotonic() - started, 0)
    rc = done.returncode
    if "Command terminated by signal" in stderr or "Command exited with non-zero status" in stderr:
        match = re.search(r"terminated by signal (\d+)", stderr)
        rc = -int(match.group(1)) if match else rc
    return {"args": args, "killed": False, "seconds": seconds, "rss_mb": rss, "rc": rc,
            "stdout": done.stdout, "stderr": TIME_LINE.sub("", re.sub(r"Command (terminated|exited).*\n", "", stderr))}


def judge(name: str, path: Path, expect: dict, limit: int) -> tuple[list[dict], list[str]]:
    runs = [run(["stats", "--json", "-j", str(j), str(path)], limit) for j in (0, 1, 2)]
    runs.append(run(["stats", "--json", str(path)], limit))
    runs.append(run(["stats", str(path)], limit))
    runs.append(run(["inspect", "--json", "-j", "0", str(path)], limit))
    runs.append(run(["inspect", "-V", str(path)], limit))
    problems = []
    if path.stat().st_size > MAX_INPUT:
        problems.append(f"input {path.stat().st_size} bytes, over 20 MB")
    for r in runs:
        what = " ".join(r["args"][:-1])
        stderr = r["stderr"] if isinstance(r["stderr"], str) else r["stderr"].decode(errors="replace")
        if r["killed"]:
            problems.append(f"{what}: killed past {limit} s")
            continue
        if r["rc"] is not None and r["rc"] < 0:
            problems.append(f"{what}: died by signal {-r['rc']}")
        if "Traceback" in stderr:
            problems.append(f"{what}: traceback")
        if r["seconds"] > MAX_SECONDS:
            problems.append(f"{what}: {r['seconds']:.1f} s")
        if r["rss_mb"] > MAX_RSS_MB:
            problems.append(f"{what}: {r['rss_mb']} MB")
        text = r["stdout"].decode(errors="replace") + stderr
        if raw_in(text):
            problems.append(f"{what}: raw control characters {[hex(ord(c)) for c in raw_in(text)][:5]}")
        shown = [s for s in expect.get("secrets", ()) if s in text]
        if shown:
            problems.append(f"{what}: {len(shown)} secret values shown")
        if "stderr" in expect and not re.search(expect["stderr"], stderr):
            problems.append(f"{what}: stderr does not say /{expect['stderr']}/")
    documents = {r["stdout"] for r in runs[:4] if not r["killed"]}
    if len(documents) != 1:
        problems.append(f"stats --json: {len(documents)} different documents over -j 0, 1, 2 and the default")
    wanted = expect.get("findings")
    if wanted and documents:
        try:
            document = json.loads(runs[0]["stdout"])
            kinds = {f.get("change", f.get("kind")) for f in document.get("findings", [])}
            if not wanted <= kinds:
                problems.append(f"findings {sorted(wanted - kinds)} missing")
        except ValueError:
            problems.append("stats --json: not JSON")
    return runs, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--folder", default="/tmp/kwire-h3")
    parser.add_argument("--only", default="")
    parser.add_argument("--limit", type=int, default=120)
    args = parser.parse_args()
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    made = inputs(folder, args.seed)
    only = set(filter(None, args.only.split(",")))
    failed = 0
    print("| input | size | command | wall s | peak MB | exit |")
    print("|---|---:|---|---:|---:|---:|")
    for name, (path, expect) in made.items():
        if only and name not in only:
            continue
        runs, problems = judge(name, path, expect, args.limit)
        for r in runs:
            print(f"| {name} | {path.stat().st_size:,} | {' '.join(r['args'][:-1])} | {r['seconds']:.1f} | "
                  f"{r['rss_mb']} | {'killed' if r['killed'] else r['rc']} |", flush=True)
        verdict = "ok" if not problems else "; ".join(problems)
        print(f"<!-- {name}: {verdict} -->", flush=True)
        failed += bool(problems)
    print(f"{failed} of {len(made) if not only else len(only)} inputs failed a check (seed {args.seed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
