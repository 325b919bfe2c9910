#!/usr/bin/env python3
"""Where a process's resident memory goes, over its whole run (issue 12, "peak RSS").

Runs a command, samples /proc/PID/smaps_rollup every --interval seconds and, whenever the resident set
reaches a new high, /proc/PID/smaps (per mapping). Prints the peak's composition: anonymous memory (heap,
activations) and file-backed memory split by file (the model's mapping, the prepared-weights store, the
lexicons, shared libraries), the time of the peak, and which lines the command had written to stderr by
then (kokoro-bench prints "<corpus> done"). The command's stdout goes to --stdout (default: discarded).

  python3 bench/rss_breakdown.py --stop-at "passage done" -- build/bin/kokoro-bench --corpus short,passage --repeat 1 --no-peak

Sampling misses peaks shorter than the interval; the process's own ru_maxrss (kokoro-bench's peak_rss_mb)
is the exact figure, this tool tells what it is made of.
"""
import argparse
import os
import subprocess
import sys
import threading
import time


def rollup(pid):
    vals = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[-1] == "kB":
                vals[parts[0].rstrip(":")] = int(parts[1])
    return vals


def per_mapping(pid):
    """Resident kB per mapping name (anonymous mappings grouped as [anon])."""
    out = {}
    name = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if "-" in parts[0] and len(parts) >= 5 and not parts[0].endswith(":"):
                name = parts[5] if len(parts) >= 6 else "[anon]"
            elif parts[0] == "Rss:":
                out[name] = out.get(name, 0) + int(parts[1])
    return out


def category(name):
    if name in ("[anon]", "[heap]", "[stack]"):
        return "anonymous"
    if name.endswith(".kokoro"):
        return "model file (mmap)"
    if name.endswith(".kwc"):
        return "prepared store (mmap)"
    if ".so" in name:
        return "shared libraries"
    if name.startswith("["):
        return "anonymous"
    return "other files (lexicons, voices, ...)"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--interval", type=float, default=0.02)
    ap.add_argument("--stdout", default=os.devnull)
    ap.add_argument("--stop-at", default=None,
                    help="stop recording new highs once the command writes a stderr line containing this text "
                         "(kokoro-bench: 'passage done', so that the extra measurements after the corpora do not count)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no command")
    t0 = time.monotonic()
    with open(a.stdout, "w") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, text=True)
        events = []

        stopped = threading.Event()

        def read_stderr():
            for line in p.stderr:
                events.append((time.monotonic() - t0, line.rstrip()))
                if a.stop_at and a.stop_at in line:
                    stopped.set()
                sys.stderr.write(line)

        th = threading.Thread(target=read_stderr, daemon=True)
        th.start()
        peak, peak_t, peak_roll, peak_maps = 0, 0.0, {}, {}
        series = []
        while p.poll() is None:
            try:
                r = rollup(p.pid)
                rss = r.get("Rss", 0)
                t = time.monotonic() - t0
                series.append((t, rss, r.get("Anonymous", 0)))
                if rss > peak and not stopped.is_set():
                    peak, peak_t, peak_roll = rss, t, r
                    peak_maps = per_mapping(p.pid)
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                pass
            time.sleep(a.interval)
        th.join(timeout=5)
    cats = {}
    for name, kb in peak_maps.items():
        cats[category(name)] = cats.get(category(name), 0) + kb
    mb = lambda kb: kb / 1024.0
    print(f"exit {p.returncode}; {len(series)} samples; peak RSS {mb(peak):.0f} MB at {peak_t:.1f} s "
          f"(anonymous {mb(peak_roll.get('Anonymous', 0)):.0f} MB, file-backed "
          f"{mb(peak - peak_roll.get('Anonymous', 0)):.0f} MB)")
    print("at the peak, by mapping category (smaps; sampled at the last new high):")
    for c, kb in sorted(cats.items(), key=lambda x: -x[1]):
        print(f"  {c:40s} {mb(kb):7.1f} MB")
    files = sorted(((kb, n) for n, kb in peak_maps.items() if category(n) not in ("anonymous", "shared libraries")),
                   reverse=True)[:6]
    for kb, n in files:
        print(f"    {mb(kb):7.1f} MB  {n}")
    done = [e for e in events if e[0] <= peak_t]
    print("stderr lines before the peak:", "; ".join(e[1] for e in done[-3:]) or "(none)")
    # The resident set over time, coarsely: the maximum in each tenth of the run.
    if series:
        n = len(series)
        print("RSS max per tenth of the run (MB, anonymous in brackets):",
              " ".join(f"{mb(max(s[1] for s in series[i * n // 10:(i + 1) * n // 10] or [(0, 0, 0)])):.0f}"
                       f"({mb(max(s[2] for s in series[i * n // 10:(i + 1) * n // 10] or [(0, 0, 0)])):.0f})"
                       for i in range(10)))
    for t, line in events:
        if line.startswith("kokoro-bench:"):
            print(f"  {t:7.1f} s  {line}")
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
