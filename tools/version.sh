#!/bin/sh
# The commit framewalk is built from, for src/version.h (meson's vcs_tag runs
# this on every build): `git rev-parse --short HEAD` in a git checkout; in a
# tree made by `git archive` (a release tarball, `make deb`), the commit git
# wrote into tools/COMMIT (export-subst, .gitattributes). Anything else
# prints nothing and exits 1, and meson uses its fallback: no commit.
#   tools/version.sh SOURCE_DIR
src=${1:?usage: $0 SOURCE_DIR}
if [ -e "$src/.git" ]; then
	git -C "$src" rev-parse --short HEAD 2>/dev/null && exit 0
fi
commit=$(cat "$src/tools/COMMIT" 2>/dev/null) || exit 1
case $commit in
'' | *'$'*) exit 1 ;;         # not substituted: not from git archive
esac
printf '%s\n' "$commit"
