# SPDX-License-Identifier: GPL-2.0
# Sourced by tests.sh on Debian's kernel: the Debian packages' modules as
# DKMS installed them (scripts/build-debian.sh keeps the module trees:
# compressed, signed, DKMS's depmod), loaded through Debian's kmod. Each
# check prints `RTUN-PKG: ok WHAT` or `RTUN-PKG: not ok WHAT -- WHY`
# (scripts/test.sh counts them). The trees are mounted over
# /lib/modules/`uname -r` and /etc/modprobe.d only while a check runs, and
# the kernel runs kmod's modprobe only then: the suite itself loads its
# modules by path, as on every other kernel.
#
#   pkg_before [dropin]  beside: `modprobe rust_tun`; dropin: `modprobe
#                        vhost_net` loads rust_tun_vhost and rust_tun dropin=1,
#                        and so does opening /dev/net/tun
#   pkg_after [dropin]   dropin: on a kernel without rust_tun the drop-in
#                        file's install line loads tun.ko; beside: with
#                        module signatures enforced, DKMS's unenrolled key
#                        is refused

PKG_REL=$(uname -r)
# iproute2's (busybox's has no tuntap).
IP=/usr/bin/ip
PKG_FAILED=0
pkg_ok() { echo "RTUN-PKG: ok $1"; }
pkg_fail() { echo "RTUN-PKG: not ok $1 -- $2"; PKG_FAILED=1; }
pkg_loaded() { grep -q "^$1 " /proc/modules; }

# pkg_use TREE: TREE's modules and modprobe.d, and kmod as the kernel's modprobe.
pkg_use() {
	mkdir -p "/lib/modules/$PKG_REL" /etc/modprobe.d /sbin
	mount -o bind "/pkg/$1/lib/modules/$PKG_REL" "/lib/modules/$PKG_REL" || return 1
	mount -o bind "/pkg/$1/etc/modprobe.d" /etc/modprobe.d || return 1
	PKG_MODPROBE=$(cat /proc/sys/kernel/modprobe)
	ln -sfn /pkg/kmod/bin/modprobe /sbin/modprobe
	echo /sbin/modprobe >/proc/sys/kernel/modprobe
	export PATH=/pkg/kmod/bin:$PATH
}
pkg_unuse() {
	umount /etc/modprobe.d
	umount "/lib/modules/$PKG_REL"
	echo "$PKG_MODPROBE" >/proc/sys/kernel/modprobe
	rm -f /sbin/modprobe
	export PATH=${PATH#/pkg/kmod/bin:}
}

# The static nodes kmod lists (systemd-tmpfiles makes them at boot from
# modules.devname: /dev/net/tun, tun.ko's); devtmpfs took /dev/net/tun
# away with the last driver that registered it.
pkg_static_nodes() {
	kmod static-nodes --format=tmpfiles | while read -r type path mode _ _ _ dev; do
		case $type in c*) mkdir -p "${path%/*}"; [ -e "$path" ] || mknod -m "$mode" "$path" c "${dev%:*}" "${dev#*:}" ;; esac
	done
	[ -c /dev/net/tun ] || pkg_fail "kmod static-nodes" "no /dev/net/tun"
}

pkg_before() {
	if [ "${1:-}" = dropin ]; then
		pkg_use dropin || { pkg_fail "dropin tree" "mount failed"; return 1; }
		local what="modprobe vhost_net loads rust_tun_vhost and rust_tun dropin=1"
		if ! out=$(modprobe vhost_net 2>&1); then
			pkg_fail "$what" "modprobe failed: $out"
		elif ! pkg_loaded rust_tun_vhost || ! pkg_loaded rust_tun || pkg_loaded tun; then
			pkg_fail "$what" "modules: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
		elif [ "$(cat /sys/module/rust_tun/parameters/dropin)" != Y ]; then
			pkg_fail "$what" "rust_tun dropin=$(cat /sys/module/rust_tun/parameters/dropin)"
		elif ! $IP tuntap add dev pkg0 mode tap || ! $IP link show pkg0 >/dev/null; then
			pkg_fail "$what" "ip tuntap add on /dev/net/tun failed"
		else
			$IP tuntap del dev pkg0 mode tap
			pkg_ok "$what"
		fi
		modprobe -r vhost_net rust_tun_vhost rust_tun 2>/dev/null
		pkg_loaded rust_tun && pkg_fail "modprobe -r vhost_net rust_tun_vhost rust_tun" "rust_tun still loaded"
		# On demand: the kernel's request_module("char-major-10-200"),
		# tun.ko's alias, the drop-in file's install line.
		what="opening /dev/net/tun loads rust_tun_vhost and rust_tun dropin=1 (the install line)"
		pkg_static_nodes
		if pkg_loaded rust_tun || pkg_loaded tun; then
			pkg_fail "$what" "already loaded: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
		elif ! out=$($IP tuntap add dev pkg0 mode tun 2>&1); then
			pkg_fail "$what" "ip tuntap add: $out"
		elif ! pkg_loaded rust_tun_vhost || ! pkg_loaded rust_tun || pkg_loaded tun ||
			[ "$(cat /sys/module/rust_tun/parameters/dropin)" != Y ]; then
			pkg_fail "$what" "modules: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
		else
			pkg_ok "$what"
		fi
		$IP tuntap del dev pkg0 mode tun 2>/dev/null
		modprobe -r rust_tun_vhost rust_tun 2>/dev/null
		pkg_loaded rust_tun && pkg_fail "modprobe -r rust_tun_vhost rust_tun" "rust_tun still loaded"
	else
		pkg_use beside || { pkg_fail "beside tree" "mount failed"; return 1; }
		local what="modprobe rust_tun loads DKMS's updates/dkms/rust_tun.ko.xz"
		if ! out=$(modprobe rust_tun 2>&1); then
			pkg_fail "$what" "modprobe failed: $out"
		elif ! pkg_loaded rust_tun || pkg_loaded tun; then
			pkg_fail "$what" "modules: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
		elif [ "$(modinfo -n rust_tun)" != "/lib/modules/$PKG_REL/updates/dkms/rust_tun.ko.xz" ]; then
			pkg_fail "$what" "modinfo -n rust_tun: $(modinfo -n rust_tun 2>&1)"
		else
			pkg_ok "$what"
		fi
		modprobe -r rust_tun || pkg_fail "modprobe -r rust_tun" "failed"
	fi
	pkg_unuse
	return $PKG_FAILED
}

pkg_after() {
	if [ "${1:-}" = dropin ]; then
		pkg_use fallback || { pkg_fail "fallback tree" "mount failed"; return 1; }
		local what="without rust_tun, /dev/net/tun loads tun.ko (the drop-in file's fallback)"
		pkg_static_nodes
		if pkg_loaded rust_tun || pkg_loaded tun; then
			pkg_fail "$what" "already loaded: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
		elif ! out=$($IP tuntap add dev pkg1 mode tun 2>&1); then
			pkg_fail "$what" "ip tuntap add: $out"
		elif ! pkg_loaded tun || pkg_loaded rust_tun; then
			pkg_fail "$what" "modules: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
		else
			pkg_ok "$what"
		fi
		$IP tuntap del dev pkg1 mode tun 2>/dev/null
		pkg_loaded tun && { rmmod tun || pkg_fail "rmmod tun" "failed"; }
	else
		pkg_use beside || { pkg_fail "beside tree" "mount failed"; return 1; }
		local what="module.sig_enforce=1 refuses rust_tun signed by an unenrolled key"
		# The last check of the boot: enforcement cannot be turned off.
		echo 1 >/sys/module/module/parameters/sig_enforce
		if out=$(modprobe rust_tun 2>&1); then
			pkg_fail "$what" "rust_tun loaded"
			rmmod rust_tun
		elif ! dmesg | grep -q 'Loading of module with unavailable key is rejected'; then
			pkg_fail "$what" "no refusal in the log: $(dmesg | tail -3 | tr '\n' ' ')"
		else
			pkg_ok "$what"
		fi
	fi
	pkg_unuse
	return $PKG_FAILED
}
