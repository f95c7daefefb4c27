# Test PKI for the TLS tests and benchmarks (source this file). Needs the openssl CLI (3.0+).
# Every key is EC P-256 (named curve), every certificate SHA-256. Nothing is printed on
# success; on failure the openssl output is shown on stderr and the function returns 1.
#
#   make_test_pki DIR [SERVER_SANS]     a test CA, an unrelated second CA and the usual leaves
#                                       (see below); SERVER_SANS defaults to
#                                       "DNS:sbc.test,IP:198.18.0.1"
#   make_ca DIR NAME [CN]               a self-signed CA: DIR/NAME.key, DIR/NAME.crt
#   make_leaf DIR NAME SANS [USAGE [CA [VALIDITY]]]
#                                       DIR/NAME.key, DIR/NAME.crt signed by DIR/CA.{crt,key}
#                                       (CA defaults to "ca"), subjectAltName = SANS
#                                       ("DNS:a.test,IP:198.18.0.1"), CN = first DNS name
#                                       (else NAME). USAGE: server (extendedKeyUsage
#                                       serverAuth, default), client (clientAuth) or both.
#                                       VALIDITY: valid (default, 30 days from an hour ago),
#                                       expired (ended yesterday) or notyet (starts tomorrow).
#                                       Also writes DIR/NAME.pem = certificate + key.
#
# make_test_pki DIR [SERVER_SANS] writes:
#   ca.crt ca.key            the test CA ("sbc test CA")
#   ca2.crt ca2.key          a second CA that nothing trusts ("unrelated test CA")
#   server.crt/.key          SERVER_SANS, serverAuth, signed by ca
#   wrongname.crt/.key       DNS:wrong.test only, serverAuth, signed by ca
#   expired.crt/.key         SERVER_SANS, serverAuth, signed by ca, expired yesterday
#   client.crt/.key          DNS:client.test, clientAuth, signed by ca
#   untrusted.crt/.key       SERVER_SANS, serverAuth, signed by ca2
#   untrusted-client.crt/.key DNS:client.test, clientAuth, signed by ca2
# The dates come from the openssl CLI itself (`openssl ca -startdate/-enddate`): no faketime.

CERTS_OPENSSL=${CERTS_OPENSSL:-openssl}

certs__fail() { printf 'certs: %s\n' "$*" >&2; return 1; }

# certs__run LOG CMD...: runs CMD with its output in LOG; on failure shows LOG and fails.
certs__run() {
  local log=$1; shift
  if ! "$@" >"$log" 2>&1; then
    printf 'certs: failed: %s\n' "$*" >&2
    cat "$log" >&2
    return 1
  fi
}

# certs__key FILE: a new EC P-256 private key (PKCS#8 PEM, unencrypted, mode 600).
certs__key() {
  local f=$1
  ( umask 077
    certs__run "$f.log" "$CERTS_OPENSSL" genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
      -pkeyopt ec_param_enc:named_curve -out "$f" ) || return 1
  rm -f "$f.log"
}

# certs__date OFFSET: a UTC time for openssl ca (YYYYMMDDHHMMSSZ), OFFSET as date -d takes it.
certs__date() { date -u -d "$1" +%Y%m%d%H%M%SZ; }

make_ca() {
  local dir=$1 name=$2 cn=${3:-"$2 test CA"}
  [ -n "$dir" ] && [ -n "$name" ] || { certs__fail "usage: make_ca DIR NAME [CN]"; return 1; }
  mkdir -p "$dir" || { certs__fail "cannot create $dir"; return 1; }
  certs__key "$dir/$name.key" || return 1
  cat >"$dir/$name.ext" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
O = sbc tests
CN = $cn
[v3_ca]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
EOF
  certs__run "$dir/$name.log" "$CERTS_OPENSSL" req -new -x509 -sha256 -key "$dir/$name.key" \
    -config "$dir/$name.ext" -extensions v3_ca -days 3650 -set_serial "0x$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')" \
    -out "$dir/$name.crt" || return 1
  rm -f "$dir/$name.log" "$dir/$name.ext"
}

make_leaf() {
  local dir=$1 name=$2 sans=$3 usage=${4:-server} ca=${5:-ca} validity=${6:-valid}
  [ -n "$dir" ] && [ -n "$name" ] && [ -n "$sans" ] ||
    { certs__fail "usage: make_leaf DIR NAME SANS [server|client|both [CA [valid|expired|notyet]]]"; return 1; }
  [ -f "$dir/$ca.crt" ] && [ -f "$dir/$ca.key" ] || { certs__fail "make_leaf: no CA $dir/$ca.{crt,key}"; return 1; }
  local eku
  case "$usage" in
    server) eku=serverAuth;;
    client) eku=clientAuth;;
    both) eku=serverAuth,clientAuth;;
    *) certs__fail "make_leaf: usage server, client or both, not '$usage'"; return 1;;
  esac
  local start end
  case "$validity" in
    valid) start=$(certs__date '-1 hour'); end=$(certs__date '+30 days');;
    expired) start=$(certs__date '-30 days'); end=$(certs__date '-1 day');;
    notyet) start=$(certs__date '+1 day'); end=$(certs__date '+30 days');;
    *) certs__fail "make_leaf: validity valid, expired or notyet, not '$validity'"; return 1;;
  esac
  # CN: the first DNS name of the SANs, else NAME.
  local cn
  cn=$(tr ',' '\n' <<<"$sans" | sed -n 's/^ *DNS://p' | head -n 1)
  [ -n "$cn" ] || cn=$name
  local work
  work=$(mktemp -d "$dir/.leaf-$name.XXXXXX") || { certs__fail "mktemp in $dir"; return 1; }
  certs__key "$dir/$name.key" || { rm -rf "$work"; return 1; }
  cat >"$work/req.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
O = sbc tests
CN = $cn
EOF
  cat >"$work/ext.cnf" <<EOF
[v3_leaf]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyAgreement
extendedKeyUsage = $eku
subjectAltName = $sans
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
  # openssl ca sets any start and end date (the x509 command of OpenSSL 3.0 cannot backdate).
  : >"$work/index.txt"
  od -An -N8 -tx1 /dev/urandom | tr -d ' \n' >"$work/serial"; echo >>"$work/serial"
  cat >"$work/ca.cnf" <<EOF
[ca]
default_ca = test_ca
[test_ca]
database = $work/index.txt
serial = $work/serial
new_certs_dir = $work
certificate = $dir/$ca.crt
private_key = $dir/$ca.key
default_md = sha256
policy = policy_any
unique_subject = no
email_in_dn = no
copy_extensions = none
[policy_any]
organizationName = optional
commonName = supplied
EOF
  if certs__run "$work/log" "$CERTS_OPENSSL" req -new -key "$dir/$name.key" -config "$work/req.cnf" -out "$work/req.csr" &&
     certs__run "$work/log" "$CERTS_OPENSSL" ca -batch -notext -config "$work/ca.cnf" \
       -startdate "$start" -enddate "$end" -extfile "$work/ext.cnf" -extensions v3_leaf \
       -in "$work/req.csr" -out "$dir/$name.crt"; then
    rm -rf "$work"
  else
    rm -rf "$work"; rm -f "$dir/$name.key" "$dir/$name.crt"; return 1
  fi
  cat "$dir/$name.crt" "$dir/$name.key" >"$dir/$name.pem" && chmod 600 "$dir/$name.pem"
}

make_test_pki() {
  local dir=$1 sans=${2:-"DNS:sbc.test,IP:198.18.0.1"}
  [ -n "$dir" ] || { certs__fail "usage: make_test_pki DIR [SERVER_SANS]"; return 1; }
  command -v "$CERTS_OPENSSL" >/dev/null || { certs__fail "no $CERTS_OPENSSL (apt-get install openssl)"; return 1; }
  mkdir -p "$dir" || { certs__fail "cannot create $dir"; return 1; }
  make_ca "$dir" ca "sbc test CA" &&
  make_ca "$dir" ca2 "unrelated test CA" &&
  make_leaf "$dir" server "$sans" server ca &&
  make_leaf "$dir" wrongname "DNS:wrong.test" server ca &&
  make_leaf "$dir" expired "$sans" server ca expired &&
  make_leaf "$dir" client "DNS:client.test" client ca &&
  make_leaf "$dir" untrusted "$sans" server ca2 &&
  make_leaf "$dir" untrusted-client "DNS:client.test" client ca2 ||
  { certs__fail "make_test_pki $dir failed"; return 1; }
}

# cert_check DIR NAME CA [HOST]: openssl verify of DIR/NAME.crt against DIR/CA.crt (and the
# host name or IP address when given). Quiet; returns openssl's verdict. For tests of the PKI itself.
cert_check() {
  local dir=$1 name=$2 ca=$3 host=${4:-} opt=()
  if [[ $host =~ ^[0-9.]+$ || $host == *:* ]]; then opt=(-verify_ip "$host"); elif [ -n "$host" ]; then opt=(-verify_hostname "$host"); fi
  "$CERTS_OPENSSL" verify -CAfile "$dir/$ca.crt" "${opt[@]}" "$dir/$name.crt" >/dev/null 2>&1
}
