#!/bin/sh
# Regenerate src/output/assets/vendor/ from npm: the minified UMD bundles of
# d3 and d3-flame-graph that every HTML view inlines, their licenses, and a
# SHA256SUMS file the build checks them against. The versions are pinned in
# tools/embed/package.json and package-lock.json; the result is checked in,
# so building framewalk never needs npm or the network.
#
#   tools/embed/vendor.sh          install (npm ci) and copy
#   tools/embed/vendor.sh --check  only verify the checked-in copy
set -eu

here=$(cd "$(dirname "$0")" && pwd)
dest="$here/../../src/output/assets/vendor"

check() {
	(cd "$dest" && sha256sum --quiet -c SHA256SUMS)
}

if [ "${1:-}" = "--check" ]; then
	check && echo "vendor: $dest matches SHA256SUMS"
	exit
fi

if ! command -v npm >/dev/null 2>&1; then
	echo "vendor.sh: npm is missing (apt-get install npm)" >&2
	exit 1
fi
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
nm="$here/node_modules"
mkdir -p "$dest"
cp "$nm/d3/dist/d3.min.js" "$dest/d3.min.js"
cp "$nm/d3/LICENSE" "$dest/LICENSE.d3"
cp "$nm/d3-flame-graph/dist/d3-flamegraph.umd.min.js" "$dest/d3-flamegraph.umd.min.js"
cp "$nm/d3-flame-graph/LICENSE" "$dest/LICENSE.d3-flame-graph"
{
	echo "d3 $(node -p "require('$nm/d3/package.json').version") (ISC, LICENSE.d3)"
	echo "d3-flame-graph $(node -p "require('$nm/d3-flame-graph/package.json').version") (Apache-2.0, LICENSE.d3-flame-graph)"
} >"$dest/VERSIONS"
(cd "$dest" && sha256sum d3.min.js d3-flamegraph.umd.min.js >SHA256SUMS)
check
echo "vendor: updated $dest"
cat "$dest/VERSIONS"
