#!/bin/sh
# Verify the DSSE signature of a signed readproof bundle with stock tools
# (jq, base64, wc, openssl 3), offline. Run in a directory holding
# bundle.dsse.json and the signer's key.pub.pem. docs/evidence.md quotes
# everything below these comment lines verbatim; evidence tests run it.
set -eu
jq -j .payload bundle.dsse.json | base64 -d > payload.json
jq -j '.signatures[0].sig' bundle.dsse.json | base64 -d > sig.bin
type='application/vnd.in-toto+json'
printf 'DSSEv1 %d %s %d ' "${#type}" "$type" "$(wc -c < payload.json)" > pae.bin
cat payload.json >> pae.bin
openssl pkeyutl -verify -pubin -inkey key.pub.pem -rawin -in pae.bin -sigfile sig.bin
