#!/usr/bin/env python3
"""
many_stacks: `perf script` text of 500 one-thread processes, 60 distinct
call stacks each, 6 frames deep, one cpu-clock sample a stack (30 000
stacks, no scheduler tracepoints: steal unknown), on standard output.
A profile of it is 1.2 MB of packed samples: more than pprof keeps in one
run, in memory (1 MiB) or in the scratch file (256 KB).
"""
t = 100.0
for th in range(500):
    for st in range(60):
        t += 0.0001
        print("w%d %d/%d [000] %.6f: cpu-clock: " % (th, 1000 + th, 1000 + th, t))
        for k in range(6):
            print("\t%x fn_%d_%d (/usr/lib/lib%d.so)" % (0x1000 + k, st, k, th % 7))
        print()
