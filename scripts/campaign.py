#!/usr/bin/env python3
"""The hostile-input campaign, longer than the test suite runs it (tests/test_campaign.py): the same
seeded cases (tests/campaign/cases.py: mutated committed captures in pcap, pcapng and gzip, the
crafted Kafka cases, SYN and acks=0 floods), more seeds, bigger sizes, each run as `python -m kwire`
under RLIMIT_AS 1 GiB and RLIMIT_CPU (tests/campaign/runner.py), until the time is up.

    python scripts/campaign.py --minutes 10 [--scale 4] [--jobs 2] [--seed 1] [--json results.json]
    python scripts/campaign.py --replay SEED INDEX [--scale 4] --out case.pcap   # one case, to debug

Prints what it ran: cases by family, failures (each with its seed and index, to replay), the
slowest runs and the largest peak RSS. docs/bounds.md quotes a run of it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.campaign.cases import cases  # noqa: E402
from tests.campaign.runner import run_case  # noqa: E402

PER_SEED = 40  # cases drawn from each seed (every crafted case and flood, then mutations)


def campaign(minutes: float, scale: int, jobs: int, first_seed: int) -> list[dict]:
    deadline = time.monotonic() + minutes * 60
    results: list[dict] = []
    folder = Path(tempfile.mkdtemp(prefix="kwire-campaign-"))

    def one(seed: int, index: int, case) -> dict:
        result = run_case(case, folder / f"{seed}-{index}")
        return {"seed": seed, "index": index, "case": result.case, "family": case.family,
                "argv": " ".join(result.argv), "status": result.status, "problems": result.problems,
                "seconds": round(result.seconds, 3), "peak_rss_mb": round(result.peak_rss / 2**20, 1),
                "capture_bytes": result.capture_bytes}

    seed = first_seed
    with ThreadPoolExecutor(jobs) as pool:
        while time.monotonic() < deadline:
            made = cases(seed, PER_SEED, scale)
            futures = [pool.submit(one, seed, i, case) for i, case in enumerate(made)]
            for future in futures:
                row = future.result()
                results.append(row)
                mark = "FAIL" if row["problems"] else "ok"
                print(f"{mark:4} {row['seconds']:7.2f} s {row['peak_rss_mb']:7.1f} MB  seed {seed} #{row['index']:<3} "
                      f"{row['case']}  kwire {row['argv']}  {'; '.join(row['problems'])[:300]}", flush=True)
                if time.monotonic() >= deadline:
                    for rest in futures:
                        rest.cancel()
                    break
            seed += 1
    return results


def report(results: list[dict], minutes: float, scale: int) -> str:
    failed = [r for r in results if r["problems"]]
    families = Counter(r["family"] for r in results)
    statuses = Counter(r["status"] for r in results)
    seeds = sorted({r["seed"] for r in results})
    lines = [f"{len(results):,} runs in {minutes:g} min (scale {scale}, seeds {seeds[0]}-{seeds[-1]}): "
             + ", ".join(f"{n:,} {family}" for family, n in sorted(families.items()))
             + f"; exit 0: {statuses.get(0, 0):,}, exit 1: {statuses.get(1, 0):,}; failures: {len(failed)}"]
    for r in failed:
        lines.append(f"  FAILED seed {r['seed']} #{r['index']} {r['case']} (kwire {r['argv']}): {r['problems']}")
    lines.append("slowest:")
    for r in sorted(results, key=lambda r: -r["seconds"])[:5]:
        lines.append(f"  {r['seconds']:.1f} s  {r['peak_rss_mb']:.0f} MB  {r['case']} ({r['capture_bytes']:,} bytes, "
                     f"kwire {r['argv']})")
    lines.append("largest peak RSS:")
    for r in sorted(results, key=lambda r: -r["peak_rss_mb"])[:5]:
        lines.append(f"  {r['peak_rss_mb']:.0f} MB  {r['seconds']:.1f} s  {r['case']} ({r['capture_bytes']:,} bytes, "
                     f"kwire {r['argv']})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--scale", type=int, default=4, help="sizes of crafted cases and floods (tests: 1)")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once")
    parser.add_argument("--seed", type=int, default=1, help="first seed")
    parser.add_argument("--json", type=Path, help="also write every run's result here")
    parser.add_argument("--replay", nargs=2, type=int, metavar=("SEED", "INDEX"))
    parser.add_argument("--out", type=Path, default=Path("case.pcap"))
    args = parser.parse_args()
    if args.replay:
        seed, index = args.replay
        case = cases(seed, max(PER_SEED, index + 1), args.scale)[index]
        path = args.out.with_name(args.out.stem.split(".")[0] + case.suffix)
        case.write(path)
        print(f"{case.name}: kwire {' '.join(case.argv)} {path}")
        return
    start = time.monotonic()
    results = campaign(args.minutes, args.scale, args.jobs, args.seed)
    minutes = (time.monotonic() - start) / 60
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(report(results, round(minutes, 1), args.scale))
    sys.exit(1 if any(r["problems"] for r in results) else 0)


if __name__ == "__main__":
    main()
