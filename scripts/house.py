#!/usr/bin/env python3
"""The house rules a reader can check by machine (issue 24).

Reads src/ as text and prints each breach as FILE:LINE: what, then a count;
exits 1 when there is any, 0 when there is none. The rules:

- folders: no two folders under src/ include each other, directly or
  round a longer loop (the folder-level include graph has no cycle);
- files: no .c files call each other in a loop (a file "calls" another
  when it names a function the other defines and does not make static),
  and no headers include each other;
- functions: none over 80 lines, from the line of its opening brace to the
  line of its closing brace;
- one second: 10^9 nanoseconds is written as NSEC_PER_SEC, and the number
  itself only in src/core/units.h (in any spelling: 1000000000, with a
  suffix, 1e9);
- banned.h: every .c file includes core/banned.h;
- folders: each has a README.md saying what it owns (docs/architecture.md).

usage: scripts/house.py [SRC_DIR]   (default: src beside this script)
"""
import os
import re
import sys

MAX_LINES = 80
UNITS = os.path.join("core", "units.h")  # the one home of 10^9
ONE_SECOND = re.compile(r"(?<![\w.])(1000000000(?:\.0*)?[uUlL]*|1[eE]\+?0*9[lLfF]?)(?![\w.])")
IDENT = re.compile(r"[A-Za-z_]\w*")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else"}


def strip(text, keep_strings=False):
    """The text with comments (and string and character literals unless
    keep_strings) blanked, newlines kept so line numbers hold."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(text[i:j] if keep_strings else c + " " * (j - i - 2) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sources(src):
    for d, dirs, files in os.walk(src):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")) and not f.endswith(".bpf.c"):
                yield os.path.relpath(os.path.join(d, f), src)


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def loop_path(graph, comp):
    """One loop through the first node of comp, as a list of nodes."""
    start, members = comp[0], set(comp)
    prev, todo = {start: None}, [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph.get(v, ())):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in members and w not in prev:
                prev[w] = v
                todo.append(w)
    return comp


class House:
    def __init__(self, src):
        self.src = src
        self.files = list(sources(src))
        self.text = {}
        for f in self.files:
            with open(os.path.join(src, f), encoding="utf-8", errors="replace") as fh:
                self.text[f] = fh.read()
        self.bad = []

    def say(self, f, line, what):
        self.bad.append((os.path.join(os.path.basename(self.src.rstrip("/")) or "src", f), line, what))

    def includes(self, f):
        """(line, included file relative to src) for each quoted include."""
        for m in INCLUDE.finditer(self.text[f]):
            target = os.path.normpath(os.path.join(os.path.dirname(f), m.group(1)))
            if target in self.text:
                yield self.text[f].count("\n", 0, m.start()) + 1, target

    def check_folders(self):
        graph, where = {}, {}
        for f in self.files:
            a = f.split(os.sep)[0]
            for line, t in self.includes(f):
                b = t.split(os.sep)[0]
                if a != b and os.sep in f:
                    graph.setdefault(a, set()).add(b)
                    where.setdefault((a, b), (f, line, t))
        for comp in cycles(graph):
            path = loop_path(graph, comp)
            for a, b in zip(path, path[1:]):
                f, line, t = where[(a, b)]
                self.say(f, line, "folders include each other (%s): %s/ includes %s/ here (%s)"
                         % (" -> ".join(p + "/" for p in path), a, b, t))

    def check_headers(self):
        graph, where = {}, {}
        for f in self.files:
            if f.endswith(".h"):
                for line, t in self.includes(f):
                    graph.setdefault(f, set()).add(t)
                    where[(f, t)] = line
        for comp in cycles(graph):
            path = loop_path(graph, comp)
            for a, b in zip(path, path[1:]):
                self.say(a, where[(a, b)], "headers include each other (%s)" % " -> ".join(path))

    def defined(self):
        """name -> file for every function a .c file defines and exports."""
        defs = {}
        for f in self.files:
            if not f.endswith(".c"):
                continue
            for m in re.finditer(r"^(?!static\b)[A-Za-z_][^;{}()=#]*?\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\n?\{",
                                 strip(self.text[f]), re.M):
                if m.group(1) not in KEYWORDS:
                    defs.setdefault(m.group(1), f)
        return defs

    def check_calls(self):
        defs = self.defined()
        graph, where = {}, {}
        for f in self.files:
            if not f.endswith(".c"):
                continue
            body = strip(self.text[f])
            for m in IDENT.finditer(body):
                t = defs.get(m.group(0))
                if t and t != f:
                    graph.setdefault(f, set()).add(t)
                    where.setdefault((f, t), (body.count("\n", 0, m.start()) + 1, m.group(0)))
        for comp in cycles(graph):
            path = loop_path(graph, comp)
            for a, b in zip(path, path[1:]):
                line, name = where[(a, b)]
                self.say(a, line, "files call each other in a loop (%s): %s calls %s()"
                         % (" -> ".join(path), a, name))

    def check_lengths(self):
        for f in self.files:
            lines = strip(self.text[f]).split("\n")
            start = None
            for i, line in enumerate(lines):
                if line.startswith("{") and start is None:
                    start = i
                elif line.startswith("}") and start is not None:
                    n = i - start + 1
                    if n > MAX_LINES and self.is_function(lines, start):
                        self.say(f, start + 1, "function '%s' is %d lines (at most %d)"
                                 % (self.name(lines, start), n, MAX_LINES))
                    start = None

    @staticmethod
    def head(lines, start):
        """The lines before an opening brace back to the previous
        statement, declaration or blank line: a function's declarator."""
        i = start
        while i > 0 and lines[i - 1].strip() and not lines[i - 1].rstrip().endswith((";", "}", "{")):
            i -= 1
        return " ".join(lines[i:start])

    def is_function(self, lines, start):
        head = self.head(lines, start).rstrip()
        return head.endswith(")") and "=" not in head

    def name(self, lines, start):
        names = re.findall(r"([A-Za-z_]\w*)\s*\(", self.head(lines, start))
        return names[0] if names else "?"

    def check_seconds(self):
        for f in self.files:
            if f == UNITS:
                continue
            body = strip(self.text[f], keep_strings=True)
            for m in ONE_SECOND.finditer(body):
                self.say(f, body.count("\n", 0, m.start()) + 1,
                         "one second in ns written '%s': use NSEC_PER_SEC (%s)" % (m.group(0), UNITS))

    def check_banned(self):
        for f in self.files:
            if f.endswith(".c"):
                ok = any(t == os.path.join("core", "banned.h") for _, t in self.includes(f))
                if not ok:
                    self.say(f, 1, "does not include core/banned.h")

    def check_readmes(self):
        for d in sorted(os.listdir(self.src)):
            if os.path.isdir(os.path.join(self.src, d)) and \
               not os.path.isfile(os.path.join(self.src, d, "README.md")):
                self.say(os.path.join(d, "README.md"), 1,
                         "no README.md: say what the folder owns (docs/architecture.md)")

    def run(self):
        self.check_folders()
        self.check_headers()
        self.check_calls()
        self.check_lengths()
        self.check_seconds()
        self.check_banned()
        self.check_readmes()
        for f, line, what in sorted(set(self.bad)):
            print("%s:%d: %s" % (f, line, what))
        print("house: %d breaches in %d files" % (len(set(self.bad)), len(self.files)))
        return 1 if self.bad else 0


def main(argv):
    src = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    if len(argv) > 2 or not os.path.isdir(src):
        print("usage: scripts/house.py [SRC_DIR]", file=sys.stderr)
        return 2
    return House(os.path.normpath(src)).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
