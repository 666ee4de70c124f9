#!/bin/sh
# Step 4: choose the master and install failover clustering on it. The
# master is the node this runs on; "clustering" for PostgreSQL is the
# replication settings every member of the cluster will share.
set -eu
case " $(echo "$candidates" | tr -d '[]",') " in
*" $SECONDARY_IP "*) ;;
*)
    echo "this node ($SECONDARY_IP) is not one of the candidates $candidates" >&2
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
echo "master: $CONVECTION_NODE at $SECONDARY_IP:$PGPORT"
printf '%s' "$SECONDARY_IP" > "$heat_outputs_path.master_host"
printf '%s' "$PGPORT" > "$heat_outputs_path.master_port"
