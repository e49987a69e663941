#!/usr/bin/env python3
# perf script text whose function names differ where folded's sort is
# subtle: one a prefix of another followed by bytes below and above ';',
# names that are the same once made safe (' ' and '_', ';' and ':')
import random, sys
random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 27)
names = ["f", "f.cold", "f+1", "f(int)", "f_g", "f g", "f:g", "f;g", "f0", "fz", "g", "g.part.0", "main", "a", "a b", "a_b", "a-b"]
progs = ["cc1", "cc1 plus", "cc1_plus", "as", "as.x"]
t = 1.0
for i in range(3000):
    prog = random.choice(progs)
    pid = progs.index(prog) + 100
    t += 0.001
    depth = random.randint(1, 5)
    print("%s %d/%d [000] %.6f: %d cpu-clock:" % (prog, pid, pid, t, random.randint(1, 9)))
    for d in range(depth):
        print("\t%x %s+0x1 (/usr/bin/x)" % (0x1000 + d, random.choice(names)))
    print()
# and a program of four lines whose order strcmp decides past a name's
# end: [fixed];f, [fixed];f.cold, [fixed];f.cold;g, [fixed];f;g
for stack in (["f"], ["f.cold"], ["f.cold", "g"], ["f", "g"]):
    t += 0.001
    print("fixed 200/200 [000] %.6f: 1 cpu-clock:" % t)
    for d, name in enumerate(reversed(stack)):	# leaf first
        print("\t%x %s+0x1 (/usr/bin/x)" % (0x1000 + d, name))
    print()
