#!/bin/sh
# Step 7: prepare a node other than the master to stream from it (the
# AlwaysOn part): the replication password goes in a private .pgpass.
set -eu
read -r master_host master_port < "$HOME/master"
umask 077
printf '%s:%s:replication:%s:%s\n' "$master_host" "$master_port" "$repl_user" "$repl_password" \
    > "$HOME/.pgpass"
echo "$node will stream from $master_host:$master_port as $repl_user"
printf '%s' "$node" > "$heat_outputs_path.node"
