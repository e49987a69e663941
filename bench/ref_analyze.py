#!/usr/bin/env python3
"""Reference implementation of `cpuledger analyze`, written plainly from the
specification in docs/sampling-data.md and docs/analyze.md, for two uses:
the benchmark's peer (bench/analyze.sh) and a differential test
(tests/shell/reference.sh) that compares its JSON with cpuledger's.

It trusts its input (no error reporting) and streams it: state is kept per
stream and per program, never per sample.

usage: ref_analyze.py [--method M] [--by K] [--interval-ns N] [--timestamps] FILE
"""
import argparse
import csv
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--method", default="preceding",
                    choices=["preceding", "bracketed", "ratio"])
    ap.add_argument("--by", default="thread",
                    choices=["process", "thread", "function"])
    ap.add_argument("--interval-ns", type=int, default=1000000)
    ap.add_argument("--timestamps", action="store_true")
    ap.add_argument("file")
    args = ap.parse_args()
    interval = args.interval_ns

    # program key (vm, pid, tid, function) -> [samples, steal_samples, run_ns, steal_ns]
    programs = {}
    totals = {"run_ns": 0, "steal_ns": 0, "idle_ns": 0,
              "samples": 0, "steal_samples": 0, "idle_samples": 0}
    # stream (vm, vcpu) -> {"held": (state, prog, time) or None,
    #                       "before": prog or None, "run": [n, ns]}
    streams = {}

    def close_run(st, after):
        n, ns = st["run"]
        if n == 0:
            return
        owner = st["before"]
        if args.method == "bracketed" and after != owner:
            owner = None
        if owner is not None:
            programs[owner][1] += n
            programs[owner][3] += ns
        st["run"] = [0, 0]

    def account(st, sample, duration):
        state, prog, _ = sample
        if state == "run":
            p = programs[prog]
            p[0] += 1
            p[2] += duration
            totals["samples"] += 1
            totals["run_ns"] += duration
            close_run(st, prog)
            st["before"] = prog
        elif state == "idle":
            totals["idle_samples"] += 1
            totals["idle_ns"] += duration
            close_run(st, None)
            st["before"] = None
        else:
            totals["steal_samples"] += 1
            totals["steal_ns"] += duration
            st["run"][0] += 1
            st["run"][1] += duration

    f = sys.stdin if args.file == "-" else open(args.file, newline="", encoding="utf-8")
    reader = csv.reader(f)
    next(reader)  # header
    for row in reader:
        if not row:
            continue
        vm, vcpu, time_ns, pid, tid, function, state = row
        t = int(time_ns)
        prog = None
        if state == "run":
            prog = (vm, int(pid), int(tid), function)
            if prog not in programs:
                programs[prog] = [0, 0, 0, 0]
        st = streams.setdefault((vm, int(vcpu)), {"held": None, "before": None, "run": [0, 0]})
        if st["held"] is not None:
            duration = t - st["held"][2] if args.timestamps else interval
            account(st, st["held"], duration)
        st["held"] = (state, prog, t)
    for st in streams.values():
        if st["held"] is not None:
            account(st, st["held"], interval)
        close_run(st, None)

    # Group by the key's level, then apply the method per group.
    groups = {}
    for (vm, pid, tid, function), v in programs.items():
        key = (vm, pid) if args.by == "process" else \
              (vm, pid, tid) if args.by == "thread" else (vm, pid, tid, function)
        g = groups.setdefault(key, [0, 0, 0, 0])
        for i in range(4):
            g[i] += v[i]
    rows = []
    attributed = 0
    for key, (samples, steal_samples, run_ns, labelled_ns) in groups.items():
        apparent = run_ns + labelled_ns
        if args.method == "ratio":
            steal = steal_samples * apparent // (samples + steal_samples)
        else:
            steal = labelled_ns
        attributed += steal
        row = {"vm": key[0], "pid": key[1]}
        if args.by != "process":
            row["tid"] = key[2]
        if args.by == "function":
            row["function"] = key[3]
        row.update(samples=samples, steal_samples=steal_samples,
                   cpu_ns=apparent - steal, steal_ns=steal,
                   apparent_ns=apparent, corrected_ns=apparent - steal)
        rows.append((key, row))
    # Largest apparent time first; ties by key, strings by code point.
    rows.sort(key=lambda kr: (-kr[1]["apparent_ns"], kr[0]))

    out = {
        "version": 2, "method": args.method, "by": args.by,
        "interval_ns": interval, "timestamps": args.timestamps,
        "totals": {
            "run_ns": totals["run_ns"], "steal_ns": totals["steal_ns"],
            "idle_ns": totals["idle_ns"], "attributed_steal_ns": attributed,
            "unattributed_steal_ns": totals["steal_ns"] - attributed,
            "samples": totals["samples"], "steal_samples": totals["steal_samples"],
            "idle_samples": totals["idle_samples"], "streams": len(streams),
            "programs": len(programs),
        },
        "rows": [r for _, r in rows],
    }
    json.dump(out, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
