#!/usr/bin/env bash
# Stops the broker started by start.sh: SIGTERM (a controlled shutdown that flushes the logs),
# then SIGKILL if it is still alive after KAFKA_STOP_TIMEOUT seconds (default 30).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

KAFKA_STOP_TIMEOUT="${KAFKA_STOP_TIMEOUT:-30}"

if ! kafka_is_running; then
  echo "[kafka] not running" >&2
  rm -f "$KAFKA_PID_FILE"
  exit 0
fi

pid="$(cat "$KAFKA_PID_FILE")"
kill -TERM "$pid"
deadline=$((SECONDS + KAFKA_STOP_TIMEOUT))
while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.5; done
if kill -0 "$pid" 2>/dev/null; then
  echo "[kafka] still alive after ${KAFKA_STOP_TIMEOUT}s, sending SIGKILL" >&2
  kill -KILL "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
fi
rm -f "$KAFKA_PID_FILE"
echo "[kafka] stopped (pid $pid)" >&2
