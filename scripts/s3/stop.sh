#!/usr/bin/env bash
# Stops the S3-compatible server scripts/s3/start.sh started (by its recorded pid).
set -euo pipefail
cd "$(dirname "$0")/../.."
S3_DATA_DIR=${S3_DATA_DIR:-$PWD/.data/s3}
if [[ -f "$S3_DATA_DIR/pid" ]]; then
  pid=$(cat "$S3_DATA_DIR/pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  rm -f "$S3_DATA_DIR/pid"
fi
