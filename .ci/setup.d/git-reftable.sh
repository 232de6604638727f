#!/usr/bin/env bash
# A git that can make a reftable repository (git >= 2.45), for tests/store/test_reftable.py only.
#
# Debian 12's git is 2.39, which knows only the files backend. Debian 13's source package of git
# is fetched with apt-get (Debian's own registry, the only network it uses) and built without
# curl, expat, gettext, Perl, Python or Tcl into the tests' cache, where tests/git_tools.py finds
# it; the system's git is not touched. About three minutes on two cores, once per machine.
set -euo pipefail

SUITE=trixie
WANT=2.47.3
real_home=$(getent passwd "$(id -u)" | cut -d: -f6)
cache=${EPIMEM_TEST_CACHE:-$real_home/.cache/epimem-tests}
prefix=$cache/git-$WANT
if [ -x "$prefix/bin/git" ]; then
  echo "git $WANT for reftable tests: already built in $prefix"
  exit 0
fi
for tool in apt-get make cc tar; do
  command -v "$tool" >/dev/null || { echo "git $WANT for reftable tests: $tool is missing"; exit 1; }
done
[ -e /usr/include/zlib.h ] || apt-get install -y -qq zlib1g-dev >/dev/null

mkdir -p "$cache"
exec 9>"$cache/git-$WANT.lock"
flock 9
[ -x "$prefix/bin/git" ] && exit 0

work=$(mktemp -d "$cache/git-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/archives/partial" "$work/src"
echo "deb-src http://deb.debian.org/debian $SUITE main" >"$work/sources.list"
apt=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
     -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work" -o "APT::Sandbox::User=root")
apt-get "${apt[@]}" -qq update
(cd "$work/src" && apt-get "${apt[@]}" -qq source --download-only "git=1:$WANT-*" >/dev/null 2>&1 \
  || apt-get "${apt[@]}" -qq source --download-only git >/dev/null)
orig=$(ls "$work"/src/git_*.orig.tar.* | head -1)
tar -xf "$orig" -C "$work/src"
src=$(find "$work/src" -maxdepth 1 -type d -name 'git-*' | head -1)
make -C "$src" -j"$(nproc)" -s prefix="$prefix" NO_CURL=1 NO_EXPAT=1 NO_GETTEXT=1 NO_TCLTK=1 NO_PERL=1 \
  NO_PYTHON=1 NO_OPENSSL=1 NO_INSTALL_HARDLINKS=1 install >/dev/null
"$prefix/bin/git" --version
