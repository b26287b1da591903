#!/bin/sh
# Recompute the Merkle root of a readproof bundle (plain statement JSON) from
# its listed entries with stock tools (jq, sha256sum, xxd), offline. Usage:
# sh merkle-root.sh bundle.json. docs/evidence.md quotes everything below
# these comment lines verbatim; evidence tests run it against the vectors.
set -eu
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
jq -r '.predicate.entries[] |
  if (.position | type) == "number" and .position == (.position | floor) and .position >= 0
    and .position < 4294967296 and (.uri | type) == "string" and (.content_hash | type) == "string"
    and .uri != "" and .content_hash != "" and ((.uri + .content_hash) | explode | any(. < 32 or . == 127) | not)
  then "\(.position)\t\(.uri)\t\(.content_hash)"
  else error("entry \(.position): not hashable here (position not a uint32, uri or content_hash empty or with a control character)") end' "$1" > "$tmp/entries"
while IFS='	' read -r pos uri hash; do
  { printf '%08x00' "$pos" | xxd -r -p; printf '%s\000%s' "$uri" "$hash"; } |
    sha256sum | cut -c1-64
done < "$tmp/entries" > "$tmp/level"
if [ ! -s "$tmp/level" ]; then printf '' | sha256sum | cut -c1-64; exit 0; fi
while [ "$(wc -l < "$tmp/level")" -gt 1 ]; do
  if [ $(( $(wc -l < "$tmp/level") % 2 )) -eq 1 ]; then tail -n 1 "$tmp/level" >> "$tmp/level"; fi
  while read -r left && read -r right; do
    printf '%s%s' "$left" "$right" | xxd -r -p | sha256sum | cut -c1-64
  done < "$tmp/level" > "$tmp/next"
  mv "$tmp/next" "$tmp/level"
done
cat "$tmp/level"
