#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# mkcerts.sh DIR: make the TLS material fake-apiserver tests need, with the openssl CLI.
#   ca.crt/ca.key                 the test CA
#   server.crt/server.key         127.0.0.1, ::1, localhost; signed by ca
#   client.crt/client.key         a client certificate (CN=test-client, O=system:masters); by ca
#   wronghost.crt/wronghost.key   a server certificate for wrong.example only; signed by ca
#   other-ca.crt/other-ca.key     an unrelated CA ("wrong CA" tests)
#   other-server.crt/other-server.key  127.0.0.1/localhost, signed by the unrelated CA
set -eu
dir=${1:?usage: mkcerts.sh DIR}
mkdir -p "$dir"
cd "$dir"
days=3650
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
ca() {  # ca NAME CN
  key "$1.key"
  openssl req -x509 -new -key "$1.key" -sha256 -days $days -subj "/CN=$2" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" -out "$1.crt" 2>/dev/null
}
leaf() {  # leaf NAME CA SUBJ EXT
  key "$1.key"
  openssl req -new -key "$1.key" -subj "$3" -out "$1.csr" 2>/dev/null
  printf '%s\n' "$4" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" -CAcreateserial -sha256 \
    -days $days -extfile "$1.ext" -out "$1.crt" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
srv_ext="basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1"
ca ca fake-apiserver-test-ca
ca other-ca unrelated-test-ca
leaf server ca "/CN=fake-apiserver" "$srv_ext"
leaf other-server other-ca "/CN=fake-apiserver" "$srv_ext"
leaf wronghost ca "/CN=wrong.example" "basicConstraints=CA:FALSE
extendedKeyUsage=serverAuth
subjectAltName=DNS:wrong.example"
leaf client ca "/O=system:masters/CN=test-client" "basicConstraints=CA:FALSE
extendedKeyUsage=clientAuth"
rm -f ./*.srl
chmod 600 ./*.key
