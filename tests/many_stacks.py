#!/usr/bin/env python3
"""
many_stacks: `perf script` text of 500 one-thread processes, 60 distinct
call stacks each, 6 frames deep, one cpu-clock sample a stack (30 000
stacks, no scheduler tracepoints: steal unknown), on standard output.
A thread's leaves are in three files in turn (its library, another and
the kernel): its stacks are of three accounts, one after another.
A profile of it is 1.2 MB of packed samples: more than pprof keeps in one
run (128 KB).

With --distinct, a thread's functions are its own (fn_THREAD_STACK_FRAME):
30 000 stacks that no two threads share, more than pprof's memo of a
stack's locations holds (8192 slots: stacks collide in them).

With --long-names, functions are named as C++ names are, over 64 bytes
and one set for each of 20 kinds of thread (7 200 names, 0.8 MB): the
profile's long strings, which wait in the scratch file 64 KB at a time,
and each met again in other files (libraries) than the one it was first
met in.
"""
import sys

long_names = "--long-names" in sys.argv[1:]
distinct = "--distinct" in sys.argv[1:]
t = 100.0
for th in range(500):
    for st in range(60):
        t += 0.0001
        print("w%d %d/%d [000] %.6f: cpu-clock: " % (th, 1000 + th, 1000 + th, t))
        for k in range(6):
            fn = "fn_%d_%d_%d" % (th, st, k) if distinct else "fn_%d_%d" % (st, k)
            if long_names:
                fn = ("ns%d::Widget<std::basic_string<char>>::%s(std::vector<int> const&)"
                      " const" % (th % 20, fn))
            dso = "/usr/lib/lib%d.so" % (th % 7)
            if k == 0 and st % 3:
                dso = "/usr/lib/libleaf.so" if st % 3 == 1 else "[kernel.kallsyms]"
            print("\t%x %s (%s)" % (0x1000 + k, fn, dso))
        print()
