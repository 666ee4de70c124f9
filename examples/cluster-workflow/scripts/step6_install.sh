#!/bin/sh
# Step 6: install the database server on this node: its data directory's
# place and the command that will run it. Then join the directory: read the
# cluster's roles back from the directory's consumer (a replica of what
# step 5 wrote on the provider) and wait until syncrepl has brought them all.
set -eu
bin=$(cat "$HOME/pg_bin")
read -r ip < "$HOME/address"
mkdir -p "$HOME/run"
cat > "$HOME/instance.env" <<ENV
PGBIN=$bin
PGDATA=$HOME/pgdata
LISTEN=$ip
PGPORT=$port
ENV
echo "installed $("$bin/postgres" --version) on $node"

read_roles() {
    ldapsearch -x -LLL -o ldif-wrap=no -H "$directory_uri" -b "ou=roles,$base_dn" \
        '(objectClass=organizationalRole)' cn description 2>/dev/null |
        awk '/^cn: /{cn=$2} /^description: /{d=$2} /^$/{if (cn != "") print cn "=" d; cn=""; d=""}
             END{if (cn != "") print cn "=" d}' |
        sort | tr '\n' ' ' | sed 's/ $//'
}
tries=0
seen=$(read_roles || true)
until [ "$seen" = "$expected_roles" ]; do
    tries=$((tries + 1))
    if [ "$tries" -ge 120 ]; then
        echo "the directory $directory_uri shows roles '$seen', not '$expected_roles'" >&2
        exit 1
    fi
    sleep 0.5
    seen=$(read_roles || true)
done
echo "$node reads the roles from $directory_uri: $seen"
printf '%s\n' "$directory_uri $base_dn" > "$HOME/directory"
printf '%s' "$node" > "$heat_outputs_path.node"
printf '%s' "$HOME/pgdata" > "$heat_outputs_path.data_dir"
printf '%s' "$seen" > "$heat_outputs_path.directory_roles"
