#!/bin/sh
# `git describe` for setuptools-scm (pyproject.toml) and dpcore/version.py alike:
# "v<release>-<commits since>-g<full commit>[-dirty]" (setuptools-scm's default is --abbrev=40).
# The release is the last vX.Y.Z tag; in a clone without tags (a CI clone of one branch) it is
# the release CITATION.cff names, counted from the commit that set it, so a checkout without
# tags still says 0.2.1.devN, not 0.1.devN.
cd "$(dirname "$0")/.." || exit 1
git describe --dirty --tags --long --abbrev=40 --match 'v[0-9]*' 2>/dev/null && exit 0
release=$(sed -n 's/^version: *//p' CITATION.cff 2>/dev/null)
since=$(git log -1 --format=%H -G '^version: ' -- CITATION.cff 2>/dev/null)
[ -n "$release" ] && [ -n "$since" ] || exit 128  # no release yet: setuptools-scm's 0.1.devN
distance=$(git rev-list --count "$since..HEAD") || exit 128
dirty=""
[ -z "$(git status --porcelain --untracked-files=no)" ] || dirty="-dirty"
echo "v$release-$distance-g$(git rev-parse HEAD)$dirty"
