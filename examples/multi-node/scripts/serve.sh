#!/bin/sh
# Step 1, on the web node: publish a one-page site and ask the node to
# supervise a web server for it. The node starts the server once this step
# succeeds; it outlives the step and stops when the node is deleted.
set -eu
site="$HOME/site"
mkdir -p "$site"
printf '%s\n' "$greeting" > "$site/index.html"
cat > "$CONVECTION_SERVICE_DIR/http.json" <<JSON
{"argv": ["$PYTHON", "-m", "http.server", "$PORT", "--bind", "127.0.0.1", "--directory", "$site"]}
JSON
echo "$CONVECTION_NODE will serve $site on 127.0.0.1:$PORT"
printf 'http://127.0.0.1:%s/' "$PORT" > "$heat_outputs_path.url"
printf '%s' "$site" > "$heat_outputs_path.site_dir"
