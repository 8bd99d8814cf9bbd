# SPDX-License-Identifier: GPL-2.0-or-later
# Bash/bats helpers to run test/fake-apiserver. Source after test/bats/helpers.bash (NP_ROOT set).
#
#   fake_certs DIR            make the TLS material once (mkcerts.sh), e.g. in setup_file
#   fake_start [ARGS...]      start the server (extra ARGS go to fake-apiserver); sets and exports
#                             FAKE_PID FAKE_PORT FAKE_CONTROL_PORT FAKE_URL FAKE_CTL FAKE_CA
#                             FAKE_TOKEN FAKE_DIR. Certificates: $FAKE_CERTS (default: made in
#                             $FAKE_DIR). Token: $FAKE_TOKEN (default test-token).
#   fake_stop                 stop it by PID (call from teardown; safe when not started)
#   fake_ctl METHOD PATH [JSON]   call the control API; prints the JSON answer
#   fake_api METHOD PATH [CURL-ARGS...]  call the HTTPS API with the CA and token
#   fake_kubeconfig FILE      write a kubeconfig (server, certificate-authority, token)
#   fake_wait_watchers N      wait (up to 10 s) until N watches are open
#   fake_wait_requests Q [N]  wait (up to 10 s) until N requests match /requests?Q; print them
#   reload_fake_setup [ARGS...]  a nodeprobe-reload test's setup (call from setup): fake_start
#                             ARGS with the certificates made once a file ($BATS_FILE_TMPDIR/certs,
#                             unless FAKE_CERTS is set); sets KC (its kubeconfig) and RL_LOG,
#                             clears RL_PID
#   reload_stop [--watches-closed]  stop the nodeprobe-reload in RL_PID (if any), wait for it and
#                             clear RL_PID; --watches-closed: then wait (up to 10 s) until the
#                             fake has no watch open (before a next start counts watches)
#   fake_dry_run FILE         `kubectl create --dry-run=client -o name` of the objects in FILE
#                             against a fake of its own (started and stopped here): each kind
#                             must be one discovery serves, with its scope; prints kind/name
#                             lines; kubectl's status. No OpenAPI is served: --validate=false
#                             (test/k8s/k8s_schema.py checks fields offline)
#   fake_put JSON             create or replace objects (POST /objects); the answer is discarded
#   fake_cm NAME DATA-JSON [NS] [METADATA-FIELDS]  a ConfigMap in NS (default: default);
#                             METADATA-FIELDS (e.g. "labels":{...}) go into its metadata
#   fake_deploy NAME CM [NS] [TEMPLATE-ANNOTATIONS]  a Deployment with reloader.stakater.com/auto,
#                             one container "app" using ConfigMap CM through envFrom
#   fake_deployment NAME META-ANNOTATIONS POD-SPEC [SPEC-FIELDS] [NS]  a Deployment; SPEC-FIELDS
#                             (e.g. "paused":true,) go before its selector

: "${NP_ROOT:?source test/bats/helpers.bash first}"
FAKE_BIN="$NP_ROOT/test/fake-apiserver/fake-apiserver"

fake_certs() {
  [ -f "$1/server.crt" ] || "$NP_ROOT/test/fake-apiserver/mkcerts.sh" "$1"
}

fake_start() {
  FAKE_DIR=${FAKE_DIR:-${BATS_TEST_TMPDIR:-$(mktemp -d)}/fake}
  mkdir -p "$FAKE_DIR"
  FAKE_CERTS=${FAKE_CERTS:-$FAKE_DIR/certs}
  fake_certs "$FAKE_CERTS"
  FAKE_TOKEN=${FAKE_TOKEN:-test-token}
  rm -f "$FAKE_DIR/ready"
  "$FAKE_BIN" --port 0 --control-port 0 --cert "$FAKE_CERTS/server.crt" \
    --key "$FAKE_CERTS/server.key" --token "$FAKE_TOKEN" --ready-file "$FAKE_DIR/ready" \
    "$@" >"$FAKE_DIR/fake.log" 2>&1 3>&- &
  FAKE_PID=$!
  local i
  for i in $(seq 500); do
    [ -f "$FAKE_DIR/ready" ] && break
    if ! kill -0 "$FAKE_PID" 2>/dev/null; then
      cat "$FAKE_DIR/fake.log" >&2
      return 1
    fi
    sleep 0.02
  done
  [ -f "$FAKE_DIR/ready" ] || { echo "fake-apiserver did not start" >&2; return 1; }
  FAKE_PORT=$(sed -n 's/^PORT=//p' "$FAKE_DIR/ready")
  FAKE_CONTROL_PORT=$(sed -n 's/^CONTROL_PORT=//p' "$FAKE_DIR/ready")
  FAKE_URL="https://127.0.0.1:$FAKE_PORT"
  FAKE_CTL="http://127.0.0.1:$FAKE_CONTROL_PORT"
  FAKE_CA="$FAKE_CERTS/ca.crt"
  export FAKE_PID FAKE_PORT FAKE_CONTROL_PORT FAKE_URL FAKE_CTL FAKE_CA FAKE_TOKEN FAKE_DIR
}

fake_stop() {
  [ -n "${FAKE_PID:-}" ] || return 0
  kill "$FAKE_PID" 2>/dev/null || true
  wait "$FAKE_PID" 2>/dev/null || true
  FAKE_PID=
}

fake_ctl() {
  local method=$1 path=$2
  if [ $# -ge 3 ]; then
    curl -sS --fail-with-body -X "$method" --data-binary "$3" "$FAKE_CTL$path"
  else
    curl -sS --fail-with-body -X "$method" "$FAKE_CTL$path"
  fi
}

fake_api() {
  local method=$1 path=$2
  shift 2
  curl -sS --cacert "$FAKE_CA" -H "Authorization: Bearer $FAKE_TOKEN" -X "$method" "$@" \
    "$FAKE_URL$path"
}

fake_kubeconfig() {
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: $FAKE_URL
    certificate-authority: $FAKE_CA
users:
- name: fake
  user:
    token: $FAKE_TOKEN
contexts:
- name: fake
  context:
    cluster: fake
    user: fake
    namespace: default
current-context: fake
EOF
}

fake_wait_watchers() {
  local n
  n=$(fake_ctl GET "/watchers?min=$1&wait=10" | jq .count)
  [ "$n" -ge "$1" ] && return 0
  echo "fake_wait_watchers: $n watches open, wanted $1" >&2
  return 1
}

# fake_wait_requests QUERY [MIN]: wait (up to 10 s) until MIN (default 1) finished requests match
# the /requests QUERY (e.g. "method=PATCH&path=/deployments/web$"); prints them as JSON.
fake_wait_requests() {
  local out
  out=$(fake_ctl GET "/requests?$1&min=${2:-1}&wait=10") || return 1
  printf '%s\n' "$out"
  [ "$(jq .count <<<"$out")" -ge "${2:-1}" ]
}

reload_fake_setup() {
  export FAKE_CERTS=${FAKE_CERTS:-$BATS_FILE_TMPDIR/certs}
  fake_certs "$FAKE_CERTS" >/dev/null || return 1
  fake_start "$@" || return 1
  KC="$BATS_TEST_TMPDIR/kubeconfig"
  fake_kubeconfig "$KC"
  RL_LOG="$BATS_TEST_TMPDIR/reload.log"
  RL_PID=
}

reload_stop() {
  [ -n "${RL_PID:-}" ] || return 0
  kill "$RL_PID" 2>/dev/null || true
  wait "$RL_PID" 2>/dev/null || true
  RL_PID=
  if [ "${1:-}" = --watches-closed ] && [ -n "${FAKE_PID:-}" ]; then
    fake_ctl GET "/watchers?max=0&wait=10" >/dev/null
  fi
}

fake_put() { fake_ctl POST /objects "$1" >/dev/null; }

fake_dry_run() {
  local rc=0 FAKE_DIR FAKE_PID FAKE_PORT FAKE_CONTROL_PORT FAKE_URL FAKE_CTL FAKE_CA FAKE_TOKEN= FAKE_CERTS=${FAKE_CERTS:-}
  FAKE_DIR=$(mktemp -d)
  fake_start || return 1
  fake_kubeconfig "$FAKE_DIR/kubeconfig"
  KUBECONFIG=$FAKE_DIR/kubeconfig kubectl create --dry-run=client --validate=false -o name -f "$1" || rc=$?
  fake_stop
  rm -rf "$FAKE_DIR"
  return "$rc"
}

fake_cm() {
  fake_put "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"${3:-default}\"${4:+,$4}},\"data\":$2}"
}

fake_deploy() {
  fake_put "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"${3:-default}\",\"annotations\":{\"reloader.stakater.com/auto\":\"true\"}},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"$1\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"$1\"}${4:+,\"annotations\":$4}},\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"x\",\"envFrom\":[{\"configMapRef\":{\"name\":\"$2\"}}]}]}}}}"
}

fake_deployment() {
  fake_put "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"${5:-default}\",\"annotations\":$2},\"spec\":{${4:-}\"selector\":{\"matchLabels\":{\"app\":\"$1\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"$1\"}},\"spec\":$3}}}"
}
