#!/bin/sh
# Directory, step 2: the secondary directory controller. A slapd whose
# database is a syncrepl consumer of the provider (refreshAndPersist: every
# change on the provider is pushed here). It binds to the provider as the
# directory's admin, so its config is private to the node's user.
set -eu
PATH="$PATH:/usr/sbin"
for tool in slapd slaptest; do
    command -v "$tool" >/dev/null 2>&1 || { echo "OpenLDAP's $tool is missing on $node" >&2; exit 1; }
done
dir="$HOME/ldap"
mkdir -p "$dir/db"
umask 077
cat > "$dir/slapd.conf" <<CONF
include /etc/ldap/schema/core.schema
pidfile $dir/slapd.pid
argsfile $dir/slapd.args
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
suffix "$base_dn"
rootdn "cn=replica,$base_dn"
directory $dir/db
maxsize 67108864
index objectClass,entryCSN,entryUUID eq
access to * by * read
syncrepl rid=001
  provider=$provider_uri
  bindmethod=simple
  binddn="cn=admin,$base_dn"
  credentials="$admin_password"
  searchbase="$base_dn"
  type=refreshAndPersist
  retry="1 +"
  timeout=5
CONF
slaptest -Q -u -f "$dir/slapd.conf"
uri="ldap://$address:$port/"
if [ -n "${CONVECTION_SERVICE_DIR:-}" ]; then
    cat > "$CONVECTION_SERVICE_DIR/slapd.json" <<JSON
{"argv": ["$(command -v slapd)", "-d", "none", "-f", "$dir/slapd.conf", "-h", "$uri"]}
JSON
else
    slapd -f "$dir/slapd.conf" -h "$uri"
fi
echo "directory consumer of $provider_uri on $uri"
printf '%s' "$node" > "$heat_outputs_path.node"
printf '%s' "$uri" > "$heat_outputs_path.consumer_uri"
