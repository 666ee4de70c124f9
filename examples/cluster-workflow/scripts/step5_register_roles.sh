#!/bin/sh
# Step 5, in the directory: write the cluster's roles on the provider, one
# organizationalRole per node (cn: the node, description: its role). The
# database nodes read them back from the consumer in step 6.
set -eu
admin_dn="cn=admin,$base_dn"
umask 077
pwfile="${TMPDIR:-/tmp}/ldap-admin.pw"
trap 'rm -f "$pwfile"' EXIT
printf '%s' "$admin_password" > "$pwfile"
ldap() { "$@" -x -H "$provider_uri" -D "$admin_dn" -y "$pwfile" >/dev/null; }
count=0
for pair in $roles; do
    name=${pair%%=*}
    role=${pair#*=}
    dn="cn=$name,ou=roles,$base_dn"
    rc=0
    ldap ldapadd <<LDIF || rc=$?
dn: $dn
objectClass: organizationalRole
cn: $name
description: $role
LDIF
    if [ "$rc" -eq 68 ]; then  # already there (a re-run): say its role again
        ldap ldapmodify <<LDIF
dn: $dn
changetype: modify
replace: description
description: $role
LDIF
    elif [ "$rc" -ne 0 ]; then
        echo "could not write $dn on $provider_uri (ldapadd exit $rc)" >&2
        exit 1
    fi
    count=$((count + 1))
done
echo "registered $count roles under ou=roles,$base_dn on $provider_uri"
printf '%s' "$count" > "$heat_outputs_path.registered"
