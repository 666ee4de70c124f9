#!/usr/bin/env bash
# The SQL cluster as a workflow, on this machine: create the stack (five
# local nodes and the three workflows), signal `deploy`, let the engine
# run it, show what it published, write a row on the primary and read it
# on a replica, then delete the stack (which stops every server).
# Runs on a scratch SQLite store. As root, the nodes run as the
# unprivileged user convection-test (PostgreSQL refuses root): create it
# with scripts/ensure-test-deps.sh.
set -euo pipefail
cd "$(dirname "$0")"
export CONVECTION_DB="sqlite:///${TMPDIR:-/tmp}/cluster-workflow.db"
rm -f "${CONVECTION_DB#sqlite:///}"*
user=""
if [[ $(id -u) -eq 0 ]]; then
    user=convection-test
    # The nodes' user must reach its sandbox: not under /root.
    export CONVECTION_NODE_ROOT="${CONVECTION_NODE_ROOT:-/var/lib/convection/nodes}"
fi
params=(--parameter "node_user=$user")
[[ -n ${PORT:-} ]] && params+=(--parameter "port=$PORT")
[[ -n ${LDAP_PORT:-} ]] && params+=(--parameter "ldap_port=$LDAP_PORT")

convection stack create -t template.yaml cluster --wait "${params[@]}"
# Start the deploy; the input overrides some of the property's defaults.
convection stack resource signal cluster deploy \
    --data '{"input": {"secondary_retries": 2, "faults": {"db2": 1}}}'
convection engine --until-idle      # runs the execution and its sub-workflows
convection execution list
id=$(convection execution list --workflow cluster-deploy -f json |
     python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
convection execution output "$id"
primary=$(convection execution output "$id" |
          python3 -c 'import json,sys; print(json.load(sys.stdin)["primary_dsn"])')
replica=$(convection execution output "$id" |
          python3 -c 'import json,sys; print(json.load(sys.stdin)["replica_dsns"]["db1"])')
psql=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)/psql
"$psql" "$primary" -qAtc "create table hello (said text); insert into hello values ('from the primary')"
for _ in $(seq 60); do
    got=$("$psql" "$replica" -qAtc "select said from hello" 2>/dev/null || true)
    [[ -n $got ]] && break
    sleep 0.5
done
echo "replica db1 says: $got"
convection stack delete cluster --wait -y
