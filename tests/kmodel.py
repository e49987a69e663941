#!/usr/bin/env python3
"""
kmodel: a guest's scheduler accounting, simulated, written as the text of
`perf script --ns -F +pid` (cpu-clock samples, sched:sched_switch and
sched:sched_stat_runtime), with the truth per thread beside it.

The kernel facts it models (docs/record.md, "The kernel model"):
- each CPU runs its own threads in stints, from a sched_switch in to one
  out; between them it may idle (NOHZ: no tick, no runtime event);
- the switch path takes a few microseconds no runtime counts (the bias);
- steal comes in episodes while a thread holds the CPU (a halted idle vCPU
  wants no CPU, so it is not stolen from);
- sched_stat_runtime is raised at each scheduler tick (HZ) and at switch
  out, its runtime the time since the last one: on the task's clock, which
  excludes steal with PARAVIRT_TIME_ACCOUNTING and includes it without, and
  excludes hard and soft IRQ time with IRQ_TIME_ACCOUNTING;
- interrupts come at random and last microseconds;
- cpu-clock samples fall on a per-CPU grid of 1 ms; a vCPU the host has
  descheduled takes no timer interrupt, so the grid points an episode
  covers fire once, when it runs again (the hrtimer is forwarded); a tick
  in an episode likewise fires at its end.

Truth: a thread's cpu is the time it executed (with IRQ time where the
kernel charges it to the task), its steal the episodes inside its stints.

usage: kmodel.py OUT.txt TRUTH.json --steal SHARE --episode-ms MS
                 [--accounting paravirt|plain|paravirt+irq] [--hz 250]
                 [--seconds 10] [--seed 1] [--proc-stat PREFIX]
       kmodel.py --check REPORT.json TRUTH.json STEAL_PCT STEAL_MS CPU_PCT CPU_MS [GAPS]
   the second form compares `report --by thread --format json` with the
   truth: prints the worst errors and exits 1 when a thread's steal is off
   by more than STEAL_PCT % and STEAL_MS ms, or its cpu by more than
   CPU_PCT % and CPU_MS ms. With GAPS 1 (steal taken out of a runtime that
   holds it) a thread's cpu may be off by as much as its steal may; GAPS 2
   also allows three binomial deviations of the grid points counted.
"""
import argparse
import json
import random

US = 1000
MS = 1000000
INTERVAL = MS
T0 = 5000 * 10**9


class Thread:
    def __init__(self, pid, tid, comm, cpu, work, sleep):
        self.pid, self.tid, self.comm, self.cpu = pid, tid, comm, cpu
        self.work = work        # (lo, hi) ns of CPU a stint wants
        self.sleep = sleep      # (lo, hi) ns of idle after it
        self.cpu_ns = 0
        self.steal_ns = 0
        self.stints = 0


def threads_of(ncpus):
    """Per CPU: a long-running thread, one of sub-millisecond stints, and a
    tiny one of tens of microseconds; two processes."""
    out = []
    for c in range(ncpus):
        out.append(Thread(1000, 1000 + 10 * c, "app", c, (5 * MS, 60 * MS), (0, 2 * MS)))
        out.append(Thread(1000, 1001 + 10 * c, "app", c, (100 * US, 900 * US), (0, 300 * US)))
        out.append(Thread(2000, 2000 + 10 * c, "tiny", c, (20 * US, 120 * US), (0, 200 * US)))
    return out


class Cpu:
    """One CPU's timeline, written as lines with their times."""

    def __init__(self, n, args, rng, out):
        self.n, self.a, self.rng, self.out = n, args, rng, out
        self.t = T0 + rng.randrange(0, 50 * US)
        self.grid = T0 + rng.randrange(0, INTERVAL)     # next grid point
        self.tick_ns = 10**9 // args.hz
        self.tick = T0 + rng.randrange(0, self.tick_ns)  # next tick
        self.cur = None             # thread on the CPU, None: idle
        self.next_steal = self.draw_run()
        self.next_irq = self.draw_irq()

    # -- random draws --
    def draw_run(self):
        """CPU time the vCPU runs before its next steal episode."""
        p, L = self.a.steal, self.a.episode_ms * MS
        if p <= 0:
            return 1 << 62
        return max(1, int(self.rng.expovariate(p / ((1 - p) * L))))

    def draw_episode(self):
        L = self.a.episode_ms * MS
        return max(1000, int(self.rng.uniform(0.5 * L, 1.5 * L)))

    def draw_irq(self):
        return int(self.rng.expovariate(1.0 / (1 * MS)))

    # -- lines --
    def line(self, t, th, text):
        comm, pid, tid = ("swapper", 0, 0) if th is None else (th.comm, th.pid, th.tid)
        self.out.append((t, "%16s %6d/%-6d [%03d] %d.%09d: %s" % (
            comm, pid, tid, self.n, t // 10**9, t % 10**9, text)))

    def sample(self, t, th):
        if th is None:
            fn, dso, ip = "default_idle", "[kernel.kallsyms]", 0xffffffff81a0b4c0
        else:
            k = self.rng.randrange(3)
            fn = "%s_work_%d" % (th.comm, k)
            dso, ip = "/usr/bin/" + th.comm, 0x401000 + 0x100 * k
        self.line(t, th, "%10d cpu-clock: %16x %s+0x10 (%s)" % (INTERVAL, ip, fn, dso))

    def runtime(self, t, th, ns):
        self.line(t, th, "sched:sched_stat_runtime: comm=%s pid=%d runtime=%d [ns]" %
                  (th.comm, th.tid, ns))

    def switch(self, t, prev, nxt):
        def who(th):
            return ("swapper/%d" % self.n, 0, 120) if th is None else (th.comm, th.tid, 120)
        pc, pp, pr = who(prev)
        nc, np_, nr = who(nxt)
        self.line(t, prev, "sched:sched_switch: prev_comm=%s prev_pid=%d prev_prio=%d "
                  "prev_state=%s ==> next_comm=%s next_pid=%d next_prio=%d" %
                  (pc, pp, pr, "S" if prev is not None else "R", nc, np_, nr))

    # -- time passing --
    def grid_upto(self, t, th):
        """Samples of grid points up to t, the CPU running th throughout."""
        while self.grid <= t:
            self.sample(self.grid + self.rng.randrange(0, 2 * US), th)
            self.grid += INTERVAL

    def skip_grid(self, resume, th):
        """The grid points an episode covered fire once, at its end."""
        if self.grid <= resume:
            self.sample(resume + self.rng.randrange(1 * US, 3 * US), th)
            while self.grid <= resume:
                self.grid += INTERVAL

    def idle(self, ns):
        end = self.t + ns
        self.grid_upto(end, None)
        self.t = end
        # no tick while idle (NOHZ): the next comes on its grid after
        while self.tick <= self.t:
            self.tick += self.tick_ns

    def run(self, th, work):
        """th executes `work` ns; returns the runtime not yet raised."""
        acc = self.a.accounting
        pending = 0         # runtime since the last event, as the kernel counts
        while self.tick <= self.t:  # one in the switch path: nothing to raise
            self.tick += self.tick_ns
        while work > 0:
            step = min(work, self.next_steal, self.next_irq)
            # ticks and grid points inside this step of execution
            end = self.t + step
            while self.tick <= end or self.grid <= end:
                if self.grid <= self.tick:
                    self.sample(self.grid + self.rng.randrange(0, 2 * US), th)
                    self.grid += INTERVAL
                else:
                    pending += self.tick - self.t
                    work -= self.tick - self.t
                    self.next_steal -= self.tick - self.t
                    self.next_irq -= self.tick - self.t
                    th.cpu_ns += self.tick - self.t
                    step -= self.tick - self.t
                    self.t = self.tick
                    self.runtime(self.t, th, pending)
                    pending = 0
                    self.tick += self.tick_ns
            self.t = end
            pending += step
            th.cpu_ns += step
            work -= step
            self.next_steal -= step
            self.next_irq -= step
            if self.next_steal <= 0:
                ep = self.draw_episode()
                th.steal_ns += ep
                self.t += ep
                if acc == "plain":
                    pending += ep       # the task's clock includes steal
                self.skip_grid(self.t, th)
                if self.tick <= self.t:     # the tick fires on resume
                    self.runtime(self.t, th, pending)
                    pending = 0
                    while self.tick <= self.t:
                        self.tick += self.tick_ns
                self.next_steal = self.draw_run()
            if self.next_irq <= 0 and work > 0:
                irq = self.rng.randrange(5 * US, 40 * US)
                self.grid_upto(self.t + irq, th)
                self.t += irq
                if acc != "paravirt+irq":   # else IRQ time is not the task's
                    pending += irq
                    th.cpu_ns += irq
                if self.tick <= self.t:     # a tick during it fires after
                    self.runtime(self.t, th, pending)
                    pending = 0
                    while self.tick <= self.t:
                        self.tick += self.tick_ns
                self.next_irq = self.draw_irq()
        return pending

    def stint(self, th, prev):
        bias_in = self.rng.randrange(1 * US, 3 * US)
        bias_out = self.rng.randrange(1 * US, 4 * US)
        self.switch(self.t, prev, th)
        self.grid_upto(self.t + bias_in, th)
        self.t += bias_in
        pending = self.run(th, self.rng.randrange(*th.work))
        self.runtime(self.t, th, pending)
        self.grid_upto(self.t + bias_out, th)
        self.t += bias_out
        th.stints += 1

    def simulate(self, threads, end):
        mine = [t for t in threads if t.cpu == self.n]
        prev = None
        while self.t < end:
            th = self.rng.choice(mine)
            self.stint(th, prev)
            prev = th
            nap = self.rng.randrange(*th.sleep) if th.sleep[1] else 0
            if nap > 20 * US:
                self.switch(self.t, th, None)
                self.idle(nap)
                prev = None


def check(report, truth, steal_pct, steal_ms, cpu_pct, cpu_ms, gaps=False):
    rows = {r["tid"]: r for r in json.load(open(report))["rows"]}
    worst_s = worst_c = (0.0, 0.0, None)
    bad = []
    for t in json.load(open(truth))["threads"]:
        r = rows.get(t["tid"], {})
        got_s, got_c = r.get("steal_ns") or 0, r.get("cpu_ns", 0)
        ds = abs(got_s - t["steal_ns"])
        ds_pct = 100.0 * ds / t["steal_ns"] if t["steal_ns"] else (0 if not ds else 1e9)
        dc_pct = 100.0 * abs(got_c - t["cpu_ns"]) / t["cpu_ns"]
        if ds / MS > worst_s[1]:
            worst_s = (ds_pct, ds / MS, t["tid"])
        if dc_pct > worst_c[0]:
            worst_c = (dc_pct, 0, t["tid"])
        # counted from sample gaps, a thread's steal is a count of grid
        # points that fell on it: three binomial deviations of that count
        stat = 3 * (t["steal_ns"] / INTERVAL) ** 0.5 * INTERVAL if gaps == 2 else 0
        if ds / MS > steal_ms and ds_pct > steal_pct and ds > stat:
            bad.append("tid %d steal %.3f ms, truth %.3f ms" % (t["tid"], got_s / MS, t["steal_ns"] / MS))
        cpu_tol = max(cpu_pct * t["cpu_ns"] / 100, cpu_ms * MS)
        if gaps:
            cpu_tol = max(cpu_tol, steal_pct * t["steal_ns"] / 100, steal_ms * MS, stat)
        if abs(got_c - t["cpu_ns"]) > cpu_tol:
            bad.append("tid %d cpu %.3f ms, truth %.3f ms" % (t["tid"], got_c / MS, t["cpu_ns"] / MS))
    print("worst steal error %.2f ms (%.1f %%, tid %s); worst cpu error %.2f %% (tid %s)" %
          (worst_s[1], worst_s[0], worst_s[2], worst_c[0], worst_c[2]))
    for b in bad:
        print("  " + b)
    return 1 if bad else 0


def main():
    import sys
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        a = sys.argv[2:]
        sys.exit(check(a[0], a[1], float(a[2]), float(a[3]), float(a[4]), float(a[5]),
                       int(a[6]) if len(a) > 6 else 0))
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("truth")
    ap.add_argument("--steal", type=float, default=0.1)
    ap.add_argument("--episode-ms", type=float, default=1.0)
    ap.add_argument("--accounting", default="paravirt",
                    choices=["paravirt", "plain", "paravirt+irq"])
    ap.add_argument("--hz", type=int, default=250)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--proc-stat", metavar="PREFIX",
                    help="also write PREFIX.start and PREFIX.end, the guest's "
                         "/proc/stat before and after")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    threads = threads_of(a.cpus)
    lines = []
    end = T0 + int(a.seconds * 10**9)
    for c in range(a.cpus):
        Cpu(c, a, rng, lines).simulate(threads, end)
    lines.sort(key=lambda x: x[0])
    with open(a.out, "w") as f:
        f.write("# hostname : kmodel\n")
        for _, text in lines:
            f.write(text + "\n")
    truth = {"accounting": a.accounting, "steal": a.steal, "episode_ms": a.episode_ms,
             "hz": a.hz, "threads": [
                 {"pid": t.pid, "tid": t.tid, "cpu_ns": t.cpu_ns, "steal_ns": t.steal_ns,
                  "stints": t.stints} for t in threads]}
    with open(a.truth, "w") as f:
        json.dump(truth, f, indent=1)
    if a.proc_stat:
        write_proc_stat(a.proc_stat, threads, a.cpus, rng)


def write_proc_stat(prefix, threads, ncpus, rng):
    """The kernel's steal per CPU in USER_HZ ticks (10 ms), as /proc/stat
    prints it: what it counted since boot, floored, before and after."""
    tick = 10 * MS
    since_boot = [rng.randrange(0, 5 * 10**9) for _ in range(ncpus)]
    for name, add in (("start", False), ("end", True)):
        steal = [since_boot[c] + (sum(t.steal_ns for t in threads if t.cpu == c) if add else 0)
                 for c in range(ncpus)]
        with open("%s.%s" % (prefix, name), "w") as f:
            f.write("cpu  0 0 0 0 0 0 0 %d 0 0\n" % sum(s // tick for s in steal))
            for c in range(ncpus):
                f.write("cpu%d 0 0 0 0 0 0 0 %d 0 0\n" % (c, steal[c] // tick))
            f.write("intr 0\nctxt 0\nbtime 0\n")


if __name__ == "__main__":
    main()
