#!/bin/sh
# Step 2: enable the node's secondary IP (its own address for the database).
# Every address in 127.0.0.0/8 already answers on Linux's loopback, so a
# local node only checks its address; any other address must be configured.
set -eu
ip="${SECONDARY_IP:?the node has no SECONDARY_IP in its environment}"
case "$ip" in
127.*) ;;
*)
    if ! ip -o addr show 2>/dev/null | grep -q "inet $ip/"; then
        echo "address $ip is not configured on this machine" >&2
        exit 1
    fi
    ;;
esac
echo "secondary address $ip enabled on $CONVECTION_NODE"
printf '%s' "$ip" > "$heat_outputs_path.address"
