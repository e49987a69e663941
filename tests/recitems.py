#!/usr/bin/env python3
"""
recitems: a cpuledger recording written item by item, for tests that need
a recording no machine would give them (a pid given again, thousands of
short processes). The layout is docs/recording-format.md's: a file header,
then one zstd-compressed block of items (compressed with the zstd command,
as the tests' machines have it), its END item last.

Times are given in milliseconds after the recording's start.

    import recitems
    r = recitems.Recording('source=test\\nhost=h\\n...')
    r.task(100, b'sh')
    r.proc(0, 100, b'sh -c loop', b'/bin/sh')
    r.stint(100, 1, 10)
    r.write('out.rec', end_ms=20)
"""
import os
import struct
import subprocess

START_NS = 10_000_000_000   # the recording's clock at its start
MS = 1_000_000

# item types (docs/recording-format.md)
META, TASK, END, SCHED, TASKEV, PROC = 1, 4, 7, 15, 16, 19
STACK, STACK_SAMPLE = 24, 25
SWITCH, RUNTIME = 1, 2                  # SCHED kinds
FORK, COMM, EXIT = 1, 2, 3              # TASKEV kinds


class Recording:
    def __init__(self, meta, cpus=1):
        """meta: the start META's key=value lines after phase=start; its
        time_ns and cpu lines (cpus of them) are added here."""
        self.items = []
        self.item(META, b'phase=start\n' + meta.encode() + b'time_ns=%d\n' % START_NS +
                  b''.join(b'cpu=%d\n' % c for c in range(cpus)))

    def item(self, kind, payload):
        self.items.append(encode(kind, payload))

    def task(self, pid, comm, tid=None):
        """A thread alive at the start."""
        self.item(TASK, struct.pack('<II', pid, pid if tid is None else tid) + comm)

    def sched(self, kind, ms, a, b, value):
        self.item(SCHED, struct.pack('<IIQIIQ', kind, 0, START_NS + ms * MS, a, b, value))

    def stint(self, tid, start_ms, end_ms):
        """tid on CPU 0 from start_ms to end_ms: switched in, its runtime,
        switched out to idle."""
        self.sched(SWITCH, start_ms, 0, tid, 0)
        self.sched(RUNTIME, end_ms, tid, 0, (end_ms - start_ms) * MS)
        self.sched(SWITCH, end_ms, tid, 0, 0)

    def taskev(self, kind, ms, pid, ppid):
        """A fork or exit of a one-thread process."""
        self.item(TASKEV, struct.pack('<IIQIIIIII', kind, 0, START_NS + ms * MS, pid, pid,
                                      ppid, ppid, 0xffffffff, 0))

    def proc(self, ms, pid, command, exe, uid=1000):
        self.item(PROC, struct.pack('<QIIIIII', START_NS + ms * MS, pid, uid, len(command),
                                    len(exe), 0, 0) + command + exe)

    def write(self, path, end_ms):
        """The end META and END, then the file at path."""
        self.item(META, b'phase=end\ntime_ns=%d\n' % (START_NS + end_ms * MS))
        self.item(END, struct.pack('<Q', len(self.items)))
        write_items(path, self.items)


BLOCK_RAW = 1 << 20     # a block's items, at most (src/format/recording.c)


def encode(kind, payload):
    """An item as a block holds it: type, length, payload, padding."""
    return struct.pack('<II', kind, len(payload)) + payload + b'\0' * (-len(payload) % 8)


def unzstd(z):
    return subprocess.run(['zstd', '-dq', '-c'], input=z, check=True,
                          stdout=subprocess.PIPE).stdout


def zstd(raw):
    # (its size told, so that the frame says it, as the recorder's do)
    return subprocess.run(['zstd', '-q', '-1', '-c', '--stream-size=%d' % len(raw)],
                          input=raw, check=True, stdout=subprocess.PIPE).stdout


def read_items(path):
    """The file's version and its items as (type, payload), END included.
    A version 4 file's STACK_SAMPLE payloads are given with their
    addresses after them, as version 3 holds them (write_items splits
    them off again)."""
    b = open(path, 'rb').read()
    assert b[:8] == b'CPULREC\0', path
    version = struct.unpack('<I', b[8:12])[0]
    items, pos, nframes = [], 16, []
    while pos < len(b):
        if version >= 4:
            _, raw, zlen, alen, azlen, _ = struct.unpack('<6I', b[pos:pos + 24])
            pos += 24
        else:
            _, raw, zlen, _ = struct.unpack('<IIII', b[pos:pos + 16])
            alen = azlen = 0
            pos += 16
        d = unzstd(b[pos:pos + zlen])
        pos += zlen
        addrs = unzstd(b[pos:pos + azlen]) if azlen else b''
        pos += azlen
        at = aat = 0
        while at < len(d):
            kind, n = struct.unpack('<II', d[at:at + 8])
            payload = d[at + 8:at + 8 + n]
            if kind == STACK:
                nframes.append(struct.unpack('<II', payload[:8])[1])
            elif kind == STACK_SAMPLE and version >= 4:
                k = nframes[struct.unpack('<I', payload[12:16])[0]] * 8
                payload += addrs[aat:aat + k]
                aat += k
            items.append((kind, payload))
            at += 8 + n + (-n % 8)
    return version, items


def write_items(path, items, version=2):
    """items (encoded, or (type, payload)) in blocks of up to BLOCK_RAW
    (of items, and of addresses), each compressed with the zstd command,
    at path; version 4 takes STACK_SAMPLE payloads with their addresses
    (read_items') and keeps those apart."""
    blocks, cur, addrs = [], b'', b''
    for it in items:
        if isinstance(it, bytes):
            kind, n = struct.unpack('<II', it[:8])
            it = (kind, it[8:8 + n])
        kind, payload = it
        a = b''
        if version >= 4 and kind == STACK_SAMPLE:
            payload, a = payload[:32], payload[32:]
        it = encode(kind, payload)
        if cur and (len(cur) + len(it) > BLOCK_RAW or len(addrs) + len(a) > BLOCK_RAW):
            blocks.append((cur, addrs))
            cur, addrs = b'', b''
        cur += it
        addrs += a
    blocks.append((cur, addrs))
    out = [b'CPULREC\0' + struct.pack('<II', version, 0)]
    for raw, a in blocks:
        z = zstd(raw)
        if version >= 4:
            az = zstd(a) if a else b''
            out.append(struct.pack('<6I', 0x324b4c42, len(raw), len(z), len(a), len(az), 0) +
                       z + az)
        else:
            out.append(struct.pack('<IIII', 0x314b4c42, len(raw), len(z), 0) + z)
    with open(path + '.tmp', 'wb') as f:
        f.write(b''.join(out))
    os.replace(path + '.tmp', path)
