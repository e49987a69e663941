# The ledger keeps what it was given (issue 22): a perf script text is
# imported and added to a ledger (its collection's end unknown: end_ns 0,
# the text has no day), then the agent runs against the same ledger with
# retention (its first collection deletes what ended before the limit).
# The imported rows are all still there and bill as before; a collection
# that ended long ago (written here by hand) is gone, so retention ran.
. "$(dirname "$0")/../lib.sh"
# perf's path: it needs steal measured, which the BPF collector (the
# default) leaves unknown where the hypervisor writes no steal clock, as
# on this project's machines; the collector's test is live_source_bpf.sh.
export CPULEDGER_SOURCE=perf
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
need_perf
L=$TMP/l.db
"$CL" import perf-script "$FIX/perf-script-sched.txt" -o "$TMP/imp.rec" 2>/dev/null ||
	fail "import"
"$CL" ledger add --ledger "$L" "$TMP/imp.rec" 2>/dev/null || fail "ledger add"
[ "$(sqlite3 "$L" 'SELECT count(*) FROM collections WHERE end_ns = 0')" = 1 ] ||
	fail "the import's collection does not have end_ns 0"
"$CL" bill --ledger "$L" --by command --format csv --until @1 >"$TMP/before.csv" || fail "bill before"
rows=$(sqlite3 "$L" 'SELECT count(*) FROM usage')
# a collection that ended in 1970, with a row of its own
sqlite3 "$L" "INSERT INTO collections (collected_ns, reason, start_ns, end_ns, host, boot_id,
	seq, added_ns) VALUES (1, 'interval', 0, 1000, 'old', 'b', 0, 1000);
	INSERT INTO tasks (host, boot_id, pid, tid, command) VALUES ('old', 'b', 9, 9, 'ancient');
	INSERT INTO usage VALUES ((SELECT id FROM collections WHERE host = 'old'),
	(SELECT id FROM tasks WHERE command = 'ancient'), 'program', 5000000000, NULL, 5);"
[ "$(sqlite3 "$L" "SELECT count(*) FROM usage u JOIN tasks t ON t.id = u.task_id
	WHERE t.command = 'ancient'")" = 1 ] || fail "the old collection's row was not written"

for retain in 90 0.5; do
	run "$CL" agent --ledger "$L" --duration 2 --interval 1 --retain "$retain" -F 49
	[ "$(status)" = 0 ] || fail "agent --retain $retain: exit $(status): $(cat "$TMP/err")"
done
[ "$(sqlite3 "$L" "SELECT count(*) FROM tasks WHERE command = 'ancient'")" = 0 ] ||
	fail "retention did not run: the collection that ended in 1970 is still there"
[ "$(sqlite3 "$L" "SELECT count(*) FROM collections WHERE reason != 'import'")" -gt 0 ] ||
	fail "the agent added no collection"
kept=$(sqlite3 "$L" 'SELECT count(*) FROM usage u JOIN collections c ON c.id = u.collection_id
	WHERE c.end_ns = 0')
[ "$kept" = "$rows" ] || fail "retention deleted imported rows: $kept of $rows left"
# every collection added now says how its steal was found (docs/ledger.md)
[ "$(sqlite3 "$L" "SELECT count(*) FROM collections WHERE added_ns IS NOT NULL AND
	(steal_source IS NULL OR steal_source NOT GLOB '*(*)*')")" = 0 ] ||
	fail "a collection without its steal source: $(sqlite3 "$L" 'SELECT reason, steal_source FROM collections')"
# the bill of the import alone is what it was
"$CL" bill --ledger "$L" --by command --format csv --until @1 >"$TMP/after.csv" || fail "bill after"
diff -u "$TMP/before.csv" "$TMP/after.csv" || fail "the imported rows bill differently after retention"
echo "imported rows kept: $kept of $rows after the agent's retention (90 and 0.5 days); the 1970 collection deleted"
