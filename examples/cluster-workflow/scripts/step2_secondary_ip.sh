#!/bin/sh
# Step 2: set the node's secondary address, the one the user gave for it in
# the workflow's input. Every address in 127.0.0.0/8 already answers on
# Linux's loopback, so a local node only checks it; any other address must
# be configured on the host (an SSH host's interface).
set -eu
ip="${address:?the workflow input gives no address for node $node}"
case "$ip" in
127.*) ;;
*)
    if ! ip -o addr show 2>/dev/null | grep -q "inet $ip/"; then
        echo "address $ip is not configured on $node" >&2
        exit 1
    fi
    ;;
esac
printf '%s\n' "$ip" > "$HOME/address"
echo "secondary address $ip set on $node"
printf '%s' "$node" > "$heat_outputs_path.node"
printf '%s' "$ip" > "$heat_outputs_path.address"
