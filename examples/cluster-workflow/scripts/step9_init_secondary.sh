#!/bin/sh
# Step 9: initialise one secondary replica: a base backup of the master
# (which the node started after step 8), configured to stream from it, then
# left to the node as a hot standby.
#
# fail_first is fault injection for the example's tests and demos: the first
# fail_first attempts on this node fail before doing anything, so the
# task's retry policy can be seen at work.
set -eu
. "$HOME/instance.env"
attempt=$(( $(cat "$HOME/step9.attempts" 2>/dev/null || echo 0) + 1 ))
printf '%s\n' "$attempt" > "$HOME/step9.attempts"
if [ "$attempt" -le "${fail_first:-0}" ]; then
    echo "injected fault: attempt $attempt of step 9 on $node fails (fail_first=$fail_first)" >&2
    exit 3
fi
read -r master_host master_port < "$HOME/master"
tries=0
until "$PGBIN/pg_isready" -q -h "$master_host" -p "$master_port"; do
    tries=$((tries + 1))
    if [ "$tries" -ge 120 ]; then
        echo "the master $master_host:$master_port is not accepting connections" >&2
        exit 1
    fi
    sleep 0.5
done
if [ ! -f "$PGDATA/PG_VERSION" ]; then
    rm -rf "$PGDATA.partial"
    PGPASSFILE="$HOME/.pgpass" "$PGBIN/pg_basebackup" -h "$master_host" -p "$master_port" \
        -U "$repl_user" -D "$PGDATA.partial" -R -X stream -c fast -w
    mv "$PGDATA.partial" "$PGDATA"
    # The standby's own connection string keeps the password out of the data dir.
    echo "primary_conninfo = 'host=$master_host port=$master_port user=$repl_user passfile=$HOME/.pgpass application_name=$node'" \
        > "$PGDATA/postgresql.auto.conf"
fi
socket="${TMPDIR:-/tmp}"
if [ -n "${CONVECTION_SERVICE_DIR:-}" ]; then
    cat > "$CONVECTION_SERVICE_DIR/postgres.json" <<JSON
{"argv": ["$PGBIN/postgres", "-D", "$PGDATA", "-p", "$PGPORT",
          "-c", "listen_addresses=$LISTEN", "-c", "unix_socket_directories=$socket"]}
JSON
else
    "$PGBIN/pg_ctl" -D "$PGDATA" -l "$HOME/replica.log" -w -t 60 \
        -o "-p $PGPORT -c listen_addresses=$LISTEN -c unix_socket_directories=$socket" start >/dev/null
fi
echo "replica of $master_host:$master_port initialised on $LISTEN:$PGPORT (attempt $attempt)"
printf '%s' "$node" > "$heat_outputs_path.node"
printf '%s' "$attempt" > "$heat_outputs_path.attempts"
printf 'postgresql://%s@%s:%s/%s' "$db_user" "$LISTEN" "$PGPORT" "$db_name" \
    > "$heat_outputs_path.replica_dsn"
