#!/usr/bin/env python3
"""Check the verdict-record MAC vectors with Python's hmac/hashlib only.

Written from docs/PROBE_PROTOCOL.md section 10.6, not from the Go code. Usage:
    python3 check_record_mac.py [VECTOR.json ...]   (default: every *.json here)
Each vector holds the master secret, the parent commit id and verdicts.json as
stored. Prints one line per vector and exits 1 on the first mismatch.
"""
import glob, hashlib, hmac, json, os, struct, sys


def hkdf_sha256(ikm, salt, info, length):
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    out, t, i = b"", b"", 1
    while len(out) < length:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        out += t
        i += 1
    return out[:length]


def field(s):
    b = s.encode("utf-8")
    return struct.pack(">I", len(b)) + b


def boolean(x):
    return "true" if x else "false"


def mac_input(rec, parent):
    # times are copied as stored: readproof stores them in UTC with the
    # shortest fraction (RFC 3339), which is the form the rule asks for.
    fields = [parent, rec["format"], rec["run_id"], rec["manifest_id"], rec["checked_at"],
              boolean(rec.get("clock_override", False)), str(rec["check"]), rec.get("mac_key", ""),
              str(len(rec["entries"]))]
    for e in rec["entries"]:
        age = str(e["age_seconds"]) if "age_seconds" in e else ""
        fields += [str(e["position"]), e["uri"], e["session"], e["verdict"], e["reason"], str(e["bucket"]), age,
                   e["answer_sha256"], boolean(e["delivered_hash_verified"]), boolean(e["adjudicated"]),
                   e.get("adjudicated_verdict", ""), e.get("adjudicated_at", "")]
    return b"".join(field(f) for f in ["readproof-verdict-record-v1"] + fields)


def check(v):
    master = bytes.fromhex(v["master_secret_hex"])
    salt = b"readproof/probe/v1/hkdf-salt"
    kv = hkdf_sha256(master, salt, b"readproof/probe/v1/verdict-key", 32)
    assert kv.hex() == v["verdict_subkey_hex"], "verdict subkey"
    key_id = hmac.new(kv, b"readproof/probe/v1/verdict-key-id", hashlib.sha256).digest()[:8].hex()
    rec = json.loads(v["verdicts_json"])
    assert key_id == rec["mac_key"], "mac_key"
    data = mac_input(rec, v["parent"])
    assert data.hex() == v["input_hex"], "MAC input"
    mac = "hmac-sha256:" + hmac.new(kv, data, hashlib.sha256).hexdigest()
    assert mac == rec["mac"], "mac"


def main(paths):
    if not paths:
        here = os.path.dirname(os.path.abspath(__file__))
        paths = sorted(glob.glob(os.path.join(here, "*.json")))
    for p in paths:
        with open(p) as f:
            v = json.load(f)
        try:
            check(v)
        except AssertionError as e:
            print("FAIL %s: %s" % (os.path.basename(p), e))
            return 1
        print("ok   %s" % os.path.basename(p))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
