#!/bin/sh
# Step 2, on the client node: fetch the URL step 1 published (the engine
# passes it as the input `url`) and check the answer. The server starts
# right after step 1, so give it a few seconds to come up.
set -eu
"$PYTHON" - "$url" "$expected" "$heat_outputs_path.answer" <<'PY'
import sys, time, urllib.request

url, expected, out = sys.argv[1:4]
deadline = time.monotonic() + 15
while True:
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            body = reply.read().decode().strip()
        break
    except OSError as exc:
        if time.monotonic() > deadline:
            sys.exit(f"{url} does not answer: {exc}")
        time.sleep(0.1)
if body != expected:
    sys.exit(f"{url} answered {body!r}, expected {expected!r}")
print(f"{url} answered: {body}")
with open(out, "w") as f:
    f.write(body)
PY
