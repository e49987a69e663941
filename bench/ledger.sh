#!/usr/bin/env bash
# bench/ledger: collections per second and bytes per task-account row of
# the ledger, beside the sqlite3 shell running the same rows as plain SQL
# (same schema, same transactions: one per collection) on one machine in
# one run. Both files are checkpointed before their size is taken.
#
# usage: bench/ledger.sh [COLLECTIONS] [ROWS]   (default 1000 x 50)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000} rows=${2:-50}
out=bench/out/ledger
mkdir -p "$out"
make -s build/bench/ledger_bench
rm -f "$out"/cl.db* "$out"/sql.db* "$out/inserts.sql"
read -r _ _ cl_s _ < <(build/bench/ledger_bench "$out/cl.db" "$n" "$rows")
sqlite3 "$out/cl.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
cl_bytes=$(stat -c %s "$out/cl.db")

# the peer: the same schema and rows through the sqlite3 shell
sqlite3 "$out/cl.db" .schema | grep -v sqlite_ >"$out/schema.sql"
python3 - "$n" "$rows" >"$out/inserts.sql" <<'PY'
import sys
n, rows = int(sys.argv[1]), int(sys.argv[2])
acc = ["program", "library", "kernel", "crypto"]
print("PRAGMA journal_mode=WAL;")
for i in range(n):
    print("BEGIN IMMEDIATE;")
    print("INSERT INTO collections (collected_ns, reason, start_ns, end_ns, host, boot_id, recording, seq) "
          "VALUES (%d, 'interval', %d, %d, 'bench', 'boot', 'bench-recording', %d);" % (1000 + i, i * 10**9, (i + 1) * 10**9, i))
    for r in range(rows):
        print("INSERT INTO tasks (host, boot_id, pid, tid, uid, command, executable) VALUES "
              "('bench', 'boot', %d, %d, 1000, 'bench command --with arguments', '/usr/bin/bench') "
              "ON CONFLICT DO NOTHING;" % (1000 + r // 4, 1000 + r))
        print("INSERT INTO usage VALUES (last_insert_rowid() * 0 + (SELECT max(id) FROM collections), "
              "(SELECT id FROM tasks WHERE pid = %d AND tid = %d), '%s', %d, %d, %d);" % (1000 + r // 4, 1000 + r, acc[r % 4], 1000000 + r, r, 1 + r % 7))
    print("COMMIT;")
PY
sqlite3 "$out/sql.db" <"$out/schema.sql"
t0=$(date +%s.%N)
sqlite3 "$out/sql.db" <"$out/inserts.sql" >/dev/null
t1=$(date +%s.%N)
sqlite3 "$out/sql.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
sql_bytes=$(stat -c %s "$out/sql.db")
python3 - "$n" "$rows" "$cl_s" "$cl_bytes" "$t0" "$t1" "$sql_bytes" <<'PY' | tee "$out/ledger.txt"
import sys
n, rows, cl_s, cl_b, t0, t1, sql_b = sys.argv[1:]
n, rows, cl_s, cl_b, sql_s, sql_b = int(n), int(rows), float(cl_s), int(cl_b), float(t1) - float(t0), int(sql_b)
print("bench/ledger: %d collections of %d task-account rows, one transaction each" % (n, rows))
print("  cpuledger ledger API: %.0f collections/s, %.1f bytes per row" % (n / cl_s, cl_b / (n * rows)))
print("  sqlite3 shell, same SQL: %.0f collections/s, %.1f bytes per row" % (n / sql_s, sql_b / (n * rows)))
print("ratio cpuledger/sqlite3 shell: speed %.2f, bytes per row %.2f" % (sql_s / cl_s, cl_b / sql_b))
PY
