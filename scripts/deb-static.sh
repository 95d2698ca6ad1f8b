#!/bin/sh
# The Debian package of a static framewalk build, for an architecture whose
# libraries this machine does not have (arm64: `make deb ARCH=aarch64`).
# The amd64 package is Debian's own build (debian/, dpkg-buildpackage, its
# library dependencies from dh_shlibdeps); a static binary has none, so this
# one is assembled with dpkg-deb from what `meson install` puts in place
# (the binary, the man page, the documentation: meson.build's one list),
# compressed as dh_compress would, with debian/copyright and the changelog,
# and then checked: its fields, its files, the binary's architecture.
#
#   scripts/deb-static.sh DEBARCH BUILD_DIR OUT_DIR
#   scripts/deb-static.sh arm64 build-static-aarch64 build-deb-aarch64
set -eu
[ $# -eq 3 ] || { echo "usage: $0 DEBARCH BUILD_DIR OUT_DIR" >&2; exit 2; }
arch=$1 build=$2 out=$3
cd "$(dirname "$0")/.."
case $arch in
arm64) machine="ARM aarch64" ;;
amd64) machine="x86-64" ;;
*) echo "deb-static: no ELF machine known for $arch" >&2; exit 2 ;;
esac
version=$(dpkg-parsechangelog -S Version)
project=$(sed -n "s/^ *version : '\(.*\)',$/\1/p" meson.build | head -1)
[ "$version" = "$project" ] || {
	echo "deb-static: debian/changelog says $version, meson.build $project" >&2; exit 1; }

rm -rf "$out" && mkdir -p "$out"
stage=$(cd "$out" && pwd)/stage
meson install -C "$build" --no-rebuild --destdir "$stage" --quiet
# the static build's prefix is /usr/local; a package installs under /usr
if [ -d "$stage/usr/local" ]; then
	cp -a "$stage/usr/local/." "$stage/usr/"
	rm -rf "$stage/usr/local"
fi
doc=$stage/usr/share/doc/framewalk
mkdir -p "$doc"
cp debian/copyright "$doc/copyright"
cp debian/changelog "$doc/changelog.Debian"
gzip -9n "$doc/changelog.Debian" "$doc"/*.md "$stage"/usr/share/man/man1/framewalk.1
chmod 0755 "$stage/usr/bin/framewalk"
find "$stage" -type d -exec chmod 0755 {} +
find "$stage/usr/share" -type f -exec chmod 0644 {} +

mkdir -p "$stage/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
{
	echo "Package: framewalk"
	echo "Version: $version"
	echo "Architecture: $arch"
	echo "Maintainer: $(sed -n 's/^Maintainer: //p' debian/control)"
	echo "Installed-Size: $size"
	echo "Section: devel"
	echo "Priority: optional"
	# the description, as debian/control has it, with one line on the build
	sed -n '/^Description:/,$p' debian/control
	echo " ."
	echo " This package holds the statically linked build (no library"
	echo " dependencies; debug files from the machine only, no debuginfod)."
} > "$stage/DEBIAN/control"
deb=$out/framewalk_${version}_${arch}.deb
dpkg-deb --root-owner-group --build "$stage" "$deb" >/dev/null
rm -rf "$stage"

# Checked as the amd64 package is by tests/functional/test_ship.py.
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = framewalk ] && [ "$(field Version)" = "$version" ] &&
	[ "$(field Architecture)" = "$arch" ] && [ -z "$(field Depends)" ] ||
	{ echo "deb-static: $deb: wrong control fields" >&2; dpkg-deb -I "$deb" >&2; exit 1; }
files=$(dpkg-deb -c "$deb")
for want in ./usr/bin/framewalk ./usr/share/man/man1/framewalk.1.gz \
	./usr/share/doc/framewalk/copyright ./usr/share/doc/framewalk/README.md.gz \
	./usr/share/doc/framewalk/CHECK.md.gz ./usr/share/doc/framewalk/changelog.Debian.gz; do
	echo "$files" | awk '{print $NF}' | grep -qx "$want" ||
		{ echo "deb-static: $want is not in $deb" >&2; exit 1; }
done
check=$(mktemp -d)
dpkg-deb -x "$deb" "$check"
file -b "$check/usr/bin/framewalk" | grep -Eq "ELF 64-bit LSB .*$machine.*static(-pie)? linked|ELF 64-bit LSB .*$machine.*statically linked" ||
	{ echo "deb-static: usr/bin/framewalk is not a static $machine ELF:" \
		"$(file -b "$check/usr/bin/framewalk")" >&2; rm -rf "$check"; exit 1; }
rm -rf "$check"
echo "$deb"
