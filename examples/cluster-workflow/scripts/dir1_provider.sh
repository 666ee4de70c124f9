#!/bin/sh
# Directory, step 1: the primary directory controller. An OpenLDAP slapd
# with the syncprov overlay (the provider of syncrepl), its own config and
# database under $HOME/ldap, listening on the node's own address and port.
# The base entries are loaded offline (slapadd -w), then the server is left
# to the node: a local node supervises it (as the node's user; it stops
# when the node is deleted); elsewhere slapd starts as a daemon.
set -eu
for tool in slapd slapadd slappasswd slaptest; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] ||
        { echo "OpenLDAP's $tool is missing on $node (install slapd)" >&2; exit 1; }
done
PATH="$PATH:/usr/sbin"
case "$base_dn" in
dc=*) dc=$(printf '%s' "$base_dn" | sed 's/^dc=\([^,]*\).*/\1/') ;;
*) echo "base_dn must start with dc=: $base_dn" >&2; exit 1 ;;
esac
dir="$HOME/ldap"
mkdir -p "$dir/db"
umask 077
pwfile="${TMPDIR:-/tmp}/admin.pw"
trap 'rm -f "$pwfile"' EXIT
printf '%s' "$admin_password" > "$pwfile"
hash=$(slappasswd -T "$pwfile")
cat > "$dir/slapd.conf" <<CONF
include /etc/ldap/schema/core.schema
pidfile $dir/slapd.pid
argsfile $dir/slapd.args
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload syncprov
database mdb
suffix "$base_dn"
rootdn "cn=admin,$base_dn"
rootpw $hash
directory $dir/db
maxsize 67108864
index objectClass,entryCSN,entryUUID eq
access to * by * read
overlay syncprov
syncprov-checkpoint 10 1
CONF
slaptest -Q -u -f "$dir/slapd.conf"
if [ ! -f "$dir/db/data.mdb" ]; then
    slapadd -w -q -f "$dir/slapd.conf" <<LDIF
dn: $base_dn
objectClass: dcObject
objectClass: organization
dc: $dc
o: $dc

dn: ou=roles,$base_dn
objectClass: organizationalUnit
ou: roles
LDIF
fi
uri="ldap://$address:$port/"
if [ -n "${CONVECTION_SERVICE_DIR:-}" ]; then
    cat > "$CONVECTION_SERVICE_DIR/slapd.json" <<JSON
{"argv": ["$(command -v slapd)", "-d", "none", "-f", "$dir/slapd.conf", "-h", "$uri"]}
JSON
else
    slapd -f "$dir/slapd.conf" -h "$uri"
fi
echo "directory provider for $base_dn on $uri"
printf '%s' "$node" > "$heat_outputs_path.node"
printf '%s' "$uri" > "$heat_outputs_path.provider_uri"
