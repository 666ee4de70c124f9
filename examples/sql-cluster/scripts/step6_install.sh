#!/bin/sh
# Step 6: install the database server on every node: its data directory's
# place and the command the node supervises once the data is there.
set -eu
bin=$(cat "$HOME/pg_bin")
mkdir -p "$HOME/run"
cat > "$HOME/instance.env" <<ENV
PGBIN=$bin
PGDATA=$HOME/pgdata
LISTEN=$SECONDARY_IP
ENV
echo "installed $("$bin/postgres" --version) on $CONVECTION_NODE"
printf '%s' "$HOME/pgdata" > "$heat_outputs_path.data_dir"
