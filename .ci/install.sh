#!/usr/bin/env bash
# The README's Install section, run as pasted against this checkout instead
# of the network: `CGO_ENABLED=0 go install github.com/readproof/readproof@latest` through a
# file-based module proxy that serves HEAD (dependencies come from the module
# cache, verified by the module's own go.sum), and the build-from-a-clone
# block with the clone URL pointed at this repository. The two blocks below
# are the README's, byte for byte (TestREADMEBlocksHeld).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

cat > "$work/install.sh" <<'BLOCK'
CGO_ENABLED=0 go install github.com/readproof/readproof@latest
readproof version
BLOCK

cat > "$work/clone.sh" <<'BLOCK'
git clone https://github.com/readproof/readproof.git
cd readproof
CGO_ENABLED=0 go build -o readproof .
./readproof version
BLOCK

# A module proxy holding HEAD as the only version of the module.
mod=github.com/readproof/readproof
when=$(TZ=UTC git show -s --format=%cd --date=format-local:%Y%m%d%H%M%S HEAD)
version=v0.0.0-$when-$(git rev-parse --short=12 HEAD)
dir="$work/proxy/$mod/@v"
mkdir -p "$dir"
echo "$version" > "$dir/list"
printf '{"Version":"%s","Time":"%s"}\n' "$version" "$(TZ=UTC git show -s --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD)" > "$dir/$version.info"
cp "$dir/$version.info" "$work/proxy/$mod/@latest"
cp go.mod "$dir/$version.mod"
git archive --format=zip --prefix="$mod@$version/" -o "$dir/$version.zip" HEAD
# into the module cache the proxy chain reads: the modules the build needs,
# and the go.mod of every module in the graph (neither touches go.sum)
go mod download
go list -m all >/dev/null

echo "== README install block (go install ...@latest from a proxy serving $version)"
(
  cd "$work"
  # The module cache was filled by `go mod download` above, which checked
  # every dependency against go.sum; HEAD itself is in no checksum database.
  export GOPROXY="file://$work/proxy,file://$(go env GOMODCACHE)/cache/download" GOSUMDB=off GOFLAGS=
  export GOBIN="$work/bin" PATH="$work/bin:$PATH"
  bash -e install.sh
)

echo "== README build-from-a-clone block (cloning $repo)"
(
  cd "$work"
  git clone --quiet --bare "$repo" src/readproof.git
  sed -e "s#https://github.com/readproof/readproof.git#$work/src/readproof.git#" clone.sh > clone-local.sh
  GOFLAGS= bash -e clone-local.sh
)
