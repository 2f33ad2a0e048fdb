#!/usr/bin/env bash
# Starts an S3-compatible server (moto's server, from PyPI) over HTTPS on 127.0.0.1 for the
# OBJECT_STORE log-stream tests. Idempotent: exits 0 at once when it already answers.
#
#   S3_PORT (9444)  S3_DATA_DIR (<repo>/.data/s3): pid, log, and the self-signed certificate
#   (s3-cert.pem: localhost and 127.0.0.1) that the tests trust.
# moto is installed (pinned) into .venv-s3 on first use.
set -euo pipefail
cd "$(dirname "$0")/../.."

MOTO_VERSION=5.1.22
S3_PORT=${S3_PORT:-9444}
S3_DATA_DIR=${S3_DATA_DIR:-$PWD/.data/s3}
VENV=.venv-s3
mkdir -p "$S3_DATA_DIR"

log() { echo "[s3] $*" >&2; }
answers() { curl -sk -o /dev/null --max-time 2 "https://127.0.0.1:$S3_PORT/" ; }

if [[ -f "$S3_DATA_DIR/pid" ]] && kill -0 "$(cat "$S3_DATA_DIR/pid")" 2>/dev/null && answers; then
  log "already running on 127.0.0.1:$S3_PORT"
  exit 0
fi

if [[ ! -x "$VENV/bin/moto_server" ]] || [[ "$("$VENV/bin/pip" show moto 2>/dev/null)" != *"Version: $MOTO_VERSION"* ]]; then
  log "installing moto[server]==$MOTO_VERSION into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
fi

# Its own subject name: trusted beside other self-signed test certificates (CN=localhost), a
# shared subject would make the verifier pick the wrong one.
if [[ ! -f "$S3_DATA_DIR/s3-cert.pem" ]]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=iam-test-s3" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout "$S3_DATA_DIR/s3-key.pem" -out "$S3_DATA_DIR/s3-cert.pem" 2>/dev/null
fi

nohup "$VENV/bin/moto_server" -H 127.0.0.1 -p "$S3_PORT" -c "$S3_DATA_DIR/s3-cert.pem" -k "$S3_DATA_DIR/s3-key.pem" \
  >"$S3_DATA_DIR/server.log" 2>&1 &
echo $! >"$S3_DATA_DIR/pid"

for _ in $(seq 1 60); do
  if answers; then
    log "serving on https://127.0.0.1:$S3_PORT (certificate $S3_DATA_DIR/s3-cert.pem)"
    exit 0
  fi
  sleep 0.5
done
log "did not start; last lines of $S3_DATA_DIR/server.log:"
tail -n 30 "$S3_DATA_DIR/server.log" >&2
exit 1
