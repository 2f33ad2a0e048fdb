# Settings shared by start.sh and stop.sh (sourced, not executed).
# Every path can be overridden from the environment; the defaults keep the jars outside the
# repository (one download per machine) and the broker's state in the git-ignored .data/.

# 3.9.x: the last line before Kafka 4.0 removed old protocol versions, which kafkajs 2.2.4
# (unmaintained) cannot follow; README.md in this folder has the measured details.
KAFKA_VERSION="${KAFKA_VERSION:-3.9.2}"

KAFKA_SCRIPTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$KAFKA_SCRIPTS_DIR/../.." && pwd)"
KAFKA_CACHE_DIR="${KAFKA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/iam-kafka/$KAFKA_VERSION}"
KAFKA_DATA_DIR="${KAFKA_DATA_DIR:-$REPO_ROOT/.data/kafka}"
KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-$((KAFKA_PORT + 1))}"

KAFKA_PID_FILE="$KAFKA_DATA_DIR/kafka.pid"
KAFKA_LOG_FILE="$KAFKA_DATA_DIR/kafka.log"

# True when the pid file names a live Kafka JVM (not a recycled pid of another process).
kafka_is_running() {
  [[ -f "$KAFKA_PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$KAFKA_PID_FILE")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka'
}
