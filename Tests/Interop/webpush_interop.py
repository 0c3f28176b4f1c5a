#!/usr/bin/env python3
"""Independent check of one WebPush request PushRelay sent: decrypts the body with `http_ece` (RFC 8291 aes128gcm)
and verifies the VAPID JWT with `py_vapid` and `cryptography`.

Input (stdin, JSON): {"body": <base64url of the request body>, "authorization": <Authorization header>,
                      "endpoint": <the subscription endpoint>, "receiver_private_key": <base64url raw P-256 scalar>,
                      "auth": <base64url auth secret>, "now": <the sender's clock, Unix seconds; optional>}
Output (stdout, JSON): {"plaintext": <decrypted text>, "claims": {...}, "k": <public key from the header>}.
Exit status 2 with a message on stderr when a required package is missing; 1 when a check fails.
"""
import base64, json, sys, time
from urllib.parse import urlsplit

try:
    import http_ece
    import py_vapid
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
except ImportError as e:
    sys.stderr.write(f"missing Python package ({e}); install with: python3 -m pip install http_ece py_vapid cryptography\n")
    sys.exit(2)


def b64d(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def fail(msg):
    sys.stderr.write(msg + "\n")
    sys.exit(1)


req = json.load(sys.stdin)
# --- body: RFC 8291 with http_ece ---------------------------------------------------------------------------------
receiver = ec.derive_private_key(int.from_bytes(b64d(req["receiver_private_key"]), "big"), ec.SECP256R1())
plaintext = http_ece.decrypt(b64d(req["body"]), private_key=receiver, auth_secret=b64d(req["auth"]), version="aes128gcm")

# --- Authorization: vapid t=<jwt>, k=<key> -----------------------------------------------------------------------
auth = req["authorization"]
if not auth.startswith("vapid "):
    fail(f"Authorization is not a vapid scheme: {auth[:20]}")
params = dict(p.strip().split("=", 1) for p in auth[len("vapid "):].split(","))
jwt, k = params["t"], params["k"]
# py_vapid's own verification (signature over header.claims with the public key k). Its parser does not allow the
# optional whitespace after the comma that RFC 8292's example has, so the parameters are re-joined without it.
if not py_vapid.Vapid02.verify(f"vapid t={jwt},k={k}"):
    fail("py_vapid: the VAPID JWT signature does not verify with k")
# The same, spelled out with cryptography: raw r||s → DER, ECDSA P-256 SHA-256.
header_b64, claims_b64, sig_b64 = jwt.split(".")
sig = b64d(sig_b64)
if len(sig) != 64:
    fail(f"ES256 signatures are 64 bytes (r||s); got {len(sig)}")
pub = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64d(k))
pub.verify(encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big")),
           f"{header_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))
header = json.loads(b64d(header_b64))
claims = json.loads(b64d(claims_b64))
if header.get("alg") != "ES256":
    fail(f"alg must be ES256: {header}")
parts = urlsplit(req["endpoint"])
if claims.get("aud") != f"{parts.scheme}://{parts.netloc}":
    fail(f"aud {claims.get('aud')} is not the endpoint origin")
# Checked against the sender's clock when given (the tests run PushRelay on a fixed clock), else the real one.
now = req.get("now", time.time())
if not isinstance(claims.get("exp"), int) or not (now < claims["exp"] <= now + 86400 + 60):
    fail(f"exp must be whole seconds within 24 h: {claims.get('exp')}")
if not str(claims.get("sub", "")).startswith("mailto:"):
    fail(f"sub must be a mailto: contact: {claims.get('sub')}")
json.dump({"plaintext": plaintext.decode(), "claims": claims, "k": k}, sys.stdout)
