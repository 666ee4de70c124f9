#!/bin/sh
# Step 5: tell every node which one is the master.
set -eu
printf '%s %s\n' "$master_host" "$master_port" > "$HOME/master"
if [ "$master_host" = "$SECONDARY_IP" ] && [ "$master_port" = "$PGPORT" ]; then
    role=primary
else
    role=replica
fi
echo "$CONVECTION_NODE is a $role of $master_host:$master_port"
printf '%s' "$role" > "$heat_outputs_path.role"
