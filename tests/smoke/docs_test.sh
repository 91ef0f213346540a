#!/usr/bin/env bash
# smoke_docs: every node type, port and parameter that `plume nodes --json` lists is documented
# in docs/nodes.md (a node type added without its documentation fails here).
# usage: docs_test.sh PLUME_CLI DOCS/nodes.md
set -euo pipefail
plume=$1
doc=$2
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to read the JSON"; exit 77; }
"$plume" nodes --json | python3 -c '
import json, sys
doc = open(sys.argv[1]).read()
missing = []
for n in json.load(sys.stdin):
    if "### `%s`" % n["id"] not in doc:
        missing.append("node type " + n["id"])
        continue
    section = doc.split("### `%s`" % n["id"], 1)[1].split("\n### ", 1)[0]
    for p in n.get("params", []):
        if "| `%s` |" % p["id"] not in section:
            missing.append("%s: parameter %s" % (n["id"], p["id"]))
    for p in n.get("ports", []):
        if "| `%s` |" % p["id"] not in section:
            missing.append("%s: port %s" % (n["id"], p["id"]))
for m in missing:
    print("not in docs/nodes.md:", m)
sys.exit(1 if missing else 0)
' "$doc"
echo "docs/nodes.md documents every node type"
