#!/bin/sh
# Step 5: tell this node which one is the master.
set -eu
read -r ip < "$HOME/address"
printf '%s %s\n' "$master_host" "$master_port" > "$HOME/master"
if [ "$master_host" = "$ip" ] && [ "$master_port" = "$port" ]; then
    role=primary
else
    role=replica
fi
echo "$node is a $role of $master_host:$master_port"
printf '%s' "$node" > "$heat_outputs_path.node"
printf '%s' "$role" > "$heat_outputs_path.role"
