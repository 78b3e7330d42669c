#!/usr/bin/env bash
# Starts a hot standby (a streaming read replica) of a throwaway test
# server, for the postgres package's standby tests, and prints the
# settings to use, as shell assignments:
#
#   eval "$(postgres/pgtest/standby.sh "$MNEMO_PG_DIR" 55433)"
#   # sets MNEMO_PG_STANDBY_DSN and MNEMO_PG_STANDBY_DIR
#
# PRIMARY_DIR is the directory of a running primary as the project's test
# server tool makes it (DIR/data its data directory, run by the user that
# owns it, listening on 127.0.0.1). The standby is a pg_basebackup -R of
# it in a new directory named like the primary's (mnemo-pg.XXXXXX, so the
# tool that stops the primary stops it too: pg_ctl -D DIR/data stop, then
# rm -rf DIR), streaming from the primary without a replication slot,
# listening on 127.0.0.1:PORT, with application_name NAME (default
# mnemo_standby_PORT) so that a test may name it in
# synchronous_standby_names. It prints the assignments once the standby
# accepts read-only connections and streams; the DSN names the database
# mnemo, as the test server's does. Progress goes to stderr.
set -euo pipefail
primary=${1:?usage: standby.sh PRIMARY_DIR PORT [NAME]}
port=${2:?usage: standby.sh PRIMARY_DIR PORT [NAME]}
name=${3:-mnemo_standby_$port}
log() { echo "pg standby: $*" >&2; }

# The primary's binaries, port and user, from the files its postmaster
# wrote: postmaster.opts starts with the server binary's path, and line 4
# of postmaster.pid is the port.
opts=$(head -n 1 "$primary/data/postmaster.opts")
bin=${opts%% *}
bin=${bin//\"/}
bindir=$(dirname "$bin")
pport=$(sed -n 4p "$primary/data/postmaster.pid")
owner=$(stat -c %U "$primary/data")
as() { runuser -u "$owner" -- "$@"; }
psql_primary() { as "$bindir/psql" -h 127.0.0.1 -p "$pport" -U postgres -d postgres -tAXc "$1"; }

# Replication connections must be allowed from 127.0.0.1 (initdb -A
# trust allows them); wal_level must be replica or logical (the default).
if [ "$(psql_primary "SELECT count(*) FROM pg_hba_file_rules WHERE 'replication' = ANY(database) AND type = 'host' AND error IS NULL")" = 0 ]; then
	log "adding a trust rule for replication from 127.0.0.1 to $primary/data/pg_hba.conf"
	echo "host replication all 127.0.0.1/32 trust" >>"$primary/data/pg_hba.conf"
	psql_primary "SELECT pg_reload_conf()" >/dev/null
fi
if [ "$(psql_primary "SHOW wal_level")" = minimal ]; then
	echo "pg standby: the primary on port $pport runs with wal_level = minimal; a standby needs replica" >&2
	exit 1
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/mnemo-pg.XXXXXX")
# On any failure from here on: the standby's log, then stop it and remove
# its directory.
fail() {
	log "failed; the standby's log:"
	tail -n 20 "$dir/log" >&2 2>/dev/null || true
	as "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap fail EXIT
chown "$owner:" "$dir"
chmod 700 "$dir"
# -c fast: a fast checkpoint to start from, not a spread one (minutes).
as "$bindir/pg_basebackup" -d "host=127.0.0.1 port=$pport user=postgres application_name=$name" \
	-D "$dir/data" -R -X stream -c fast --no-sync >&2
# A port in the ephemeral range may be held for a minute by a client
# socket in TIME_WAIT (one of the tests' connections to the primary): while
# the port is taken, try again for up to 75 s.
for attempt in $(seq 15); do
	if as "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
		-o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c hot_standby=on" start >&2; then
		break
	fi
	if [ "$attempt" = 15 ] || ! grep -q "could not bind" "$dir/log"; then
		exit 1
	fi
	log "port $port is taken; trying again in 5 s"
	: >"$dir/log"
	sleep 5
done

psql_standby() { as "$bindir/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAXc "$1"; }
for _ in $(seq 100); do
	if [ "$(psql_standby "SELECT pg_is_in_recovery() AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming')" 2>/dev/null)" = t ]; then
		log "streaming from 127.0.0.1:$pport on 127.0.0.1:$port as $name"
		trap - EXIT
		echo "export MNEMO_PG_STANDBY_DSN='postgres://postgres@127.0.0.1:$port/mnemo?sslmode=disable'"
		echo "export MNEMO_PG_STANDBY_DIR='$dir'"
		exit 0
	fi
	sleep 0.1
done
log "the standby on port $port did not stream within 10 s"
exit 1
