#!/usr/bin/env bash
# Makes the certificates of a Temporal server with mTLS and of its clients, with openssl:
#   bash scripts/make-tls-certs.sh DIR [CLIENT...]
# DIR/ca.pem, ca.key       a CA (kept if it exists: more clients can be added later)
# DIR/server.pem, .key     the server's certificate, for the names in TLS_SERVER_NAMES
#                          (default: temporal, the compose service, plus localhost and 127.0.0.1);
#                          docker-compose.tls.yml's frontend and internode connections use it
# DIR/CLIENT.pem, .key     one client certificate per name (goalrun's model worker, tool host, CLI…)
# Valid for TLS_DAYS days (default 365). For a test cluster or a trial: a production CA belongs to
# whoever runs the cluster. Used by docker-compose.tls.yml's instructions and by npm run test:cluster.
set -euo pipefail
dir="${1:?usage: make-tls-certs.sh DIR [CLIENT...]}"
shift
days="${TLS_DAYS:-365}"
names="${TLS_SERVER_NAMES:-temporal,localhost,127.0.0.1}"
mkdir -p "$dir"
cd "$dir"
quiet() { "$@" 2>/dev/null >/dev/null || { "$@"; exit 1; }; }

if [ ! -f ca.pem ]; then
  quiet openssl req -x509 -newkey rsa:2048 -nodes -days "$days" -subj "/CN=goalrun Temporal CA" \
    -keyout ca.key -out ca.pem \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
fi

# A key and a certificate signed by the CA, with the given extensions.
sign() {
  local name="$1" cn="$2" extensions="$3"
  [ -f "$name.pem" ] && return 0
  quiet openssl req -newkey rsa:2048 -nodes -subj "/CN=$cn" -keyout "$name.key" -out "$name.csr"
  printf '%s\n' "$extensions" >"$name.ext"
  quiet openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days "$days" \
    -out "$name.pem" -extfile "$name.ext"
  rm -f "$name.csr" "$name.ext"
  chmod 600 "$name.key"
}

san=""
IFS=',' read -ra server_names <<<"$names"
for name in "${server_names[@]}"; do
  if [[ "$name" =~ ^[0-9.]+$ || "$name" == *:* ]]; then san="$san,IP:$name"; else san="$san,DNS:$name"; fi
done
# serverAuth for the frontend; clientAuth because the server's own nodes present it to each other.
sign server "${server_names[0]}" "subjectAltName=${san#,}
extendedKeyUsage=serverAuth,clientAuth"

for client in "$@"; do
  sign "$client" "$client" "extendedKeyUsage=clientAuth"
done
chmod 600 ca.key
echo "certificates in $(pwd): ca.pem, server.pem${*:+, }$(printf '%s.pem ' "$@" | sed 's/ $//; s/ /, /g')"
