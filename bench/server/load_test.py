#!/usr/bin/env python3
"""Load test of kokoro-server: N concurrent streaming clients over loopback, for N in a list.

Starts its own kokoro-server on free loopback ports (never another address), sends bounded traffic (a
fixed number of requests per client, a deadline per request and per level) and stops it. Standard library
only. Per level: each client's TTFA (request sent -> first audio byte), whether its audio arrived faster
than real time (a player starting at the first byte never runs dry; the worst lateness), RTF (first byte
to last / audio seconds), HTTP errors (503s counted apart) and the server's RSS.

  bench/server/load_test.py                          # 1 2 4 8 16 clients, 2 rounds each
  bench/server/load_test.py --clients 4 --rounds 5 --json out.json
  bench/server/load_test.py --soak 1800 --clients 4  # 30-min soak: RSS sampled every 10 s
  bench/server/load_test.py --ttfa                   # short sentences: server TTFA beside kokoro-bench's
"""
import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RATE = 24000
TEXT = ("The committee met on Tuesday to review the budget for the coming year. After a long discussion, "
        "the members agreed to fund the new library and to repair the old bridge before winter. "
        "Everyone left the meeting hopeful that the town would finally see some progress.")


def start_server(binary, extra):
    args = [binary, "--host", "127.0.0.1", "--http-port", "0", "--no-wyoming"] + extra
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    lines = []
    while time.time() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if m:
            return proc, int(m.group(1))
    proc.kill()
    raise SystemExit("kokoro-server did not start:\n" + "".join(lines))


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def speak(port, text, fmt="pcm", timeout=120.0):
    """One streamed request; returns a dict of what the client saw."""
    body = json.dumps({"model": "kokoro", "input": text, "voice": "af_heart", "response_format": fmt,
                       "stream": True}).encode()
    result = {"status": 0, "ttfa": None, "audio_s": 0.0, "late_s": 0.0, "underruns": 0, "wall_s": 0.0}
    t0 = time.perf_counter()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 10)
    except (OSError, asyncio.TimeoutError) as e:
        result["error"] = f"connect: {e}"
        return result
    try:
        writer.write(b"POST /v1/audio/speech HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        await writer.drain()
        t_sent = time.perf_counter()
        status_line = await asyncio.wait_for(reader.readline(), timeout)
        result["status"] = int(status_line.split()[1]) if status_line else 0
        headers = {}
        while True:
            line = await asyncio.wait_for(reader.readline(), timeout)
            if line in (b"\r\n", b""):
                break
            k, _, v = line.decode().partition(":")
            headers[k.strip().lower()] = v.strip()
        if result["status"] != 200:
            return result
        received = 0  # bytes of s16 audio
        first = None
        while True:
            size_line = await asyncio.wait_for(reader.readline(), timeout)
            size = int(size_line.strip() or b"0", 16)
            if size == 0:
                await reader.readline()
                break
            chunk = await asyncio.wait_for(reader.readexactly(size + 2), timeout)
            now = time.perf_counter()
            if first is None:
                first = now
                result["ttfa"] = now - t_sent
            else:
                # A player started at the first byte has played (now - first) s; it holds received/2/RATE s.
                late = (now - first) - received / 2 / RATE
                if late > 0.02:
                    result["underruns"] += 1
                    first += late  # it waits for the data, then plays on
                result["late_s"] = max(result["late_s"], late)
            received += size
        result["audio_s"] = received / 2 / RATE
        result["wall_s"] = time.perf_counter() - (first or t0)
    except (OSError, asyncio.TimeoutError, ValueError, asyncio.IncompleteReadError) as e:
        result["error"] = f"{type(e).__name__}: {e}"
    finally:
        writer.close()
    return result


def pct(values, q):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


async def level(port, pid, clients, rounds, text):
    samples = []
    results = []

    async def client(i):
        for _ in range(rounds):
            results.append(dict(await speak(port, text), client=i))

    async def sample_rss():
        while True:
            samples.append(rss_mb(pid))
            await asyncio.sleep(0.5)

    sampler = asyncio.create_task(sample_rss())
    t0 = time.perf_counter()
    await asyncio.wait_for(asyncio.gather(*(client(i) for i in range(clients))), 600)
    sampler.cancel()
    ok = [r for r in results if r["status"] == 200 and "error" not in r]
    ttfa = [r["ttfa"] for r in ok if r["ttfa"] is not None]
    return {
        "clients": clients, "requests": len(results), "ok": len(ok),
        "rejected_503": sum(r["status"] == 503 for r in results),
        "errors": sum(r["status"] not in (200, 503) or "error" in r for r in results),
        "ttfa_p50_ms": 1000 * pct(ttfa, 0.5) if ttfa else None, "ttfa_p95_ms": 1000 * pct(ttfa, 0.95) if ttfa else None,
        "realtime_streams": sum(r["underruns"] == 0 for r in ok),
        "worst_late_ms": 1000 * max((r["late_s"] for r in ok), default=0),
        "rtf_mean": statistics.mean(r["wall_s"] / r["audio_s"] for r in ok if r["audio_s"] > 0) if ok else None,
        "audio_s_per_request": statistics.mean(r["audio_s"] for r in ok) if ok else 0,
        "rss_mb_max": max(samples, default=0), "seconds": time.perf_counter() - t0,
        "error_detail": sorted({r.get("error", str(r["status"])) for r in results if r["status"] not in (200, 503) or "error" in r}),
    }


def print_level(r):
    f = lambda v, fmt: (fmt % v) if v is not None else "-"
    print(f"{r['clients']:>3} clients: {r['ok']}/{r['requests']} ok, 503: {r['rejected_503']}, errors: {r['errors']}, "
          f"TTFA p50/p95 {f(r['ttfa_p50_ms'], '%.0f')}/{f(r['ttfa_p95_ms'], '%.0f')} ms, "
          f"real-time {r['realtime_streams']}/{r['ok']} (worst late {r['worst_late_ms']:.0f} ms), "
          f"RTF {f(r['rtf_mean'], '%.3f')}, RSS max {r['rss_mb_max']:.0f} MB", flush=True)


def load_avg():
    return os.getloadavg()


async def ttfa_compare(port, repeat):
    sentences = [l.strip() for l in (ROOT / "bench/corpus/short.txt").read_text().splitlines() if l.strip()]
    ttfa = []
    for _ in range(repeat):
        for s in sentences:
            r = await speak(port, s)
            if r["ttfa"] is not None:
                ttfa.append(r["ttfa"])
    return ttfa


def kokoro_bench_ttfa(binary, repeat):
    out = subprocess.run([binary, "--mode", "slice", "--corpus", "short", "--repeat", str(repeat), "--json", "--no-peak"],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    data = json.loads(out)
    return data


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", default=str(ROOT / "build/bin/kokoro-server"))
    ap.add_argument("--bench", default=str(ROOT / "build/bin/kokoro-bench"))
    ap.add_argument("--clients", default="1,2,4,8,16")
    ap.add_argument("--rounds", type=int, default=2, help="requests per client per level")
    ap.add_argument("--max-sessions", type=int, default=16)
    ap.add_argument("--soak", type=float, default=0, help="seconds of soak at the first --clients value")
    ap.add_argument("--ttfa", action="store_true", help="short-sentence TTFA over HTTP beside kokoro-bench's")
    ap.add_argument("--repeat", type=int, default=3, help="--ttfa: passes over the short corpus")
    ap.add_argument("--text-file", help="each request says this file's first text line (default: a 3-sentence paragraph)")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    text = TEXT
    if args.text_file:  # its first line that is not blank or a '#' comment (as bench/corpus files are read)
        text = next(l.strip() for l in Path(args.text_file).read_text().splitlines() if l.strip() and not l.startswith("#"))

    proc, port = start_server(args.server, ["--max-sessions", str(args.max_sessions)])
    report = {"load_avg_start": load_avg(), "levels": []}
    try:
        if args.ttfa:
            before = kokoro_bench_ttfa(args.bench, args.repeat)
            http = asyncio.run(ttfa_compare(port, args.repeat))
            after = kokoro_bench_ttfa(args.bench, args.repeat)
            report["ttfa"] = {"http_ms": [1000 * t for t in http], "kokoro_bench_before": before, "kokoro_bench_after": after}
            print(f"short sentences (bench/corpus/short.txt x {args.repeat}), TTFA p50 / p95 ms:", flush=True)
            for name, b in (("kokoro-bench (engine, before)", before), ("kokoro-bench (engine, after)", after)):
                print(f"  {name:32s} {b['ttfa_ms_p50']:7.1f} / {b['ttfa_ms_p95']:7.1f}   load {b['loadavg_1m'][0]:.2f}")
            print(f"  {'kokoro-server over HTTP (pcm)':32s} {1000 * pct(http, 0.5):7.1f} / {1000 * pct(http, 0.95):7.1f}   "
                  f"({len(http)} requests, load {load_avg()[0]:.2f})", flush=True)
        elif args.soak > 0:
            clients = int(args.clients.split(",")[0])
            t_end = time.time() + args.soak
            rss = []
            while time.time() < t_end:
                r = asyncio.run(level(port, proc.pid, clients, 1, text))
                rss.append((round(time.time() - (t_end - args.soak)), rss_mb(proc.pid)))
                report["levels"].append(r)
                print_level(r)
            report["soak_rss_mb"] = rss
            print(f"soak: RSS first {rss[0][1]:.0f} MB, last {rss[-1][1]:.0f} MB, max {max(v for _, v in rss):.0f} MB "
                  f"over {len(rss)} rounds", flush=True)
        else:
            asyncio.run(speak(port, "Warm up."))
            for n in [int(c) for c in args.clients.split(",")]:
                r = asyncio.run(level(port, proc.pid, n, args.rounds, text))
                report["levels"].append(r)
                print_level(r)
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    report["load_avg_end"] = load_avg()
    print(f"load average at start {report['load_avg_start'][0]:.2f}, at end {report['load_avg_end'][0]:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
