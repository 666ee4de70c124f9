#!/usr/bin/env bash
# Both directions at once: a workflow that drives a stack, and a stack
# that waits for a workflow. Runs on a scratch SQLite store.
set -euo pipefail
cd "$(dirname "$0")"
export CONVECTION_DB="sqlite:///${TMPDIR:-/tmp}/stacks-and-workflows.db"
rm -f "${CONVECTION_DB#sqlite:///}"*

convection stack create -t control.yaml control --wait
# Start the release (input overrides the property's defaults).
convection stack resource signal control release --data '{"input": {"version": "2"}}'
convection engine --until-idle      # runs the execution, the app stack with it
convection execution list
convection stack output show app configured_by
convection stack delete app --wait -y
convection stack delete control --wait -y
