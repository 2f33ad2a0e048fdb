#!/usr/bin/env bash
# Schema-driven fuzzing (schemathesis) of the running service against its own OpenAPI document:
# every operation with generated valid and invalid input, checking that no answer is a server
# error and that every status and body is the one the document declares.
#
#   bash scripts/fuzz/run.sh              # FUZZ_SECONDS (default 150: what .ci/run spends) of fuzzing
#   FUZZ_SECONDS=1800 FUZZ_SEED=7 bash scripts/fuzz/run.sh
#
# Reproducible: the same FUZZ_SEED (default 21) generates the same cases, and no example database
# carries cases over from an earlier run. A failure prints the curl command that reproduces it.
# Installs schemathesis (pinned) from PyPI into .venv-fuzz on first use, starts the service on an
# embedded PostgreSQL in a temporary data folder with a bootstrap admin, and stops it afterwards.
set -euo pipefail
cd "$(dirname "$0")/../.."

SCHEMATHESIS_VERSION=4.32.5
FUZZ_SECONDS=${FUZZ_SECONDS:-150}
FUZZ_SEED=${FUZZ_SEED:-21}
PORT=${FUZZ_PORT:-3917}
VENV=.venv-fuzz

if [ ! -x "$VENV/bin/st" ] || ! "$VENV/bin/st" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

DATA_DIR=$(mktemp -d -t iam-fuzz-XXXXXX)
ADMIN_EMAIL=fuzz-admin@platform.test
ADMIN_PASSWORD="Fuzz-$(head -c 12 /dev/urandom | base64 | tr -d '/+=')-1a"
SERVICE_LOG="$DATA_DIR/service.log"
PORT=$PORT DATA_DIR=$DATA_DIR EMBEDDED_POSTGRES_PORT=$((PORT + 1000)) IAM_MASTER_KEY=$(head -c 32 /dev/urandom | base64) \
  IAM_BOOTSTRAP_TENANT=platform IAM_BOOTSTRAP_ADMIN_EMAIL=$ADMIN_EMAIL IAM_BOOTSTRAP_ADMIN_PASSWORD=$ADMIN_PASSWORD \
  RATE_LIMIT_ENABLED=false LOG_LEVEL=${FUZZ_LOG_LEVEL:-warn} IAM_ISSUER=http://127.0.0.1:$PORT \
  node --import tsx src/main.ts > "$SERVICE_LOG" 2>&1 &
# One process (no npx or tsx wrapper in between), so the TERM below reaches the service itself.
SERVICE_PID=$!
cleanup() {
  kill -TERM "$SERVICE_PID" 2>/dev/null && wait "$SERVICE_PID" 2>/dev/null || true
  if [ -n "${FUZZ_KEEP:-}" ]; then echo "fuzz: kept $DATA_DIR (service.log, report/)"; else rm -rf "$DATA_DIR"; fi
}
trap cleanup EXIT

BASE=http://127.0.0.1:$PORT
for _ in $(seq 1 120); do
  curl -fsS "$BASE/health/ready" > /dev/null 2>&1 && break
  kill -0 "$SERVICE_PID" 2>/dev/null || { cat "$SERVICE_LOG"; echo "fuzz: the service did not start" >&2; exit 1; }
  sleep 0.5
done

login() {
  curl -fsS -X POST "$BASE/api/auth/login" -H 'x-tenant: platform' -H 'content-type: application/json' \
    -d "{\"email\":\"$ADMIN_EMAIL\",\"password\":\"$ADMIN_PASSWORD\"}"
}
LOGIN=""
for _ in $(seq 1 10); do LOGIN=$(login 2>/dev/null) && [ -n "$LOGIN" ] && break; sleep 1; done
[ -n "$LOGIN" ] || { cat "$SERVICE_LOG"; echo "fuzz: the bootstrap admin could not log in" >&2; exit 1; }
field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(eval("(x)=>"+process.argv[1])(JSON.parse(s))))' "$1"; }
TOKEN=$(echo "$LOGIN" | field 'x.data.accessToken')
api() { curl -fsS "$BASE$1" -H "Authorization: Bearer $TOKEN" -H 'x-tenant: platform'; }
# What the admin's authority rests on: scripts/fuzz/hooks.py keeps the fuzzer's writes off them.
export FUZZ_PROTECTED_IDS
FUZZ_PROTECTED_IDS=$(
  echo "$LOGIN" | field 'x.data.sessionId'
  echo "$TOKEN" | cut -d. -f2 | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(Buffer.from(s.trim(),"base64url")).sub))'
  api /api/roles | field 'x.data.filter((r)=>r.name==="admin").map((r)=>r.id).join("\n")'
  api /api/tenants/platform | field 'x.data.id'
  echo platform
)
FUZZ_PROTECTED_IDS=$(echo "$FUZZ_PROTECTED_IDS" | paste -sd, -)
export SCHEMATHESIS_HOOKS=scripts/fuzz/hooks.py

echo "fuzz: schemathesis $SCHEMATHESIS_VERSION for ${FUZZ_SECONDS}s (seed $FUZZ_SEED) against $BASE/api/openapi.json"
# --max-time ends the run with its report; the outer timeout only catches a run that hangs.
# Its pytest-style banners ("=== SUMMARY ===", "=== 5 warnings in 150s ===") are left out: CI
# reads such a closing line as a test runner's summary, and one without a passed count as a run
# that executed no test. The report's own lines (test cases generated and passed) stay.
set +e
timeout "$((FUZZ_SECONDS + 300))" "$VENV/bin/st" run "$BASE/api/openapi.json" \
  --url "$BASE" \
  --checks not_a_server_error,status_code_conformance,response_schema_conformance \
  --header "Authorization: Bearer $TOKEN" --header 'x-tenant: platform' \
  --seed "$FUZZ_SEED" --generation-database none --max-time "$FUZZ_SECONDS" \
  --max-examples "${FUZZ_MAX_EXAMPLES:-25}" --workers 1 --no-color \
  --report junit --report-dir "$DATA_DIR/report" 2>&1 | grep --line-buffered -Ev '^=+ .* =+$'
status=${PIPESTATUS[0]}
set -e

if grep -q '"level":50' "$SERVICE_LOG"; then
  echo "fuzz: the service logged errors:" >&2
  grep '"level":50' "$SERVICE_LOG" | head -20 >&2
  status=1
fi
[ "$status" -eq 0 ] || echo "fuzz: failed (exit $status); FUZZ_SEED=$FUZZ_SEED reproduces the run" >&2
exit "$status"
