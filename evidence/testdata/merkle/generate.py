#!/usr/bin/env python3
"""Generate the Readproof v0.3 Merkle test vectors in this directory.

This program is deliberately independent of the Go package it tests: it uses
only Python's hashlib and follows the rule as written in docs/evidence.md.

    leaf = sha256(uint32be(position) || 0x00 || uri || 0x00 || content_hash)
    root = sha256("") for no leaves, the leaf itself for one leaf; otherwise
           pair nodes level by level, duplicating the last node of an odd
           level, parent = sha256(left || right)

Run it from anywhere: python3 generate.py  (it rewrites the *.json beside it).
"""

import hashlib
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def content_hash(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def leaf(position: int, uri: str, chash: str) -> bytes:
    return hashlib.sha256(
        struct.pack(">I", position) + b"\x00" + uri.encode("utf-8") + b"\x00" + chash.encode("utf-8")
    ).digest()


def root(leaves):
    if not leaves:
        return hashlib.sha256(b"").digest()
    level = list(leaves)
    while len(level) > 1:
        if len(level) % 2 == 1:
            level.append(level[-1])
        level = [hashlib.sha256(level[i] + level[i + 1]).digest() for i in range(0, len(level), 2)]
    return level[0]


def vector(name, description, docs, include_content=True, include_leaves=True):
    entries = []
    leaves = []
    for position, (uri, content) in enumerate(docs):
        chash = content_hash(content)
        e = {"position": position, "uri": uri, "content_hash": chash}
        if include_content:
            e["content"] = content.decode("utf-8")
        entries.append(e)
        leaves.append(leaf(position, uri, chash))
    out = {"description": description, "entries": entries}
    if include_leaves:
        out["leaves"] = [l.hex() for l in leaves]
    out["root"] = root(leaves).hex()
    with open(os.path.join(HERE, name + ".json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(name, out["root"])


REFUNDS = ("readproof://demo/policies/refunds", b"Products can be refunded within 30 days.\n")

vector("zero", "no entries: the root is sha256 of the empty input", [])
vector("one", "the published Readproof v0.3 example: one entry, the root is its leaf", [REFUNDS])
vector(
    "two",
    "two entries: the root is sha256(leaf0 || leaf1)",
    [REFUNDS, ("readproof://demo/policies/shipping", b"We ship within 2 business days.\n")],
)
vector(
    "three",
    "three entries: an odd level duplicates its last node, root = sha256(sha256(l0||l1) || sha256(l2||l2))",
    [
        REFUNDS,
        ("readproof://demo/policies/shipping", b"We ship within 2 business days.\n"),
        ("readproof://demo/faq/returns", "Returns: see the refund policy. Über-simple, ünicode.\n".encode("utf-8")),
    ],
)
vector(
    "thousand",
    "1,000 entries readproof://vectors/doc-NNNN with content 'document N\\n'; levels of 125 and 63 nodes are odd and exercise duplication",
    [("readproof://vectors/doc-%04d" % i, ("document %d\n" % i).encode("utf-8")) for i in range(1000)],
    include_content=False,
    include_leaves=False,
)
