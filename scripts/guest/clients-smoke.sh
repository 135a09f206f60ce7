# SPDX-License-Identifier: GPL-2.0
# Guest script (scripts/run-guest.sh --clients): real tun clients, run the way
# their users run them, with data flowing through the driver.
#
#   iproute2      ip tuntap add (vnet_hdr)/show/del, ip link on a persistent tap
#   socat         the "wire": a tap in each of two network namespaces joined
#                 by socat over a UNIX datagram socket pair (the test kernel
#                 has no veth), then a socat TUN <-> UDP tunnel across it
#   openvpn       two peer-to-peer instances (static key) over UDP on the wire
#   wireguard-go  two wireguard-go + wg interfaces over UDP on the wire
#   tun-selftest  the kernel's tools/testing/selftests/net/tun.c (by fixture and
#                 variant, several at once: below)
#   tun32         the 32-bit compat-ioctl client (prints, does not judge)
# Each tunnel must answer 5 of 5 pings and carry 256 KiB over TCP intact.
#
# Prints "CLIENT <name> ok" or "CLIENT <name> FAIL <why>" per client and
# exits non-zero on any FAIL. With strace in the guest (and RTUN_STRACE not
# 0), each client runs under strace and "IOCTL <client>: ..." lines list the
# calls it made on its tun file descriptors.
#
# usage: clients-smoke.sh [RTUN_STRACE=0] [RTUN_NOLOAD=1] [tun|rust_tun|dropin]
#   the driver behind /dev/net/tun (default: the C tun). For rust_tun the
#   node /dev/net/tun is made with rust_tun's device number: most clients
#   cannot be pointed at another node. dropin: rust_tun loaded with
#   dropin=1, which is /dev/net/tun itself. NAME=VALUE arguments are
#   exported; with RTUN_NOLOAD=1 the module is loaded already and stays
#   (the guest test suite's `clients` test).
set -u
driver=tun
for a in "$@"; do
	case $a in
	*=*) export "$a" ;;
	*) driver=$a ;;
	esac
done
IP=/usr/bin/ip
SOCAT=/usr/bin/socat
fails=0
pids=

ok() { echo "CLIENT $1 ok"; }
fail() {
	echo "CLIENT $1 FAIL $2"
	fails=$((fails + 1))
}

# Run a client in the background in namespace NS (or "-" for this one),
# under strace when there is one; its output goes to /tmp/NAME.log. The
# NAME:PID recorded for stop_all is strace's (or the client's).
start() { # start NAME NS CMD...
	local name=$1 ns=$2
	shift 2
	local pre=
	[ "$ns" = - ] || pre="$IP netns exec $ns"
	if [ -x /usr/bin/strace ] && [ "${RTUN_STRACE:-1}" != 0 ]; then
		$pre /usr/bin/strace -f -qq -o "/tmp/trace.$name" \
			-e trace=open,openat,ioctl,fcntl,close,dup,dup2,dup3 "$@" >"/tmp/$name.log" 2>&1 &
	else
		$pre "$@" >"/tmp/$name.log" 2>&1 &
	fi
	pids="$pids $name:$!"
}

# The PIDs whose parent is PID (busybox has no pgrep).
children() { # children PID
	awk -v p="$1" '$4 == p { print $1 }' /proc/[0-9]*/stat 2>/dev/null
}

# Whether process PID has exited (a zombie not yet reaped counts).
gone() { # gone PID
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ]
}

# Stop every client started, last started first (the tunnels before the wire
# they run over: a client whose underlay vanished can take long to exit,
# seen with wireguard-go): SIGTERM to the client itself (strace's child),
# then wait for strace to exit with it. strace must not be signalled while
# its tracee exits: it then waits for a stop that never comes (seen: the
# guest hung). SIGKILL only for what is still there after 20 s.
stop_all() {
	local e p c n rev=
	for e in $pids; do
		rev="$e $rev"
	done
	for e in $rev; do
		p=${e#*:}
		c=$(children "$p")
		kill ${c:-$p} 2>/dev/null
		n=20
		while ! gone "$p" && [ $n -gt 0 ]; do
			sleep 1
			n=$((n - 1))
		done
		if ! gone "$p"; then
			c=$(children "$p")
			echo "${e%:*} (pid $p, child ${c:-none}) still running 20 s after SIGTERM: SIGKILL"
			for c in $p $c; do
				echo "  $c: $(cut -d' ' -f2-3 /proc/$c/stat) wchan=$(cat /proc/$c/wchan)"
			done
			tail -n 3 "/tmp/${e%:*}.log"
			kill -9 $(children "$p") "$p" 2>/dev/null
		fi
		wait "$p" 2>/dev/null
	done
	pids=
}

# The flags a client gave its device (TUNSETIFF and TUNSETPERSIST), as the
# driver shows them in sysfs: strace prints TUNSETIFF's argument as a pointer.
flags() { # flags NAME NS DEV (NS "-": this namespace)
	local pre=
	[ "$2" = - ] || pre="$IP netns exec $2"
	echo "FLAGS $1: $3 tun_flags=$($pre cat "/sys/class/net/$3/tun_flags" 2>&1)"
}

# What a client did on its tun file descriptors, from its strace log: the
# open of /dev/net/tun and every ioctl/fcntl on a descriptor it returned,
# deduplicated. One trace is one process (none of the clients fork), so the
# descriptors are keyed by number alone: strace -f logs thread IDs.
census() { # census NAME
	[ -f "/tmp/trace.$1" ] || return 0
	awk -v name="$1" '
	{
		sub(/^[0-9]+ +/, "")
		if ($0 ~ /^open(at)?\(.*"\/dev\/net\/tun"/ && match($0, /= [0-9]+$/)) {
			tun[substr($0, RSTART + 2)] = 1
		} else {
			if (!match($0, /^[a-z0-9_]+\([0-9]+/))
				next
			fd = substr($0, RSTART, RLENGTH)
			sub(/.*\(/, "", fd)
			if (!(fd in tun))
				next
			if ($0 ~ /^close\(/) {
				delete tun[fd]
				next
			}
			if ($0 ~ /^dup[23]?\(/ && match($0, /= [0-9]+$/))
				tun[substr($0, RSTART + 2)] = 1
		}
		line = $0
		sub(/\([0-9]+, /, "(tunfd, ", line)
		sub(/= [0-9]+$/, "= N", line)
		gsub(/ifr_name="[^"]*"/, "ifr_name=NAME", line)
		gsub(/0x[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]+/, "PTR", line)
		gsub(/  +/, " ", line)
		if (!(line in seen)) {
			seen[line] = 1
			print "IOCTL " name ": " line
		}
	}' "/tmp/trace.$1"
}

# Run a command in the foreground, under strace like start() does.
traced() { # traced NAME CMD...
	local name=$1
	shift
	if [ -x /usr/bin/strace ] && [ "${RTUN_STRACE:-1}" != 0 ]; then
		/usr/bin/strace -f -qq -o "/tmp/trace.$name" \
			-e trace=open,openat,ioctl,fcntl,close,dup,dup2,dup3 "$@"
	else
		"$@"
	fi
}

# ping from namespace NS: 5 echo requests, all 5 must be answered.
pings() { # pings NS ADDR
	local out rx
	out=$($IP netns exec "$1" ping -c 5 -w 60 "$2" 2>&1)
	echo "$out" | tail -2
	rx=$(echo "$out" | sed -n 's/.* \([0-9]*\) packets received.*/\1/p')
	[ "${rx:-0}" = 5 ]
}

# 256 KiB of random bytes over TCP from namespace FROM (default a) to ADDR
# in namespace TO (default b), compared with what was sent.
xfer() { # xfer ADDR [FROM TO]
	local lp rc
	rm -f /tmp/rx
	$IP netns exec "${3:-b}" timeout 120 $SOCAT -u TCP-LISTEN:7000,reuseaddr OPEN:/tmp/rx,creat,trunc &
	lp=$!
	$IP netns exec "${2:-a}" timeout 120 $SOCAT -u OPEN:/tmp/tx TCP:"$1":7000,retry=30,interval=1
	rc=$?
	# A client that could not connect leaves the listener waiting.
	[ $rc = 0 ] || kill $lp 2>/dev/null
	wait $lp || rc=1
	[ $rc = 0 ] && cmp /tmp/tx /tmp/rx && echo "xfer: 262144 bytes to $1 intact"
}

# Whether device DEV in namespace NS is up with IPv4 address ADDR.
has_addr() { # has_addr NS DEV ADDR
	$IP -n "$1" -4 addr show "$2" up 2>/dev/null | grep -q "inet $3/"
}

# Wait up to SECS seconds for a command to succeed.
wait_for() { # wait_for SECS CMD...
	local n=$1
	shift
	while ! "$@" 2>/dev/null; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 1
	done
}

echo "RTUN-CLIENTS: driver $driver"
module=$driver
case $driver in
tun) [ "${RTUN_NOLOAD:-0}" = 1 ] || insmod /lib/modules/tun.ko || exit 1 ;;
dropin)
	module=rust_tun
	[ "${RTUN_NOLOAD:-0}" = 1 ] || insmod /lib/modules/rust_tun.ko dropin=1 || exit 1
	;;
rust_tun)
	insmod /lib/modules/rust_tun.ko || exit 1
	dev=
	for d in /sys/class/misc/*; do
		grep -qx 'DEVNAME=net/rust_tun' "$d/uevent" 2>/dev/null && dev=$(cat "$d/dev")
	done
	[ -n "$dev" ] || { echo "no misc device net/rust_tun"; exit 1; }
	mkdir -p /dev/net
	rm -f /dev/net/tun
	mknod /dev/net/tun c "${dev%:*}" "${dev#*:}" || exit 1
	;;
*) echo "unknown driver $driver"; exit 2 ;;
esac
ls -l /dev/net/
grep MemAvailable /proc/meminfo
# wg colours its output on a terminal (the console is one).
export WG_COLOR_MODE=never

# Network namespaces ("hosts"), each with loopback up and IPv6 off (it would
# send autoconfiguration packets through every tunnel).
hosts() { # hosts NS...
	local ns
	for ns in "$@"; do
		$IP netns add $ns && $IP -n $ns link set lo up || return 1
		$IP netns exec $ns sh -c 'for c in all default; do echo 1 >/proc/sys/net/ipv6/conf/$c/disable_ipv6; done'
	done
}
# Two: a and b.
hosts a b || exit 1
dd if=/dev/urandom of=/tmp/tx bs=1024 count=256 2>/dev/null

# --- iproute2: persistent devices, listed and deleted ------------------------
echo "=== iproute2 ($($IP -V))"
why=
traced ip-tuntap-add-t0 $IP tuntap add dev t0 mode tap vnet_hdr || why="tuntap add t0 failed"
traced ip-tuntap-add-t1 $IP tuntap add dev t1 mode tun multi_queue user 1000 group 1000 ||
	why="$why; tuntap add t1 failed"
out=$($IP tuntap show)
echo "$out"
echo "$out" | grep -qE '^t0: tap( .*)? persist' || why="$why; t0 not listed as a persistent tap"
echo "$out" | grep -qE '^t0: tap( .*)? vnet_hdr' || why="$why; t0 not listed with vnet_hdr"
echo "$out" | grep -qE '^t1: tun( .*)? persist( .*)? user 1000 group 1000' ||
	why="$why; t1 not listed as a persistent tun with user and group"
$IP -d tuntap show
flags ip-tuntap-add-t0 - t0
flags ip-tuntap-add-t1 - t1
$IP -d link show t0 || why="$why; ip -d link show t0 failed"
$IP -d link show t0 | grep -q 'tun type tap' ||
	why="$why; ip -d link shows no tun details"
# Without a queue file attached: tun accepts carrier off, refuses carrier on.
$IP link set t0 carrier off
echo "carrier off without a file: rc=$?"
$IP link set t0 carrier on
echo "carrier on without a file: rc=$?"
$IP link set t0 up && $IP link show t0 | grep -q 'NO-CARRIER' || why="$why; t0 up without NO-CARRIER"
traced ip-tuntap-del-t0 $IP tuntap del dev t0 mode tap || why="$why; tuntap del t0 failed"
traced ip-tuntap-del-t1 $IP tuntap del dev t1 mode tun multi_queue || why="$why; tuntap del t1 failed"
$IP link show t0 2>/dev/null && why="$why; t0 still exists"
$IP link show t1 2>/dev/null && why="$why; t1 still exists"
if [ -z "$why" ]; then ok iproute2; else fail iproute2 "${why#; }"; fi

# --- socat: the wire (tap over a UNIX datagram socket pair), then a TUN <->
# UDP tunnel across it ---------------------------------------------------------
echo "=== socat ($($SOCAT -V | sed -n 's/^socat version \([^ ]*\).*/\1/p'))"
why=
rm -f /tmp/wire-a /tmp/wire-b
start socat-wire-a a $SOCAT -d TUN:192.168.77.1/24,tun-type=tap,iff-no-pi,tun-name=wire0,up \
	UNIX-SENDTO:/tmp/wire-b,bind=/tmp/wire-a
start socat-wire-b b $SOCAT -d TUN:192.168.77.2/24,tun-type=tap,iff-no-pi,tun-name=wire0,up \
	UNIX-SENDTO:/tmp/wire-a,bind=/tmp/wire-b
wait_for 30 test -S /tmp/wire-a -a -S /tmp/wire-b || why="wire sockets not bound"
wait_for 30 has_addr a wire0 192.168.77.1 || why="$why; wire0 not up in a"
wait_for 30 has_addr b wire0 192.168.77.2 || why="$why; wire0 not up in b"
wire=0
pings a 192.168.77.2 && wire=1 || why="$why; no ping replies across the wire (tap)"
flags socat-wire-a a wire0
# iproute2 lists the processes attached to a device (from /proc/*/fdinfo).
$IP -n a -d tuntap show
$IP -n a -d tuntap show | grep -q 'Attached to processes:.*socat' ||
	why="$why; ip -d tuntap show does not list socat on wire0"
start socat-tun-b b $SOCAT -d TUN:10.9.0.2/24,up,tun-name=stun0 UDP:192.168.77.1:5000,bind=192.168.77.2:5000
start socat-tun-a a $SOCAT -d TUN:10.9.0.1/24,up,tun-name=stun0 UDP:192.168.77.2:5000,bind=192.168.77.1:5000
wait_for 30 has_addr a stun0 10.9.0.1 || why="$why; stun0 not up in a"
wait_for 30 has_addr b stun0 10.9.0.2 || why="$why; stun0 not up in b"
flags socat-tun-a a stun0
pings a 10.9.0.2 || why="$why; no ping replies through the TUN/UDP tunnel"
xfer 10.9.0.2 || why="$why; TCP transfer through the TUN/UDP tunnel failed"
if [ -z "$why" ]; then ok socat; else fail socat "${why#; }"; fi

# --- openvpn: peer to peer, static key, over UDP on the wire -------------------
echo "=== openvpn ($(/usr/bin/openvpn --version | head -1 | cut -d' ' -f1-2))"
why=
if [ $wire = 1 ]; then
	/usr/bin/openvpn --genkey secret /tmp/ovpn.key || why="openvpn --genkey failed"
	for side in a:1:2 b:2:1; do
		ns=${side%%:*}
		me=${side#*:}
		me=${me%:*}
		peer=${side##*:}
		start openvpn-$ns $ns /usr/bin/openvpn --disable-dco --dev ovpn0 --dev-type tun \
			--proto udp --local 192.168.77.$me --lport 1194 \
			--remote 192.168.77.$peer --rport 1194 \
			--ifconfig 10.8.0.$me 10.8.0.$peer \
			--secret /tmp/ovpn.key --cipher AES-256-CBC --verb 3
	done
	for ns in a b; do
		wait_for 60 grep -q 'Initialization Sequence Completed' /tmp/openvpn-$ns.log ||
			why="$why; openvpn in $ns did not complete initialization"
	done
	flags openvpn-a a ovpn0
	pings a 10.8.0.2 || why="$why; no ping replies through openvpn"
	xfer 10.8.0.2 || why="$why; TCP transfer through openvpn failed"
	[ -z "$why" ] || tail -20 /tmp/openvpn-a.log /tmp/openvpn-b.log
else
	why="the wire (socat) is down"
fi
if [ -z "$why" ]; then ok openvpn; else fail openvpn "${why#; }"; fi

# wireguard-go + wg in namespaces NS1 and NS2 (peers 1 and 2): underlay
# addresses UNDER.1 and UNDER.2, UDP port PORT, tunnel addresses TUN.1/24
# and TUN.2/24 on devices wgNS1 and wgNS2 (the driver's); what went wrong
# is added to $why.
wg_up() { # wg_up NS1 NS2 UNDER PORT TUN
	local ns side rest me peer pn
	for ns in $1 $2; do
		(umask 077 && /usr/bin/wg genkey >/tmp/wg-$ns.key)
		/usr/bin/wg pubkey </tmp/wg-$ns.key >/tmp/wg-$ns.pub
		# The UAPI sockets are in /var/run/wireguard, shared by the
		# namespaces: one interface name per side.
		start wireguard-go-$ns $ns env WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD=1 \
			/usr/bin/wireguard-go -f wg$ns
	done
	for side in $1:1:$2:2 $2:2:$1:1; do
		ns=${side%%:*}
		rest=${side#*:}
		me=${rest%%:*}
		rest=${rest#*:}
		peer=${rest%%:*}
		pn=${rest#*:}
		wait_for 60 test -S /var/run/wireguard/wg$ns.sock || why="$why; wireguard-go in $ns has no UAPI socket"
		# wireguard-go creates the socket, then watches it with inotify
		# (ipc/uapi_linux.go) and exits if it cannot.
		sleep 2
		if grep -q 'Failed to listen on uapi socket: function not implemented' /tmp/wireguard-go-$ns.log; then
			why="$why; wireguard-go in $ns exited: its UAPI listener needs inotify_init (ENOSYS: no CONFIG_INOTIFY_USER)"
			continue
		fi
		flags wireguard-go-$ns $ns wg$ns
		$IP netns exec $ns /usr/bin/wg set wg$ns private-key /tmp/wg-$ns.key listen-port $4 \
			peer "$(cat /tmp/wg-$peer.pub)" endpoint $3.$pn:$4 allowed-ips $5.$pn/32 ||
			why="$why; wg set in $ns failed"
		$IP -n $ns addr add $5.$me/24 dev wg$ns || why="$why; no address on wg$ns"
		$IP -n $ns link set wg$ns up || why="$why; wg$ns not up"
	done
}

# --- wireguard-go + wg, over UDP on the wire ----------------------------------
echo "=== wireguard-go ($(/usr/bin/wireguard-go --version 2>&1 | head -1))"
why=
if [ $wire = 1 ]; then
	wg_up a b 192.168.77 51820 10.7.0
	if [ -z "$why" ]; then
		pings a 10.7.0.2 || why="$why; no ping replies through wireguard"
		xfer 10.7.0.2 || why="$why; TCP transfer through wireguard failed"
		$IP netns exec a /usr/bin/wg show wga
	fi
	[ -z "$why" ] || tail -20 /tmp/wireguard-go-a.log /tmp/wireguard-go-b.log
else
	why="the wire (socat) is down"
fi
if [ -z "$why" ]; then ok wireguard-go; else fail wireguard-go "${why#; }"; fi

# --- topologies users build (where the kernel has the modules: Debian's) ----
# A module of the booted kernel's, loaded if it is there (run-guest.sh copies
# Debian's bridge, veth, 8021q and what they need).
have_mod() { # have_mod NAME...
	local m
	for m in "$@"; do
		grep -q "^$m " /proc/modules || { [ -f "/lib/modules/$m.ko" ] && modprobe "$m"; } || return 1
	done
}
topologies=
# libvirt's default layout: the VM's tap (vnet0) in a bridge on the host,
# the bridge's other port a veth whose peer is in another namespace (the
# LAN). The "VM" is a tap in namespace vm joined to vnet0 by socat over a
# UNIX datagram socket pair (QEMU's part); both taps are the driver's.
if have_mod bridge veth; then
	topologies="$topologies bridge"
	echo "=== topology bridge: vm -- tap vnet0 -- br0 -- veth -- lan"
	why=
	hosts h vm lan || why="$why; namespaces h, vm, lan"
	$IP -n h link add br0 type bridge && $IP -n h link set br0 up || why="$why; no bridge br0"
	$IP -n h link add veth0 type veth peer name veth1 netns lan || why="$why; no veth pair"
	$IP -n h link set veth0 master br0 up
	$IP -n lan addr add 10.6.0.2/24 dev veth1 && $IP -n lan link set veth1 up || why="$why; veth1 not up"
	rm -f /tmp/br-vm /tmp/br-h
	start socat-br-h h $SOCAT -d TUN,tun-type=tap,iff-no-pi,tun-name=vnet0,up \
		UNIX-SENDTO:/tmp/br-vm,bind=/tmp/br-h
	start socat-br-vm vm $SOCAT -d TUN:10.6.0.1/24,tun-type=tap,iff-no-pi,tun-name=eth0,up \
		UNIX-SENDTO:/tmp/br-h,bind=/tmp/br-vm
	wait_for 30 test -S /tmp/br-h -a -S /tmp/br-vm || why="$why; socket pair not bound"
	wait_for 30 $IP -n h link show vnet0 || why="$why; no vnet0"
	$IP -n h link set vnet0 master br0 || why="$why; vnet0 not enslaved to br0"
	wait_for 30 has_addr vm eth0 10.6.0.1 || why="$why; the VM's eth0 not up"
	# The bridge forwards once its ports are forwarding (no STP: at once).
	wait_for 30 sh -c "$IP -n h -d link show vnet0 | grep -q 'state forwarding'" ||
		why="$why; vnet0 not forwarding in br0"
	$IP -n h -d link show vnet0 | grep -E 'bridge_slave|state'
	flags socat-br-h h vnet0
	pings vm 10.6.0.2 || why="$why; no ping replies from the LAN through the bridged tap"
	xfer 10.6.0.2 vm lan || why="$why; TCP transfer VM -> LAN through the bridged tap failed"
	xfer 10.6.0.1 lan vm || why="$why; TCP transfer LAN -> VM through the bridged tap failed"
	# The bridge learnt the VM's address on the tap's port.
	vmmac=$($IP -n vm link show eth0 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
	$IP netns exec h /usr/bin/bridge fdb show br br0 | grep "$vmmac dev vnet0" ||
		why="$why; br0 did not learn the VM's address ($vmmac) on vnet0"
	if [ -z "$why" ]; then ok topology-bridge; else fail topology-bridge "${why#; }"; fi
fi
# 802.1Q over a tap: VLAN 42 on the wire's taps (the tags cross the driver:
# tun and rust_tun put the offloaded tag back into the frame they hand the
# reader, and take it from the frame written).
if have_mod 8021q; then
	topologies="$topologies vlan"
	echo "=== topology vlan: wire0.42 over the taps of the wire"
	why=
	if [ $wire = 1 ]; then
		for side in a:1 b:2; do
			ns=${side%:*}
			$IP -n $ns link add link wire0 name wire0.42 type vlan id 42 || why="$why; no vlan in $ns"
			$IP -n $ns addr add 192.168.42.${side#*:}/24 dev wire0.42
			$IP -n $ns link set wire0.42 up || why="$why; wire0.42 not up in $ns"
		done
		$IP -n a -d link show wire0.42 | grep -q 'vlan protocol 802.1Q id 42' || why="$why; wire0.42 is not VLAN 42"
		pings a 192.168.42.2 || why="$why; no ping replies over VLAN 42"
		xfer 192.168.42.2 || why="$why; TCP transfer over VLAN 42 failed"
		for ns in a b; do $IP -n $ns link del wire0.42; done
	else
		why="the wire (socat) is down"
	fi
	if [ -z "$why" ]; then ok topology-vlan; else fail topology-vlan "${why#; }"; fi
fi
# wireguard-go between two namespaces over a veth pair (no socat wire): the
# tunnel's devices are the driver's, its underlay a kernel veth.
if have_mod veth; then
	topologies="$topologies wg-veth"
	echo "=== topology wg-veth: wireguard-go in c and d over veth"
	why=
	hosts c d || why="$why; namespaces c, d"
	$IP -n c link add vc type veth peer name vd netns d || why="$why; no veth pair"
	$IP -n c addr add 192.168.55.1/24 dev vc && $IP -n c link set vc up
	$IP -n d addr add 192.168.55.2/24 dev vd && $IP -n d link set vd up
	wg_up c d 192.168.55 51821 10.5.0
	if [ -z "$why" ]; then
		pings c 10.5.0.2 || why="$why; no ping replies through wireguard over veth"
		xfer 10.5.0.2 c d || why="$why; TCP transfer through wireguard over veth failed"
		$IP netns exec c /usr/bin/wg show wgc | grep -E 'transfer|handshake'
	fi
	[ -z "$why" ] || tail -20 /tmp/wireguard-go-c.log /tmp/wireguard-go-d.log
	if [ -z "$why" ]; then ok topology-wg-veth; else fail topology-wg-veth "${why#; }"; fi
fi
echo "RTUN-TOPOLOGIES:${topologies:- none (the kernel has no bridge, veth or 8021q modules)}"

# Memory with every tunnel up (run-guest.sh gives the test kernel 1 GiB).
grep MemAvailable /proc/meminfo
stop_all
for name in ip-tuntap-add-t0 ip-tuntap-add-t1 ip-tuntap-del-t0 ip-tuntap-del-t1 socat-wire-a socat-tun-a openvpn-a wireguard-go-a; do
	census $name
done

# --- the kernel's tun selftest -------------------------------------------------
echo "=== tun-selftest"
why=
# 7.3's (its tun_vnet_udptnl fixture) sends UDP-tunnel GSO packets through a
# geneve device over the tap: load geneve and its UDP tunnel modules
# (run-guest.sh copies them when the kernel builds them; nothing loads
# modules on demand in this guest, it has no /sbin/modprobe), and unload
# them after if they were not loaded before.
geneve=0
if [ -f /lib/modules/geneve.ko ] && ! grep -q '^geneve ' /proc/modules; then
	modprobe geneve && geneve=1 || why="modprobe geneve failed"
fi
# The cases run by fixture and variant ("units"), each unit a process of
# its own in a network namespace of its own, up to six at once: 7.3's
# selftest has twelve XFAIL cases that each wait out a 10 s select()
# timeout (its TIMEOUT_SEC) for a packet that must not come, 120 s of
# its 136 s in one process on the test kernel. In a namespace because
# the fixture puts IPv4 and IPv6 addresses on the tap and the geneve
# device, and the guest's init turned IPv6 off in the first namespace
# (disable_ipv6 in all and default, which every new device inherits:
# adding an IPv6 address fails); a new namespace starts with IPv6 on
# (net.core.devconf_inherit_init_net is 0), and its devices' names are
# its own.
#
# The units come from the harness's own listing (-l: a table of
# fixed-width columns, each fixture's variants and tests zipped), one
# line "-r FIXTURE[.VARIANT].TEST ..." per fixture and variant; a fixture
# without tests (the harness's "global") has none. Each unit must run as
# many cases as it names (its "1..N"): a misread listing fails.
st_units() {
	/usr/bin/tun-selftest -l 2>&1 | awk '
	function flush(   i, j, line) {
		if (f != "" && nt > 0) {
			for (i = 1; i <= (nv ? nv : 1); i++) {
				line = ""
				for (j = 1; j <= nt; j++)
					line = line " -r " f "." (nv ? v[i] "." : "") t[j]
				print substr(line, 2)
			}
		}
		f = ""; nv = 0; nt = 0
	}
	NR == 1 { next }
	/^---/ { flush(); next }
	{
		a = substr($0, 1, 20); b = substr($0, 22, 25); c = substr($0, 48)
		gsub(/ /, "", a); gsub(/ /, "", b); gsub(/ /, "", c)
		if (a != "") f = a
		if (b != "") v[++nv] = b
		if (c != "") t[++nt] = c
	}
	END { flush() }'
}
mkdir -p /tmp/st
rm -f /tmp/st/*
cat >/tmp/st/unit.sh <<'UNIT'
# One unit of the tun selftest: "N ARGS..." in namespace stN.
set -- $1
n=$1
shift
ip=/usr/bin/ip
{ $ip netns add st$n && $ip -n st$n link set lo up; } >/tmp/st/$n.out 2>&1 || { echo 1 >/tmp/st/$n.rc; exit 0; }
$ip netns exec st$n /usr/bin/tun-selftest "$@" >>/tmp/st/$n.out 2>&1
echo $? >/tmp/st/$n.rc
echo $(($# / 2)) >/tmp/st/$n.want
$ip netns del st$n
UNIT
st_units | awk '{ print NR " " $0 }' >/tmp/st/units
units=$(wc -l </tmp/st/units)
t0=$(cut -d. -f1 /proc/uptime)
xargs -P 6 -I @ sh /tmp/st/unit.sh @ </tmp/st/units
took=$(($(cut -d. -f1 /proc/uptime) - t0))
[ "$units" -gt 0 ] || why="$why; no test in the selftest's listing"
n=1
rc=0
: >/tmp/tun-selftest.out
while [ $n -le "$units" ]; do
	cat /tmp/st/$n.out >>/tmp/tun-selftest.out
	r=$(cat /tmp/st/$n.rc 2>/dev/null)
	[ "${r:-1}" = 0 ] || rc=1
	ran=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' /tmp/st/$n.out | tail -n 1)
	[ "${ran:-x}" = "$(cat /tmp/st/$n.want 2>/dev/null)" ] ||
		why="$why; unit $n ($(cut -d' ' -f2-3 /tmp/st/units | sed -n ${n}p) ...) ran ${ran:-no} cases, not $(cat /tmp/st/$n.want 2>/dev/null)"
	n=$((n + 1))
done
cat /tmp/tun-selftest.out
# The harness's totals, summed over the units.
totals=$(sed -n 's/^# Totals: //p' /tmp/tun-selftest.out |
	awk '{ for (i = 1; i <= NF; i++) { split($i, kv, ":"); s[kv[1]] += kv[2]; if (!(kv[1] in o)) o[kv[1]] = ++k } }
	END { for (n in o) name[o[n]] = n; for (i = 1; i <= k; i++) printf "%s%s:%d", (i > 1 ? " " : ""), name[i], s[name[i]] }')
echo "tun-selftest: $units units in $took s, $totals"
if [ $rc != 0 ]; then
	# Which tests failed, by fixture (the guest test shows only the
	# CLIENT lines and the output's tail).
	nok=$(sed -n 's/^not ok [0-9]* \([^.]*\)\..*/\1/p' /tmp/tun-selftest.out | sort | uniq -c |
		awk '{ printf "%s%s %s", s, $1, $2; s = ", " }')
	why="$why; a unit failed, not ok: ${nok:-none} ($totals)"
fi
if [ $geneve = 1 ]; then
	# The namespace's devices go in a workqueue: retry while geneve is busy.
	n=10
	while ! rmmod geneve 2>/dev/null && [ $n -gt 0 ]; do
		sleep 1
		n=$((n - 1))
	done
	rmmod udp_tunnel ip6_udp_tunnel
	grep -qE '^(geneve|udp_tunnel|ip6_udp_tunnel) ' /proc/modules && why="$why; geneve or its UDP tunnel modules did not unload"
fi
if [ -z "$why" ]; then ok tun-selftest; else fail tun-selftest "${why#; }"; fi

# --- the 32-bit compat client --------------------------------------------------
echo "=== tun32"
/usr/bin/tun32 /dev/net/tun tap32 >/tmp/tun32.out
rc=$?
sed 's/^/TUN32 /' /tmp/tun32.out
if [ $rc != 0 ]; then
	fail tun32 "exit status $rc"
elif ! grep -q '^step=close ' /tmp/tun32.out; then
	fail tun32 "did not reach the last step"
else
	ok tun32
fi

# --- teardown: no device, no process, the module unloads ---------------------
for ns in a b h vm lan c d; do
	[ ! -e /var/run/netns/$ns ] || $IP netns del $ns
done
# The namespaces' devices go in a workqueue: give them time to leave.
n=10
while ls /sys/class/net | grep -qvxE 'lo|sit0' && [ $n -gt 0 ]; do
	sleep 1
	n=$((n - 1))
done
left=$(ls /sys/class/net | grep -vxE 'lo|sit0')
[ -z "$left" ] || { echo "devices left: $left"; fails=$((fails + 1)); }
sleep 1
if [ "${RTUN_NOLOAD:-0}" != 1 ]; then
	rmmod $module || { echo "rmmod $module failed"; fails=$((fails + 1)); }
fi
echo "modules left: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
echo "RTUN-CLIENTS: $fails failed"
[ $fails = 0 ]
