#!/bin/sh
# Step 3: install prerequisites. The PostgreSQL binaries come with the
# machine; find them (the newest under /usr/lib/postgresql, unless pg_bin
# says where) and record where they are for the later steps.
set -eu
bin="${pg_bin:-}"
if [ -z "$bin" ]; then
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
fi
for tool in initdb pg_ctl postgres pg_basebackup pg_isready psql; do
    if [ ! -x "$bin/$tool" ]; then
        echo "PostgreSQL is not installed on $node: $bin/$tool is missing (set pg_bin)" >&2
        exit 1
    fi
done
for tool in ldapsearch; do
    command -v "$tool" >/dev/null 2>&1 || { echo "$tool (ldap-utils) is missing on $node" >&2; exit 1; }
done
printf '%s\n' "$bin" > "$HOME/pg_bin"
"$bin/postgres" --version
printf '%s' "$node" > "$heat_outputs_path.node"
printf '%s' "$bin" > "$heat_outputs_path.pg_bin"
