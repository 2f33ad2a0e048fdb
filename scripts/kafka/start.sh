#!/usr/bin/env bash
# Starts a single-node Apache Kafka broker (KRaft, combined broker + controller) on 127.0.0.1
# for development and integration tests. Idempotent: exits 0 at once if it is already running.
#
#   KAFKA_PORT (9092)  KAFKA_CONTROLLER_PORT (KAFKA_PORT+1)  KAFKA_VERSION (3.9.2)
#   KAFKA_CACHE_DIR (~/.cache/iam-kafka/<version>)  KAFKA_DATA_DIR (<repo>/.data/kafka)
#   KAFKA_HEAP_OPTS (-Xms128m -Xmx512m)  KAFKA_START_TIMEOUT seconds (60)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

KAFKA_START_TIMEOUT="${KAFKA_START_TIMEOUT:-60}"
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms128m -Xmx512m}"
CONFIG_FILE="$KAFKA_DATA_DIR/server.properties"
BROKER_LOG4J_FILE="$KAFKA_DATA_DIR/log4j.properties"
TOOLS_LOG4J_FILE="$KAFKA_DATA_DIR/tools-log4j.properties"
LOG_DIR="$KAFKA_DATA_DIR/log"

log() { echo "[kafka] $*" >&2; }

# Downloads the broker jars once per version; the marker is written last, so an interrupted
# download is retried instead of leaving a half-filled classpath.
ensure_jars() {
  if [[ -f "$KAFKA_CACHE_DIR/.complete" ]]; then return; fi
  log "downloading Apache Kafka $KAFKA_VERSION from Maven Central into $KAFKA_CACHE_DIR"
  local staging="$KAFKA_CACHE_DIR.partial"
  rm -rf "$staging"
  local maven_log="$KAFKA_DATA_DIR/maven.log"
  if ! mvn --batch-mode -f "$KAFKA_SCRIPTS_DIR/pom.xml" -Dkafka.version="$KAFKA_VERSION" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$staging" >"$maven_log" 2>&1; then
    log "mvn failed; last lines of $maven_log:"
    tail -n 40 "$maven_log" >&2
    exit 1
  fi
  rm -rf "$KAFKA_CACHE_DIR"
  mv "$staging" "$KAFKA_CACHE_DIR"
  touch "$KAFKA_CACHE_DIR/.complete"
}

# The command-line tools log warnings to stderr only: their stdout is parsed (random-uuid).
run_kafka_tool() {
  java -cp "$KAFKA_CACHE_DIR/*" -Dlog4j.configuration="file:$TOOLS_LOG4J_FILE" "$@"
}

# Rewritten on every start so a changed port takes effect; the cluster identity lives in the
# formatted log dir, not here.
write_config() {
  cat >"$CONFIG_FILE" <<PROPERTIES
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$LOG_DIR

# One node: every replication factor and ISR minimum is 1.
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
min.insync.replicas=1

# Topics are created explicitly (EventBus.ensureTopic), as in production: a typo in a topic
# name fails loudly instead of silently producing to a new, unconsumed topic.
auto.create.topics.enable=false
# Tests create many short-lived consumer groups; the default 3 s delay would slow each join.
group.initial.rebalance.delay.ms=0
PROPERTIES

  write_log4j_config "$BROKER_LOG4J_FILE" INFO System.out
  write_log4j_config "$TOOLS_LOG4J_FILE" WARN System.err
}

write_log4j_config() {
  local file="$1" level="$2" target="$3"
  cat >"$file" <<PROPERTIES
log4j.rootLogger=$level, console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.Target=$target
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=[%d] %p %m (%c)%n
PROPERTIES
}

format_storage_once() {
  if [[ -f "$LOG_DIR/meta.properties" ]]; then return; fi
  local cluster_id
  cluster_id="$(run_kafka_tool kafka.tools.StorageTool random-uuid | tail -n 1)"
  log "formatting $LOG_DIR (cluster id $cluster_id)"
  run_kafka_tool kafka.tools.StorageTool format -t "$cluster_id" -c "$CONFIG_FILE" >/dev/null
}

launch() {
  # setsid: the broker outlives this script and the terminal or test runner that called it.
  # 9>&-: it must not inherit the start lock, or the next start.sh would wait for it forever.
  # KAFKA_HEAP_OPTS is unquoted on purpose: it holds several JVM options.
  # shellcheck disable=SC2086
  setsid java $KAFKA_HEAP_OPTS -XX:+UseG1GC -Djava.awt.headless=true \
    -cp "$KAFKA_CACHE_DIR/*" -Dlog4j.configuration="file:$BROKER_LOG4J_FILE" \
    kafka.Kafka "$CONFIG_FILE" >"$KAFKA_LOG_FILE" 2>&1 </dev/null 9>&- &
  echo $! >"$KAFKA_PID_FILE"
  disown
}

# Not kafka_is_running: until the fork has exec'd java, the child's command line is still bash's.
# A broker that died is a zombie until this script exits.
launched_broker_is_alive() {
  local state
  state="$(awk '{ print $3 }' "/proc/$(cat "$KAFKA_PID_FILE")/stat" 2>/dev/null)" && [[ "$state" != Z ]]
}

port_is_open() { (exec 3<>"/dev/tcp/127.0.0.1/$KAFKA_PORT") 2>/dev/null; }

# Kills a broker that did not come up, so the next start.sh retries instead of reporting it running.
abandon_start() {
  log "$1; last lines of $KAFKA_LOG_FILE:"
  tail -n 40 "$KAFKA_LOG_FILE" >&2 || true
  kill -KILL "$(cat "$KAFKA_PID_FILE")" 2>/dev/null || true
  rm -f "$KAFKA_PID_FILE"
  exit 1
}

wait_until_listening() {
  local deadline=$((SECONDS + KAFKA_START_TIMEOUT))
  until port_is_open; do
    launched_broker_is_alive || abandon_start "the broker exited during start-up"
    ((SECONDS < deadline)) || abandon_start "port $KAFKA_PORT not open after ${KAFKA_START_TIMEOUT}s"
    sleep 0.5
  done
}

main() {
  mkdir -p "$KAFKA_DATA_DIR"
  # Serialises concurrent starts (two test runs, two shells) on the same data dir.
  exec 9>"$KAFKA_DATA_DIR/start.lock"
  flock 9
  if kafka_is_running; then
    log "already running (pid $(cat "$KAFKA_PID_FILE")) on 127.0.0.1:$KAFKA_PORT"
    return
  fi
  if port_is_open; then
    log "port $KAFKA_PORT is already taken by another process; set KAFKA_PORT"
    exit 1
  fi
  ensure_jars
  write_config
  format_storage_once
  launch
  wait_until_listening
  log "Apache Kafka $KAFKA_VERSION listening on 127.0.0.1:$KAFKA_PORT (pid $(cat "$KAFKA_PID_FILE"), log $KAFKA_LOG_FILE)"
}

main
