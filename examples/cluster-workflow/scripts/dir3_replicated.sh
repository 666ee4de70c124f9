#!/bin/sh
# Directory, step 3: the consumer answers and holds the provider's entries
# (syncrepl's first refresh is done).
set -eu
tries=0
until ldapsearch -x -LLL -H "$consumer_uri" -b "ou=roles,$base_dn" -s base dn >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -ge 120 ]; then
        echo "the consumer $consumer_uri never replicated ou=roles,$base_dn from the provider" >&2
        exit 1
    fi
    sleep 0.5
done
echo "$consumer_uri replicates $base_dn"
printf '%s' "$tries" > "$heat_outputs_path.polls"
