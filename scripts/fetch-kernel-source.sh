#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch a kernel source tarball that bookworm does not carry (linux-source-7.3
# from trixie-backports) into the cache, without changing this machine's
# release: apt gets its own sources list, lists and package cache under the
# cache directory, downloads the one .deb and dpkg -x unpacks it there. Never
# installs anything. Prints the tarball's path last. Idempotent.
#
# usage: scripts/fetch-kernel-source.sh SERIES   (SERIES: 7.3)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

series=${1:?usage: fetch-kernel-source.sh SERIES}
version=$(rt_source_version "$series")
suite=$(rt_source_suite "$series")
dst=$RT_CACHE/src/linux-source-${series}_$version
tarball=$dst/usr/src/linux-source-$series.tar.xz
# One fetch at a time (as build-kernel.sh builds): test.sh builds several
# kernels of one series at once, and two apt-get updates in one lists
# directory (no apt lock: not ours to take) pull each other's files out of
# lists/partial ("Failed to stat", seen on a fresh machine). The second
# caller waits and finds the tarball.
mkdir -p "$RT_CACHE"
exec 9>"$RT_CACHE/src-$series.lock"
flock 9
if [ -f "$tarball" ]; then
	echo "$tarball"
	exit 0
fi

apt_dir=$RT_CACHE/apt-$suite
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
# From the mirror this machine's apt uses.
mirror=$(rt_apt_mirror)
cat >"$apt_dir/sources.list" <<SRC
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main
SRC
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/nonexistent
	-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
	-o Debug::NoLocking=1 -o APT::Sandbox::User=root -q)
rt_log "apt ($suite, own lists in $apt_dir): linux-source-$series=$version"
apt-get "${apt_opts[@]}" update >&2
mkdir -p "$RT_CACHE/src"
tmp=$(mktemp -d "$RT_CACHE/src/fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get "${apt_opts[@]}" download "linux-source-$series=$version" >&2) ||
	rt_die "linux-source-$series $version not found in $suite (the pinned version: scripts/lib.sh)"
mkdir -p "$tmp/x"
dpkg -x "$tmp"/linux-source-"$series"_*.deb "$tmp/x"
[ -f "$tmp/x/usr/src/linux-source-$series.tar.xz" ] || rt_die "no tarball in the package"
rm -rf "$dst"
mv "$tmp/x" "$dst"
rm -rf "$apt_dir/cache/archives"/*.deb
echo "$tarball"
