#!/bin/sh
# Step 4: this node was chosen as the master; install the "cluster
# manager" on it. For PostgreSQL that is the replication settings every
# member of the cluster will share.
set -eu
read -r ip < "$HOME/address"
case " $(echo "$candidates" | tr -d '[]",') " in
*" $ip "*) ;;
*)
    echo "this node ($ip) is not one of the candidates $candidates" >&2
    exit 1
    ;;
esac
cat > "$HOME/cluster.conf" <<CONF
wal_level = replica
max_wal_senders = 10
max_replication_slots = 10
hot_standby = on
wal_keep_size = '64MB'
password_encryption = 'scram-sha-256'
CONF
echo "master: $node at $ip:$port"
printf '%s' "$node" > "$heat_outputs_path.node"
printf '%s' "$ip" > "$heat_outputs_path.master_host"
printf '%s' "$port" > "$heat_outputs_path.master_port"
