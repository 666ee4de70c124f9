#!/bin/sh
# Report to a wait condition handle, as a booted machine does.
#
#   SIGNAL_COMMAND='<the handle curl_cli attribute>' ./signal.sh [STATUS [REASON [DATA [ID]]]]
#
# STATUS is SUCCESS (the default) or FAILURE; REASON defaults to
# "<hostname> is up"; DATA is any string (it shows in the wait condition's
# data attribute under ID, which defaults to the handle's count of signals).
# The command needs the store: CONVECTION_DB (and CONVECTION_PROJECT outside
# the default project) must be set, as curl needs a route to Heat's API.
set -eu

: "${SIGNAL_COMMAND:?set SIGNAL_COMMAND to the handle curl_cli attribute}"
status=${1:-SUCCESS}
reason=${2:-"$(hostname) is up"}
data=${3:-}
id=${4:-}

# JSON string escaping for the characters a shell argument may hold.
quote() {
    printf '"%s"' "$(printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g')"
}

body="{\"status\": $(quote "$status"), \"reason\": $(quote "$reason")"
[ -n "$data" ] && body="$body, \"data\": $(quote "$data")"
[ -n "$id" ] && body="$body, \"id\": $(quote "$id")"
body="$body}"

# SIGNAL_COMMAND is a shell-quoted command line (the attribute is made so).
eval "set -- $SIGNAL_COMMAND"
exec "$@" --data "$body"
