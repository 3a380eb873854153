#!/usr/bin/env bash
# The TypeScript client (api/typescript) as an npm tarball, dist/graphmem-client-<version>.tgz:
# its body types generated from this server's OpenAPI document, compiled, packed, then
# installed into a scratch project where the docs' example is compiled against it. Needs Node 18+
# and npm (the build tools come from package-lock.json, from the npm registry). `make ts-pack`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-$ROOT/.venv/bin/python}
mkdir -p dist
cd api/typescript
npm ci --no-audit --no-fund --loglevel=error
HF_HUB_OFFLINE=1 "$PY" -c 'import json
from graphmem.api.app import create_app
from graphmem.config import Settings
print(json.dumps(create_app(Settings()).openapi(), indent=1, sort_keys=True))' > openapi.json
npm run -s generate >/dev/null
npm run -s build
TARBALL=$ROOT/dist/$(npm pack --silent --pack-destination "$ROOT/dist" | tail -1)

SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
cd "$SCRATCH"
echo '{"name": "consumer", "version": "1.0.0", "type": "module", "private": true}' > package.json
npm install --no-audit --no-fund --loglevel=error "$TARBALL" >/dev/null
# the example of docs/typescript-client.md (its first ts block), as a user's file
awk '/^```ts$/ {on = 1; next} on && /^```$/ {exit} on' "$ROOT/docs/typescript-client.md" > main.ts
test -s main.ts
echo '{"compilerOptions": {"target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext",
  "strict": true, "noEmit": true, "lib": ["ES2022", "DOM"]}, "files": ["main.ts"]}' > tsconfig.json
"$ROOT/api/typescript/node_modules/.bin/tsc" -p tsconfig.json
echo "$TARBALL"
