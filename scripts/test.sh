#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Every test of rust-tun, from a fresh machine: install the toolchain, build
# (or reuse) the kernels, check the module's formatting, build the module
# and the guest programs, then boot the guests and run the guest suites;
# beside the first guests, the other host checks (a job of their own:
# clippy build, that rust_dummy has none of sys/'s tun part
# (scripts/layer-check.sh), the guest programs' host tests, compile-fail
# cases, the host unit tests, the crate-hash check, the docs
# (scripts/docs-check.py)).
#
# Prints each guest's console (KTAP) as its suite ends, a table of time per
# kernel and suite, then the closing line "N passed, N failed, N skipped";
# exits non-zero on any failure, kernel splat, hung test or unfinished guest.
#
# The matrix: suites on two kernels, 7.3 (the default series, the one
# distributions build with Rust) and 6.12 LTS; a suite is SERIES-NAME, and a
# bare NAME is the default series' (`test` is `7.3-test`). The suites
# (`tests.sh` arguments in brackets):
#   test     side by side: rust_tun as /dev/net/rust_tun beside tun.ko, every
#            ABI test on both drivers, C tun the reference    (the test kernel)
#   dropin   rust_tun as /dev/net/tun, tun.ko out of reach: every test
#            written for the C tun against rust_tun, the real clients among
#            them                                             [dropin]
#   napi     every device on NAPI queues (IFF_NAPI), rust_tun only
#                                                             [napi RTUN_DRIVERS=rust]
#   runner   the test bench's own checks: a deliberately hung test must be
#            reported as `not ok 1 rust_tun_selftest_hang # TIMEOUT` with a
#            task dump, within its timeout, and a test must outlive its
#            timeout's wall time while the host reports contention
#                                                             [RTUN_SELFTEST=1];
#            a guest whose runner stops must be ended for want of progress
#            [RTUN_SELFTEST=stall]; and scripts/guest-watchdog.py --selftest
#   debug1/2 the debug kernel (KASAN, lockdep, kmemleak, DEBUG_NET, refcount
#            trackers, ...; and no jump labels: the guards' fallback), rust_tun
#            only, in two guests at once                     [RTUN_DRIVERS=rust RTUN_SHARD=I/2]
#   debian   Debian's own kernel (7.3.4+deb13-amd64: its vmlinuz, tun.ko and
#            modules; rust_tun built for it by scripts/build-debian.sh, as a
#            user builds it): side by side with Debian's tun.ko
#   debdropin  the same kernel, rust_tun as /dev/net/tun       [dropin]
#            (both 7.3 only: SERIES-debian is 7.3-debian)
# By default: every suite on 7.3 (Debian's kernel included); on 6.12 test, dropin and napi (its own
# tun.ko the reference there, the same driver files built for 6.12). The
# debug suites of 6.12 (6.12-debug1, 6.12-debug2) and 7.3's are the same
# driver code under KASAN; they run on request (--suite), not by default,
# so that both kernels fit the budget (README).
# C tun's tests run on the test kernels only: there it is the reference the
# ABI tests compare against; under KASAN or without jump labels they would
# test the kernel's code, not ours. Tests of rust_tun that compare against
# tun (fuzz_vs_tun, dropin_conflicts) run everywhere.
#
# Four jobs run at once (RTUN_JOBS; a job is a suite's guest, or the
# build of the kernels not built yet, which runs while the default test
# kernel's suites run; the preparation of Debian's kernel, fetched rather
# than built, and the host checks after the build run beside them as jobs
# of their own and are not counted).
# Each guest is one single-threaded TCG vCPU thread and this machine kind
# has two cores, but a guest mostly waits (its
# tests' sleeps, timeouts and timers): with two at once the cores were
# 35 % busy on 2026-12-06, so a third fitted; with three, a warm run of
# the whole matrix kept them 77 % busy and took 1,661 s, no less than
# three guests at a time can take (the suites' wall times add up to
# ~4,350 s); with four, 84 % and 1,598 s (2026-12-07). A guest is
# stopped when no test has made progress for the runner's per-test timeout
# plus a slack (run-guest.sh --progress), counted in time its vCPU did not
# spend waiting for a host CPU, and each test's timeout in the guest counts
# the same way (guest/src/runner.rs): a loaded host makes a suite slower,
# not red. A backstop of five times the suite's expected time (NAME_EXPECT
# below, measured on this machine kind: README) ends a guest that never
# stops. The per-test timeouts (tests.sh), the slack and the backstop are
# scaled by how much slower this host's cores are.
#
# usage: scripts/test.sh [--quick] [--kernel SERIES] [--suite S[,S...]]
#                        [NAME=VALUE...] [FILTER]
#   --quick      the default test kernel's suites only (test, dropin, napi,
#                runner)
#   --kernel S   only the suites of series S (7.3 or 6.12): its default
#                ones, or with --suite those named (bare names are then S's)
#   --suite S    only these suites (names above), and of the host checks
#                only the builds: the inner loop, e.g.
#                `scripts/test.sh --suite test ping` (one kernel, one suite,
#                a filter: about 3 minutes warm), `--suite 6.12-test ping`
#   NAME=VALUE   passed to the guest tests: RTUN_SEED, RTUN_STRESS_SECS,
#                RTUN_FUZZ_ITERS, RTUN_TEST_TIMEOUT (seconds per test)
#   FILTER       only the guest tests whose name contains it (or one of its
#                comma-separated parts)
# In the environment: RTUN_JOBS=N jobs at once (default 4; 2 was the rule
# until 2026-12-06, 3 until 2026-12-07).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

names_all=(debug1 debug2 test dropin napi runner debian debdropin)
# The default matrix, longest first (the scheduler starts them in order).
default_suites() { # default_suites [SERIES]: the default suites (of one series)
	local s
	for s in 7.3-debug1 7.3-debug2 7.3-test 7.3-debian 6.12-test 7.3-dropin 7.3-debdropin 7.3-napi 6.12-napi 6.12-dropin 7.3-runner; do
		[ -z "${1:-}" ] || [ "${s%%-*}" = "$1" ] || continue
		echo "$s"
	done
}
only_series= suite_arg= quick=0
jobs=${RTUN_JOBS:-4}
[[ $jobs =~ ^[1-9]$ ]] || rt_die "RTUN_JOBS must be 1 to 9, not '$jobs'"
host_checks=1
guest_args=()
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--kernel)
		rt_check_series "$2"
		only_series=$2
		shift
		;;
	--suite)
		suite_arg=$2
		host_checks=0
		shift
		;;
	*) guest_args+=("$1") ;;
	esac
	shift
done
has_filter() { # whether a FILTER (an argument without `=`) was given
	local a
	for a in "${guest_args[@]}"; do [[ $a == *=* ]] || return 0; done
	return 1
}
suites=()
if [ -n "$suite_arg" ]; then
	IFS=, read -ra names <<<"$suite_arg"
	for n in "${names[@]}"; do
		case $n in
		*-*) suites+=("$n") ;;
		*) suites+=("${only_series:-$RT_SERIES}-$n") ;;
		esac
	done
elif [ $quick = 1 ]; then
	suites=("${only_series:-$RT_SERIES}"-{test,dropin,napi,runner})
else
	mapfile -t suites < <(default_suites "$only_series")
fi
for s in "${suites[@]}"; do
	rt_check_series "${s%%-*}"
	case $s in *-debian | *-debdropin) [ "${s%%-*}" = 7.3 ] || rt_die "Debian's kernel is 7.3: no suite '$s'" ;; esac
	[[ " ${names_all[*]} " == *" ${s#*-} "* ]] || rt_die "unknown suite '$s' (SERIES-NAME: ${names_all[*]})"
done

# Expected wall time of each suite (s), measured on a 2-core machine of
# this kind with two suites running at once (README); the backstop is five
# times it. The kernel each runs on, and its tests.sh arguments.
declare -A NAME_EXPECT=([test]=300 [dropin]=150 [napi]=150 [runner]=70 [debug1]=600 [debug2]=600
	[debian]=400 [debdropin]=200)
declare -A NAME_FLAVOR=([test]=test [dropin]=test [napi]=test [runner]=test [debug1]=debug [debug2]=debug
	[debian]=debian [debdropin]=debian)
declare -A NAME_ARGS=([test]="" [dropin]="dropin" [napi]="napi RTUN_DRIVERS=rust"
	[runner]="RTUN_SELFTEST=1 RTUN_TEST_TIMEOUT=20"
	[debug1]="RTUN_DRIVERS=rust RTUN_SHARD=1/2"
	[debug2]="RTUN_DRIVERS=rust RTUN_SHARD=2/2"
	[debian]="" [debdropin]="dropin")
# On a host with slower cores every guest is slower by the same factor (a
# TCG vCPU is one host thread): the backstops, the progress slack and the
# guests' per-test timeouts are scaled by the host's measured slowdown
# (lib.sh rt_host_slowdown, percent; 100 on the reference machine). That is
# measured once, in CPU time; the load during the run is measured by each
# guest's watchdog (scripts/guest-watchdog.py) and stretches the progress
# bound and the per-test timeouts as it comes. Timing checks inside the
# guests calibrate in their own boot and need no scaling.
slowdown=$(rt_host_slowdown) || rt_die "could not time this host"
rt_log "this host's slowdown: $slowdown % of the reference machine's time (limits scaled)"
# What the runner may do between a test's end and its result line (a
# timed-out test's task dump and kill, up to 20 s; the leftovers check; a
# kmemleak scan, ~10 s on the debug kernel) and what tests.sh does after
# the last test (kmemleak's two scans); twice that before the first test
# (boot, module load).
slack=$((90 * slowdown / 100))
declare -A SUITE_LIMIT=() SUITE_KERNEL=() SUITE_ARGS=()
for s in "${suites[@]}"; do
	n=${s#*-}
	SUITE_LIMIT[$s]=$((5 * NAME_EXPECT[$n] * slowdown / 100))
	SUITE_KERNEL[$s]=${s%%-*}-${NAME_FLAVOR[$n]}
	SUITE_ARGS[$s]=${NAME_ARGS[$n]}
done
# The kernel the host checks build against: the default series' test kernel
# (or the one series asked for).
main_kernel=${only_series:-$RT_SERIES}-test
if [ -n "$suite_arg" ]; then
	main_kernel=${SUITE_KERNEL[${suites[0]}]%-*}-test
fi

work=$(mktemp -d /tmp/rtun-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
t_start=$SECONDS
passed=0 failed=0 skipped=0
table=()
# CPU time, beside wall time: where a fresh run's time goes on a host
# slower than this one. Each row's cpu is the user + system seconds of
# what it ran (its process tree, as `times` reports a subshell's reaped
# children); the closing line adds them up and says how busy the cores
# were over the whole run (/proc/stat). Wall time on a slower host grows
# with the CPU time while the cores are busy (README, Budgets).
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }
busy_start=$(busy_ticks)
cpu_total=0
cpu_secs() { # cpu_secs FILE: the user + system seconds `times` wrote to FILE (its second line: the children's)
	awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); t += a[1] * 60 + a[2] } printf "%d\n", t + 0.5; f = 1 }
		END { if (!f) print "-" }' "$1" 2>/dev/null || echo -
}
cpu_of() { # cpu_of FILE COMMAND...: COMMAND in a subshell, its CPU time (`times`) into FILE; COMMAND's status
	local f=$1
	shift
	( "$@"; rc=$?; times >"$f"; exit $rc )
}
# What failed, one line each, printed again just above the closing table:
# a CI log that keeps only its tail still names every failure.
fails=()
row() { # row KERNEL SUITE PASSED FAILED SKIPPED TIME LIMIT [CPU]
	local cpu=${8:--}
	[ "$cpu" = - ] || cpu_total=$((cpu_total + cpu))
	table+=("$(printf '%-10s %-14s %6s %6s %7s %8s %8s %8s' "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$cpu")")
}

step() { # step NAME COMMAND...: a host-side check counted as one test
	local name=$1 t0=$SECONDS
	shift
	rt_log "check $name"
	# In a subshell, for its CPU time (nothing a step sets is read after).
	if cpu_of "$work/cpu-step" "$@"; then
		passed=$((passed + 1))
		echo "ok - host $name"
		row host "$name" 1 0 0 $((SECONDS - t0)) - "$(cpu_secs "$work/cpu-step")"
	else
		failed=$((failed + 1))
		fails+=("host $name")
		echo "not ok - host $name"
		row host "$name" 0 1 0 $((SECONDS - t0)) - "$(cpu_secs "$work/cpu-step")"
	fi
}
# The Debian packages' checks, made while Debian's kernel was prepared
# (scripts/build-debian.sh writes one line each).
package_account() { # package_account KERNEL
	local f pp pf l
	f=$(rt_debian_pkgdir)/results
	[ -f "$f" ] || return 0
	sed 's/^/# /' "$f"
	pp=$(grep -c '^ok - ' "$f" || true)
	pf=$(grep -c '^not ok - ' "$f" || true)
	while IFS= read -r l; do fails+=("$1 package: $l"); done < <(grep '^not ok - ' "$f")
	passed=$((passed + pp))
	failed=$((failed + pf))
	row "$1" package "$pp" "$pf" 0 - -
}
killtree() { # killtree PID: the process and its descendants
	local c
	for c in $(pgrep -P "$1"); do killtree "$c"; done
	kill "$1" 2>/dev/null
}
finish() {
	# An early end (a failed build) leaves no job behind.
	local p
	for p in "${!RUNNING[@]}"; do
		rt_log "stopping the unfinished job ${RUNNING[$p]}"
		killtree "$p"
	done
	wait
	echo "# time per kernel and suite (s; backstop: the suite's guest's wall-time backstop; cpu: user + system seconds of its processes):"
	printf '# %-10s %-14s %6s %6s %7s %8s %8s %8s\n' kernel suite passed failed skipped time backstop cpu
	local r wall=$((SECONDS - t_start)) busy
	for r in "${table[@]}"; do echo "# $r"; done
	busy=$(( ($(busy_ticks) - busy_start) / $(getconf CLK_TCK) ))
	echo "# total wall time $wall s; host slowdown $slowdown % (backstops, progress slack and per-test timeouts scaled by it)"
	echo "# total cpu $cpu_total s in the rows; the host's $(nproc) cores busy $busy s, $((busy * 100 / ($(nproc) * (wall > 0 ? wall : 1)))) % of the run"
	# Last before the closing line: a log kept only by its tail (CI's)
	# still says what failed and why.
	if [ ${#fails[@]} -gt 0 ]; then
		echo "# what failed (${#fails[@]}; each suite's console is above):"
		for r in "${fails[@]:0:30}"; do echo "# - $r"; done
		[ ${#fails[@]} -le 30 ] || echo "# - ... $((${#fails[@]} - 30)) more"
	fi
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" = 0 ]
	exit $?
}

declare -A RUNNING=() STARTED=()
t0=$SECONDS
cpu_of "$work/cpu-toolchain" bash "$RT_TOP/scripts/install-toolchain.sh" >&2 || { failed=$((failed + 1)); finish; }
row host toolchain - - - $((SECONDS - t0)) - "$(cpu_secs "$work/cpu-toolchain")"
need_kernel() { # need_kernel KERNEL: whether a selected suite runs on it
	local s
	for s in "${suites[@]}"; do [ "${SUITE_KERNEL[$s]}" = "$1" ] && return 0; done
	return 1
}
# A clippy build that prints no warning (the compat code of each series is
# linted on its own kernel).
clippy_clean() { # clippy_clean MAKE_ARGS...
	local out
	out=$(make "$@" CLIPPY=1 2>&1) || { echo "$out"; return 1; }
	echo "$out" | grep -E '^(warning|error)' -A8 && return 1
	return 0
}
prepare_kernel() { # prepare_kernel KERNEL: kernel, module, clients (a job)
	local kernel=$1 kd m=$work/mod-$1
	kd=$(bash "$RT_TOP/scripts/build-kernel.sh" "$kernel") && [ -d "$kd" ] || return 1
	# Debian's kernel: build-debian.sh built and installed the module in
	# its userland (the Debian package, as DKMS installs it).
	if [ "${kernel#*-}" = debian ]; then
		bash "$RT_TOP/scripts/build-clients.sh" "$kd" >/dev/null
		return
	fi
	rt_copy_module_sources "$m" || return 1
	# The other series' test kernel: its clippy build is its host check
	# (it also builds the module); the debug kernels build the module only.
	if [ "${kernel%-*}" != "${main_kernel%-*}" ] && [ "${kernel#*-}" = test ]; then
		clippy_clean -C "$m" KDIR="$kd" || { echo "clippy warnings or errors for $kernel" >&2; return 1; }
	else
		make -C "$m" KDIR="$kd" >/dev/null || return 1
	fi
	make -C "$m" KDIR="$kd" testmod >/dev/null || return 1
	bash "$RT_TOP/scripts/build-clients.sh" "$kd" >/dev/null
}
# The scheduler: $jobs jobs at once; the first pending job whose kernel is
# ready starts (the list is longest first); the other kernels are built by
# jobs of their own, one after another, beside the main test kernel's
# host checks and suites.
pending=("${suites[@]}")
builds=() debian_build=()
# The debug kernels first: their suites are the longest, and on a fresh
# machine the debug kernel's build and suites are the critical path.
# Debian's kernel is not built but fetched (debootstrap, apt, then the
# module and the Rust crates of Debian's tree, in its userland): a job of
# its own prepares it from the start, beside the builds, and takes no
# suite's place, so that the 6.12 suites wait for the debug and 6.12
# builds only and Debian's suites start as soon as it is ready. It is
# not idle: on a host slowed 2.1x it took 1,112 s (debootstrap 79 s,
# apt 241 s, the module 690 s; 228 s in all on a quiet one).
for k in 7.3-debug 6.12-debug 7.3-test 7.3-debian 6.12-test; do
	[ "$k" != "$main_kernel" ] && need_kernel "$k" || continue
	if [ "${k#*-}" = debian ]; then debian_build+=("$k"); else builds+=("$k"); fi
done
start_job() { # start_job NAME COMMAND...
	local name=$1
	shift
	"$@" &
	RUNNING[$!]=$name
	STARTED[$name]=$SECONDS
}
# Each kernel is prepared by a job of its own (named build:KERNEL), so
# that the end of the job is the kernel being ready (or broken) and
# wakes the scheduler's `wait -n`. The builds run one after another: the
# scheduler starts the next when one ends. (Until 2026-12-06 one job built
# them all and woke the scheduler with SIGUSR1 after each; a signal that
# interrupts `wait -n -p` leaves the variable unset, and with the signals
# `wait -n` once reported a pid that was no longer a running job: the
# scheduler died of each, in the runs of 64a04b8 and 15e7f6f.)
build_one() { # build_one KERNEL
	local kernel=$1 t=$SECONDS
	if cpu_of "$work/build-$kernel.cpu" prepare_kernel "$kernel" >"$work/build-$kernel.log" 2>&1; then
		touch "$work/ready-$kernel"
		echo "$((SECONDS - t))" >"$work/build-$kernel.time"
	else
		touch "$work/broken-$kernel"
	fi
}
build_next() { # start the next kernel's build, if any
	[ ${#builds[@]} -gt 0 ] || return 0
	start_job "build:${builds[0]}" build_one "${builds[0]}"
	builds=("${builds[@]:1}")
}
# The other kernels build from the start, beside the main test kernel, the
# host checks and its suites (on a fresh machine they are the longest job,
# and their suites wait for them).
# A kernel already built (warm: its build job only builds the module, a
# minute or two) holds a place for each of its suites while that job runs,
# and the job itself takes none: a later, shorter suite does not start
# ahead of them. The guests start before the host checks, at about the
# time the debug kernel's module is done; without the hold, test, dropin
# and napi would take the places the debug shards, the longest suites,
# are to start in first. A kernel still to be built holds none: its
# suites would wait for many minutes.
declare -A WARM=()
for k in "${builds[@]}"; do
	bash "$RT_TOP/scripts/build-kernel.sh" --print-kdir "$k" >/dev/null 2>&1 && WARM[$k]=1
done
build_next
[ ${#debian_build[@]} = 0 ] || start_job "build:${debian_build[0]}" build_one "${debian_build[0]}"
# The jobs that count against $jobs: the guests and the kernel builds
# (Debian's preparation and the host checks run beside them, and so does
# the module's build for a cached kernel: its suites hold their places).
busy_jobs() {
	local n=0 p j
	for p in "${!RUNNING[@]}"; do
		j=${RUNNING[$p]}
		# Only a build job is looked up in WARM: a suite can bear a
		# kernel's name (the suite 7.3-test runs on the kernel 7.3-test).
		case $j in
		checks:host | build:*-debian) continue ;;
		build:*) [ -z "${WARM[${j#build:}]:-}" ] || continue ;;
		esac
		n=$((n + 1))
	done
	echo "$n"
}
t0=$SECONDS
kdir=$(cpu_of "$work/cpu-kernel" bash "$RT_TOP/scripts/build-kernel.sh" "$main_kernel") && [ -d "$kdir" ] ||
	{ rt_log "no kernel tree: '$kdir'"; failed=$((failed + 1)); finish; }
row "$main_kernel" kernel - - - $((SECONDS - t0)) - "$(cpu_secs "$work/cpu-kernel")"

mk() { make -C "$RT_TOP" KDIR="$kdir" "$@"; }
[ $host_checks = 0 ] || step rustfmt mk rustfmtcheck
# A failed build must not let the guest suites run a stale module or
# program: the modules (rust_tun.ko, rust_dummy.ko, rust_tun_vhost.ko, testmod/rtun_veto.ko) and the program are
# removed first, and the guest suites run only if rust_tun.ko and the
# program were built now.
rm -f "$RT_TOP/rust_tun.ko" "$RT_TOP/rust_dummy.ko" "$RT_TOP/rust_tun_vhost.ko" "$RT_TOP/testmod/rtun_veto.ko" "$(rt_guest_bin)"
step build mk all testmod
built_module=$([ -f "$RT_TOP/rust_tun.ko" ] && echo 1 || echo 0)
step guest-programs bash "$RT_TOP/scripts/build-guest.sh"
built_guest=$([ -x "$(rt_guest_bin)" ] && echo 1 || echo 0)
# The other host checks need nothing the guests need: they run as a job of
# their own beside the guest suites (the job's end counts them,
# host_account), so that the first guests start once the module and the
# program are built. They only read the work tree, whose build the test
# kernel's guests load: clippy builds in a copy of the sources.
host_checks_job() {
	local m=$work/clippy-${main_kernel%-*}
	{
		rt_copy_module_sources "$m" &&
			bg_step "clippy-${main_kernel%-*}" clippy_clean -C "$m" KDIR="$kdir"
		# rust_dummy.ko is built on sys/'s core alone, without its tun part.
		bg_step layer bash "$RT_TOP/scripts/layer-check.sh"
		bg_step guest-tests bash -c "cd '$RT_TOP/guest' && RUSTC=$RT_RUSTC $RT_CARGO test --locked"
		bg_step compile-fail bash "$RT_TOP/scripts/compile-fail.sh" "$kdir"
		bg_step host-logic bash -c "cd '$RT_TOP/hosttest' && RUSTC=$RT_RUSTC $RT_CARGO test --locked"
		bg_step crate-hashes bash "$RT_TOP/scripts/debian/crate-hashes-test.sh"
		# What the docs name exists (tun.c's side in the main kernel's tree), and
		# the README and design documents carry no history.
		bg_step docs bash -c "cd '$RT_TOP' && python3 scripts/docs-check.py --kernel '$kdir'"
	} >"$work/host-checks.out" 2>&1
}
HOST_CHECKS=("clippy-${main_kernel%-*}" layer guest-tests compile-fail host-logic crate-hashes docs)
bg_step() { # bg_step NAME COMMAND...: a host check in host_checks_job; its verdict into $work/host-checks
	local name=$1 t0=$SECONDS v=ok
	shift
	rt_log "check $name"
	cpu_of "$work/cpu-$name" "$@" || v=fail
	echo "$v $name $((SECONDS - t0)) $(cpu_secs "$work/cpu-$name")" >>"$work/host-checks"
}
host_account() { # host_account: the host checks' verdicts (a check that wrote none failed)
	local n v name t cpu
	echo "# ---- host checks beside the guests ----"
	cat "$work/host-checks.out" 2>/dev/null || true
	for n in "${HOST_CHECKS[@]}"; do
		read -r v name t cpu < <(grep -E "^(ok|fail) $n " "$work/host-checks" 2>/dev/null) || v='' t=- cpu=-
		if [ "$v" = ok ]; then
			passed=$((passed + 1))
			echo "ok - host $n"
			row host "$n" 1 0 0 "$t" - "$cpu"
		else
			failed=$((failed + 1))
			if [ -n "$v" ]; then fails+=("host $n"); else fails+=("host $n: no verdict (its job ended early)"); fi
			echo "not ok - host $n"
			row host "$n" 0 1 0 "$t" - "$cpu"
		fi
	done
}
[ $host_checks = 0 ] || start_job checks:host host_checks_job
host_checks_end() { # host_checks_end: wait for the host checks' job and count them (an early end)
	local p
	for p in "${!RUNNING[@]}"; do
		[ "${RUNNING[$p]}" = checks:host ] || continue
		wait "$p"
		unset "RUNNING[$p]"
		host_account
	done
}
if [ "$built_module" != 1 ] || [ "$built_guest" != 1 ]; then
	rt_log "guest suites not run: the module or the guest programs did not build"
	failed=$((failed + 1))
	host_checks_end
	finish
fi

# Each kernel's module and clients, ready before its suites start: the test
# kernel's module is the work tree's; the others are built in a copy of the
# sources ($work/mod-FLAVOR), so that suites on different kernels can run at
# once.
declare -A MODULE=()
for k in 7.3-test 6.12-test 7.3-debug 6.12-debug; do MODULE[$k]=$work/mod-$k/rust_tun.ko; done
MODULE[7.3-debian]=$(rt_debian_pkgdir)/modules/rust_tun.ko
MODULE[$main_kernel]=$RT_TOP/rust_tun.ko
bash "$RT_TOP/scripts/build-clients.sh" "$kdir" >/dev/null || { failed=$((failed + 1)); host_checks_end; finish; }
touch "$work/ready-$main_kernel"

suite_job() { # suite_job SUITE: one guest suite (a job; its console in $work/SUITE.log)
	local s=$1
	if [ "${s#*-}" = runner ]; then
		cpu_of "$work/$s.cpu" runner_job "$s"
		return
	fi
	# shellcheck disable=SC2086 # SUITE_ARGS are words
	cpu_of "$work/$s.cpu" guest "$s" "$work/$s" "$slack" "${SUITE_LIMIT[$s]}" ${SUITE_ARGS[$s]} RTUN_SLOWDOWN="$slowdown" \
		"${guest_args[@]}"
}
# The guests run at a lower priority (nice 5) than the jobs that others
# wait for: the kernels' and modules' builds, Debian's preparation (its
# suites start when it ends) and the host checks. With four guests at once
# Debian's preparation ran on 0.6 of a core (574 CPU-s in 951 s of a
# 1,598 s run), its 539 s suite behind it the longest chain; the guests
# mostly sleep and count their timeouts in the time they did not wait for
# a host CPU, which includes what a busier neighbour takes (run-queue
# delay: scripts/guest-watchdog.py).
guest() { # guest SUITE OUT SLACK BACKSTOP [RUN-GUEST OPTIONS] TESTS.SH-ARGS...: a guest, its console in OUT.log
	local s=$1 out=$2 progress=$3 backstop=$4 opts=()
	shift 4
	while [[ ${1:-} == --* ]]; do opts+=("$1"); shift; done
	nice -n 5 bash "$RT_TOP/scripts/run-guest.sh" --kernel "${SUITE_KERNEL[$s]}" --module "${MODULE[${SUITE_KERNEL[$s]}]}" \
		--clients --timeout "$backstop" --progress "$progress" "${opts[@]}" --log "$out.log" \
		"$RT_TOP/scripts/guest/tests.sh" "$@" >"$out.out" 2>&1
}
# The runner suite: three checks at once (their guests mostly sleep). The
# runner's guest ($work/SUITE.log): the hung test and the stretched timeout
# (run-guest.sh --selftest makes the host claim contention during it). The
# stalled guest ($work/SUITE-stall.log): its runner stops after one test,
# and the watchdog must end it for want of progress, 20 + 10 s after that
# test's result, long before its backstop. The watchdog's own self-test
# against fake consoles ($work/SUITE-watchdog.out).
runner_job() { # runner_job SUITE
	local s=$1
	# shellcheck disable=SC2086 # SUITE_ARGS are words
	guest "$s" "$work/$s" "$slack" "${SUITE_LIMIT[$s]}" --selftest ${SUITE_ARGS[$s]} RTUN_SLOWDOWN="$slowdown" &
	guest "$s" "$work/$s-stall" 10 "${SUITE_LIMIT[$s]}" RTUN_SELFTEST=stall RTUN_TEST_TIMEOUT=20 RTUN_SLOWDOWN="$slowdown" &
	python3 "$RT_TOP/scripts/guest-watchdog.py" --selftest >"$work/$s-watchdog.out" 2>&1
	echo $? >"$work/$s-watchdog.rc"
	wait
}

# The runner's check: the hung test is named, with a task dump, within its
# timeout (20 s here; its duration line says how long it ran, less what
# the host lost meanwhile: its contention line, if any), the stretched test
# passes after more than its timeout's wall time, the suite then ends
# cleanly (a verdict), and nothing else failed.
runner_verdict() { # runner_verdict LOG
	local log=$1 took lost stretch
	grep -qE '^not ok 1 rust_tun_selftest_hang # TIMEOUT$' "$log" || { rt_log "runner: the hang was not reported as a TIMEOUT"; return 1; }
	grep -qE '^# task dump of process group' "$log" || { rt_log "runner: no task dump"; return 1; }
	grep -qE '^#   pid [0-9]+ tid [0-9]+ rtun state S wchan ' "$log" || { rt_log "runner: the dump shows no sleeping test task"; return 1; }
	took=$(sed -n 's/^# duration rust_tun_selftest_hang \([0-9.]*\)$/\1/p' "$log")
	lost=$(sed -n 's/^# contention rust_tun_selftest_hang \([0-9.]*\) s .*/\1/p' "$log")
	[ -n "$took" ] && awk -v t="$took" -v l="${lost:-0}" 'BEGIN { exit !(t - l >= 20 && t - l < 45) }' ||
		{ rt_log "runner: the hung test ran ${took:-?} s (${lost:-0} s of it contended), its timeout is 20 s"; return 1; }
	grep -qE '^ok 2 rust_tun_selftest_stretch$' "$log" ||
		{ rt_log "runner: the test the host reported contention for was not given the time: $(grep -E '^(# rust_tun_selftest_stretch: |not ok 2 )' "$log" | head -2 | tr '\n' ' ')"; return 1; }
	stretch=$(sed -n 's/^# duration rust_tun_selftest_stretch \([0-9.]*\)$/\1/p' "$log")
	grep -qE '^RTUN-VERDICT: rc=1$' "$log" || { rt_log "runner: no clean end of the suite"; return 1; }
	rt_log "runner: the hung test was named after $took s (timeout 20 s); the contended one passed after $stretch s"
}

# The stalled guest's check: its runner passed a test, then stopped; the
# watchdog must have stopped the guest for want of progress after that
# test, 30 s (the 20 s timeout + 10 s) of uncontended time after it, and
# not at its backstop.
stall_verdict() { # stall_verdict OUT LOG
	local out=$1 log=$2 n
	grep -qE '^ok 1 rust_tun_selftest_pass$' "$log" || { rt_log "stall: the first test did not pass"; return 1; }
	n=$(sed -n 's/.*FAIL: unfinished guest, stopped by the watchdog: no progress for \([0-9]*\) s after test 1 (rust_tun_selftest_pass) .*/\1/p' "$out")
	[ -n "$n" ] || { rt_log "stall: the guest was not stopped for want of progress after test 1: $(grep -E 'FAIL' "$out" | head -2 | tr '\n' ' ')"; return 1; }
	[ "$n" -ge 30 ] && [ "$n" -lt 45 ] || { rt_log "stall: stopped after $n s without progress, not 30-45"; return 1; }
	! grep -q '^RTUN-VERDICT' "$log" || { rt_log "stall: the stalled guest ended by itself"; return 1; }
	rt_log "stall: the watchdog stopped the stalled guest after $n s without progress"
}

# A guest that failed outside its tests: run-guest.sh's verdict (a splat,
# the watchdog, the script's exit) with the first splat lines it printed
# after "kernel problems" (its own pattern, not a copy), an OOM (which it
# does not count), and the console's last line.
outside_tests() { # outside_tests SUITE
	local l
	while IFS= read -r l; do fails+=("$1: $l"); done < <(
		grep -E '^\[run-guest.sh .*FAIL' "$work/$1.out" | tail -3
		sed -n '/^\[run-guest.sh .*FAIL: kernel problems/,/^\[run-guest.sh/{/^\[run-guest.sh/!p}' "$work/$1.out" |
			head -3 | cut -c1-200
		grep -nE 'invoked oom-killer|Out of memory' "$work/$1.log" | head -1 | cut -c1-200
		echo "console's last line: $(grep -v '^$' "$work/$1.log" | tail -1 | cut -c1-160)")
}

# Counts a finished suite: its tests, and one failure more for a guest that
# did not finish its plan or failed outside the tests (a kernel splat,
# kmemleak, a verdict, the watchdog).
account() { # account SUITE RC SECONDS
	local s=$1 grc=$2 took=$3 log=$work/$1.log gp gs gf plan pp pf l want
	echo "# ==== suite $s (${SUITE_KERNEL[$s]} kernel): ${took} s ===="
	cat "$work/$s.log" 2>/dev/null || true
	grep -E '^\[(run-guest.sh|guest-watchdog)' "$work/$s.out" >&2 || true
	if [ "${s#*-}" = runner ]; then
		local rp=0 rf=0 what ok
		echo "# ---- the stalled guest ($s-stall) ----"
		cat "$work/$s-stall.log" 2>/dev/null || true
		grep -E '^\[(run-guest.sh|guest-watchdog)' "$work/$s-stall.out" >&2 || true
		sed 's/^/# /' "$work/$s-watchdog.out" 2>/dev/null || true
		for what in "runner names a hung test and stretches a contended one" \
			"the watchdog stops a guest without progress" "the watchdog's self-test"; do
			case $what in
			runner*) runner_verdict "$log" && ok=1 || ok=0 ;;
			*without*) stall_verdict "$work/$s-stall.out" "$work/$s-stall.log" && ok=1 || ok=0 ;;
			*) [ "$(cat "$work/$s-watchdog.rc" 2>/dev/null)" = 0 ] && ok=1 || ok=0 ;;
			esac
			if [ $ok = 1 ]; then
				rp=$((rp + 1))
				echo "ok - $what"
			else
				rf=$((rf + 1))
				fails+=("$s: not ok - $what")
				echo "not ok - $what"
			fi
		done
		passed=$((passed + rp))
		failed=$((failed + rf))
		row "${SUITE_KERNEL[$s]}" "$s" "$rp" "$rf" 0 "$took" "${SUITE_LIMIT[$s]}" "$(cpu_secs "$work/$s.cpu")"
		return
	fi
	gp=$(grep -E '^ok [0-9]+ ' "$log" | grep -vc ' # SKIP')
	gs=$(grep -cE '^ok [0-9]+ .* # SKIP' "$log")
	gf=$(grep -cE '^not ok [0-9]+ ' "$log")
	# Debian's kernel: the package checks around the suite (debian-pkg.sh),
	# beside the TAP plan: two, three in the drop-in run.
	if [ "${SUITE_KERNEL[$s]#*-}" = debian ]; then
		want=2
		[ "${s#*-}" != debdropin ] || want=3
		pp=$(grep -c '^RTUN-PKG: ok ' "$log" || true)
		pf=$(grep -c '^RTUN-PKG: not ok ' "$log" || true)
		while IFS= read -r l; do fails+=("$s: ${l#RTUN-PKG: }"); done < <(grep '^RTUN-PKG: not ok ' "$log")
		if [ $((pp + pf)) != "$want" ]; then
			fails+=("$s: $((pp + pf)) of the $want package checks ran")
			[ $((pp + pf)) -gt "$want" ] || pf=$((want - pp))
		fi
		passed=$((passed + pp))
		failed=$((failed + pf))
	fi
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$log" | tail -1)
	passed=$((passed + gp))
	skipped=$((skipped + gs))
	failed=$((failed + gf))
	# Each failed test with the last diagnostic line the runner printed
	# before its verdict.
	while IFS= read -r l; do fails+=("$s: $l"); done < <(awk '
		/^# / && !/^# duration / { diag = substr($0, 3) }
		/^ok [0-9]+ / { diag = "" }
		/^not ok [0-9]+ / { print $0 (diag == "" ? "" : " -- " substr(diag, 1, 160)); diag = "" }' "$log")
	# A plan of no tests is a failure, but for a filter that leaves a
	# shard of the debug suites without a test of its own (the inner loop).
	if [ -z "$plan" ] || [ $((gp + gs + gf)) != "$plan" ] || { [ "$plan" = 0 ] && ! has_filter; }; then
		rt_log "suite $s ran $((gp + gs + gf)) of ${plan:-?} planned tests"
		failed=$((failed + 1))
		fails+=("$s: ran $((gp + gs + gf)) of ${plan:-?} planned tests; the last verdict: $(grep -E '^(not )?ok [0-9]+ ' "$log" | tail -1)")
		outside_tests "$s"
	elif [ "$grc" != 0 ] && [ "$gf" = 0 ]; then
		rt_log "suite $s: the guest failed outside its tests (see its console above)"
		failed=$((failed + 1))
		outside_tests "$s"
	fi
	row "${SUITE_KERNEL[$s]}" "$s" "$((gp + ${pp:-0}))" "$((gf + ${pf:-0}))" "$gs" "$took" "${SUITE_LIMIT[$s]}" "$(cpu_secs "$work/$s.cpu")"
}

while [ ${#pending[@]} -gt 0 ] || [ ${#RUNNING[@]} -gt 0 ]; do
	while [ "$(busy_jobs)" -lt "$jobs" ]; do
		next= rest=() held=0 busy=$(busy_jobs)
		for s in "${pending[@]}"; do
			k=${SUITE_KERNEL[$s]}
			if [ -z "$next" ] && [ -e "$work/ready-$k" ] && [ $((busy + held)) -lt "$jobs" ]; then
				next=$s
			elif [ -e "$work/broken-$k" ]; then
				rt_log "suite $s not run: the $k kernel or its module did not build (log below)"
				tail -30 "$work/build-$k.log" >&2
				failed=$((failed + 1))
				row "$k" "$s" 0 0 0 - -
			else
				# A place held for an earlier suite whose cached kernel
				# only lacks its module.
				[ -e "$work/ready-$k" ] || [ -z "${WARM[$k]:-}" ] || held=$((held + 1))
				rest+=("$s")
			fi
		done
		pending=("${rest[@]}")
		[ -n "$next" ] || break
		rt_log "suite $next starts (${SUITE_KERNEL[$next]} kernel, backstop ${SUITE_LIMIT[$next]} s)"
		start_job "$next" suite_job "$next"
	done
	[ ${#RUNNING[@]} -gt 0 ] || break
	wait -n -p done_pid
	rc=$?
	# Only our jobs are reported (nothing else runs in the background);
	# anything else would be a bug, named rather than followed.
	if [ -z "${done_pid:-}" ] || [ -z "${RUNNING[$done_pid]+set}" ]; then
		rt_log "scheduler: wait -n returned $rc for '${done_pid:-}', not a running job"
		failed=$((failed + 1))
		fails+=("scheduler: wait -n returned $rc for '${done_pid:-}', not a running job")
		break
	fi
	name=${RUNNING[$done_pid]}
	unset "RUNNING[$done_pid]"
	took=$((SECONDS - STARTED[$name]))
	if [ "$name" = checks:host ]; then
		host_account
		continue
	fi
	if [[ $name == build:* ]]; then
		k=${name#build:}
		[ -e "$work/build-$k.time" ] && row "$k" kernel - - - "$(cat "$work/build-$k.time")" - "$(cpu_secs "$work/build-$k.cpu")"
		[[ $k != *-debian ]] || package_account "$k"
		[[ $k == *-debian ]] || build_next
		continue
	fi
	rt_log "suite $name ended (rc $rc) after $took s"
	account "$name" "$rc" "$took"
done
finish
