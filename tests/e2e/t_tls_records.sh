#!/usr/bin/env bash
# Many TLS records in one segment. A client (Python's ssl, 198.18.0.2) opens a TLS connection to
# sbcd's TLS trunk and writes, each in its own TLS record (as Kamailio and most stacks write
# them) and all in one send: first 64 CRLF keep-alive pings then 4 OPTIONS to sbcd itself
# (72 small records in about two segments). sbcd reads ahead (one recv takes every record the
# socket holds) and reads at most 16 records of one connection per loop iteration, so most of
# them wait in OpenSSL's buffer, where epoll cannot see them, with nothing more to come from
# the client: every ping must still be answered (sbc_stream_pings_answered_total +64) and every
# OPTIONS get its 200 within 5 s. Then 48 OPTIONS in one send (about 16 KB) on a second
# connection: 48 answered, 48 counted in.
source "$(dirname "$0")/sip_common.sh"
source "$(dirname "$0")/tls_common.sh"
tls_pki
SIP_EXTRA_CONFIG="$(tls_trunk tls-in 5061 '["198.18.0.2/32"]')
$(tls_server_config)"
sip_up
note "sbcd up (${SECONDS} s)"

metric() { # NAME [LABEL]: the sum of NAME's samples (those with LABEL) in /metrics
  curl -sf "http://$HTTP/metrics" |
    awk -v n="$1" -v l="${2:-}" '($1 == n || index($1, n "{") == 1) && (l == "" || index($1, l)) { v += $NF } END { print v + 0 }'
}

# settled NAME LABEL WANT: NAME's value once it reaches WANT (the report behind /metrics is
# refreshed periodically), or what it is after 3 s.
settled() {
  local v i
  for i in $(seq 30); do
    v=$(metric "$1" "$2")
    [ "$v" -ge "$3" ] && break
    sleep 0.1
  done
  echo "$v"
}

# records PINGS OPTIONS: one connection, PINGS pings then OPTIONS requests, one record each, all
# in one send; prints the number of 200 responses read within 5 s.
records() {
  ip netns exec "$SIPP_NS_HOSTS" python3 - "$PKI/ca.crt" "$SIPP_PROXY_ADDR" "$1" "$2" <<'PY'
import socket, ssl, sys, time
ca, dst, pings, options = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
ctx = ssl.create_default_context(cafile=ca)
sock = socket.create_connection((dst, 5061), timeout=10, source_address=("198.18.0.2", 0))
inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
tls = ctx.wrap_bio(inc, out, server_hostname="sbc.test")
while True:
    try:
        tls.do_handshake()
        break
    except ssl.SSLWantReadError:
        if out.pending:
            sock.sendall(out.read())
        data = sock.recv(65536)
        if not data:
            sys.exit("handshake: connection closed")
        inc.write(data)
if out.pending:
    sock.sendall(out.read())
time.sleep(0.2)  # sbcd's session tickets are read below, with the answers
port = sock.getsockname()[1]
for _ in range(pings):
    tls.write(b"\r\n\r\n")  # one record each
for n in range(1, options + 1):
    tls.write((f"OPTIONS sip:{dst} SIP/2.0\r\n"
               f"Via: SIP/2.0/TLS 198.18.0.2:{port};branch=z9hG4bK-rec{port}-{n}\r\n"
               "Max-Forwards: 70\r\n"
               f"From: <sip:records@198.18.0.2>;tag=rec{port}\r\n"
               f"To: <sip:{dst}>\r\n"
               f"Call-ID: records-{port}@198.18.0.2\r\n"
               f"CSeq: {n} OPTIONS\r\n"
               "Content-Length: 0\r\n\r\n").encode())
sock.sendall(out.read())  # every record in one write
deadline, plain = time.time() + 5, b""
while plain.count(b"SIP/2.0 200 ") < options and time.time() < deadline:
    sock.settimeout(max(0.05, deadline - time.time()))
    try:
        data = sock.recv(65536)
    except socket.timeout:
        break
    if not data:
        break
    inc.write(data)
    while True:
        try:
            plain += tls.read(65536)
        except (ssl.SSLWantReadError, ssl.SSLZeroReturnError):
            break
print(plain.count(b"SIP/2.0 200 "))
PY
}

pings0=$(metric sbc_stream_pings_answered_total)
got=$(records 64 4) || fail "the TLS client failed"
pings=$(( $(settled sbc_stream_pings_answered_total "" $((pings0 + 64))) - pings0 ))
[ "$got" -eq 4 ] || { tail -n 20 "$DIR/sbcd.log" >&2; fail "64 pings and 4 OPTIONS in 68 TLS records in one send: $got OPTIONS answered within 5 s, expected 4"; }
[ "$pings" -eq 64 ] || fail "64 pings in one send: sbc_stream_pings_answered_total rose by $pings, expected 64"
note "64 pings and 4 OPTIONS, one record each, in one send: all answered (${SECONDS} s)"

in0=$(settled sbc_stream_messages_total 'direction="in"' 4)  # the 4 OPTIONS above
got=$(records 0 48) || fail "the TLS client failed (second connection)"
in1=$(settled sbc_stream_messages_total 'direction="in"' $((in0 + 48)))
[ "$got" -eq 48 ] || fail "48 OPTIONS in 48 TLS records in one send: $got answered within 5 s, expected 48"
[ $((in1 - in0)) -eq 48 ] || fail "sbc_stream_messages_total{direction=\"in\"} rose by $((in1 - in0)), expected 48"
note "48 OPTIONS in one send: 48 answered, 48 counted in (${SECONDS} s)"
echo "PASS: 64 pings and 4 OPTIONS in 68 TLS records sent at once all answered (more records than one iteration reads, waiting in OpenSSL's buffer), and 48 OPTIONS in one send"
