#!/bin/sh
# Step 8: initialise the primary: a new cluster with the replication
# settings, the replication role, the application's role and database.
# The server is then left to the node: a local node supervises it (it
# outlives this step and stops when the node is deleted); elsewhere it is
# started as a daemon.
set -eu
. "$HOME/instance.env"
socket="${TMPDIR:-/tmp}"
if [ ! -f "$PGDATA/PG_VERSION" ]; then
    "$PGBIN/initdb" -D "$PGDATA" -U postgres -E UTF8 --auth-local=trust --auth-host=reject >/dev/null
    cp "$HOME/cluster.conf" "$PGDATA/cluster.conf"
    echo "include_if_exists = 'cluster.conf'" >> "$PGDATA/postgresql.conf"
    cat > "$PGDATA/pg_hba.conf" <<HBA
local all all trust
host replication $repl_user 127.0.0.0/8 scram-sha-256
host $db_name $db_user 127.0.0.0/8 trust
HBA
fi
opts="-p $PGPORT -c listen_addresses=$LISTEN -c unix_socket_directories=$socket"
"$PGBIN/pg_ctl" -D "$PGDATA" -o "$opts" -l "$HOME/init.log" -w -t 60 start >/dev/null
if [ -n "${CONVECTION_SERVICE_DIR:-}" ]; then
    # This server is only for the setup below: the node's supervised one follows.
    trap '"$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null' EXIT
fi
psql() { "$PGBIN/psql" -h "$socket" -p "$PGPORT" -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }
psql -d postgres -v user="$repl_user" -v pw="$repl_password" <<'SQL'
SELECT format('CREATE ROLE %I WITH REPLICATION LOGIN', :'user')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'user') \gexec
SELECT format('ALTER ROLE %I PASSWORD %L', :'user', :'pw') \gexec
SQL
psql -d postgres -v user="$db_user" -v db="$db_name" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN', :'user')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'user') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'user')
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db') \gexec
SQL
if [ -n "${CONVECTION_SERVICE_DIR:-}" ]; then
    cat > "$CONVECTION_SERVICE_DIR/postgres.json" <<JSON
{"argv": ["$PGBIN/postgres", "-D", "$PGDATA", "-p", "$PGPORT",
          "-c", "listen_addresses=$LISTEN", "-c", "unix_socket_directories=$socket"]}
JSON
fi  # else: the server pg_ctl started stays up as the host's daemon
echo "primary initialised on $LISTEN:$PGPORT"
printf '%s' "$node" > "$heat_outputs_path.node"
printf 'postgresql://%s@%s:%s/%s' "$db_user" "$LISTEN" "$PGPORT" "$db_name" \
    > "$heat_outputs_path.primary_dsn"
