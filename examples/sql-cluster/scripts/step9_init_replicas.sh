#!/bin/sh
# Step 9: initialize a secondary replica: a base backup of the master
# (which the node started after step 8), configured to stream from it, then
# started under the node's supervision as a hot standby.
set -eu
. "$HOME/instance.env"
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
    echo "primary_conninfo = 'host=$master_host port=$master_port user=$repl_user passfile=$HOME/.pgpass application_name=$CONVECTION_NODE'" \
        > "$PGDATA/postgresql.auto.conf"
fi
socket="$TMPDIR"
cat > "$CONVECTION_SERVICE_DIR/postgres.json" <<JSON
{"argv": ["$PGBIN/postgres", "-D", "$PGDATA", "-p", "$PGPORT",
          "-c", "listen_addresses=$LISTEN", "-c", "unix_socket_directories=$socket"]}
JSON
echo "replica of $master_host:$master_port initialized on $LISTEN:$PGPORT"
printf 'postgresql://%s@%s:%s/%s' "$db_user" "$LISTEN" "$PGPORT" "$db_name" \
    > "$heat_outputs_path.replica_dsn"
