#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The host side of a test guest's watchdog (scripts/run-guest.sh).

usage: guest-watchdog.py --log FILE --pidfile FILE --backstop S
                         [--slack S [--boot S]] [--ctl FIFO]
                         [--verdict FILE] [--selftest-contention RATE]
       guest-watchdog.py --selftest

Reads the guest's console (QEMU's stdout) on stdin and copies it, as it
comes, to stdout and to FILE. QEMU's pid comes from its -pidfile.

Contention: once a second it reads how long QEMU's threads waited for a
host CPU while they could run (/proc/PID/task/*/schedstat, the run-queue
delay: another guest, a kernel build, a CFS quota's throttling, as
scripts/slowed.sh sets: a busy loop under a 10 % quota showed 4.0 s of
run-queue delay in 4.1 s on a 6.18 host) plus the host's steal time
(/proc/stat) over what the busiest thread ran. The most delayed thread's
share is the interval's "lost" time: what a guest vCPU (one TCG thread;
with MTTCG the most starved one) could not run although it wanted to. A
guest that sleeps loses only what its wake-ups (timer ticks) wait for: a
tenth of its time on a host with twice as many runnable tasks as cores. The
running total
goes to the guest as a line `lost_ms N` through --ctl, a FIFO behind a
second serial port; the guest's runner (guest/src/runner.rs) counts a
test's timeout in its own uncontended time: wall time minus what the host
lost meanwhile.

The progress watchdog (with --slack): the guest is stopped (SIGTERM, then
SIGKILL) when for too long no test has made progress, counted in the same
uncontended time: BOOT seconds (default 2 * SLACK) from the start until
the runner's header (`# per-test timeout N s`), then N + SLACK from the
header and from each result line (`ok N NAME`, `not ok N NAME`). N is the
longest timeout the runner applies to a test; SLACK covers what the runner
does between a test's end and its result line (a timed-out test's task
dump and kill, the leftovers check, a kmemleak scan) and what the guest
script does after the last test. The backstop ends the guest after S
seconds of wall time whatever it prints: a guest that loops printing
results. What ended the guest, if anything, is written to --verdict.

--selftest-contention RATE (the runner suite only): while the guest is
in the test that printed `RTUN-SELFTEST: contention` (until the next
result line), the host claims RATE seconds lost per second on top of what
it measures, so that the suite can check that the guest's timeouts
stretch with what the host reports.

--selftest runs this watchdog against fake guests (a stream of console
lines with pauses) and checks what it ends and what it lets finish;
scripts/test.sh runs it with the runner suite.
"""
import argparse
import errno
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

HEADER = re.compile(r"^# per-test timeout (\d+) s$")
RESULT = re.compile(r"^(?:not )?ok (\d+) (\S+)")
MARKER = "RTUN-SELFTEST: contention"
# Terminal control sequences (the firmware's screen resets) before a line.
ESCAPES = re.compile(r"\x1b(?:\[[0-9;?]*[A-Za-z]|.)")


class Contention:
    """How long a process's threads waited for a host CPU, in total."""

    def __init__(self):
        self.threads = {}  # tid -> (run ns, wait ns)
        self.stat = None  # (steal ticks, all ticks) of /proc/stat's cpu line
        self.lost = 0.0
        self.warned = False

    @staticmethod
    def host_ticks():
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
        # user nice system idle iowait irq softirq steal (guest time is
        # already counted in user).
        return fields[7] if len(fields) > 7 else 0, sum(fields[:8])

    def sample(self, pid, wall):
        """Adds what the interval of `wall` seconds lost; returns it."""
        threads = {}
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                try:
                    with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                        run, wait = (int(v) for v in f.read().split()[:2])
                    threads[tid] = (run, wait)
                except (OSError, ValueError):
                    pass
        except OSError:
            pass
        if not threads and not self.warned and pid:
            print("[guest-watchdog] no schedstat for the guest: contention not measured", file=sys.stderr)
            self.warned = True
        max_run = max_wait = 0
        for tid, (run, wait) in threads.items():
            r0, w0 = self.threads.get(tid, (run, wait))
            max_run = max(max_run, run - r0)
            max_wait = max(max_wait, wait - w0)
        self.threads = threads
        steal_share = 0.0
        try:
            stat = self.host_ticks()
            if self.stat is not None and stat[1] > self.stat[1]:
                steal_share = (stat[0] - self.stat[0]) / (stat[1] - self.stat[1])
            self.stat = stat
        except (OSError, ValueError, IndexError):
            pass
        lost = min(wall, max_wait / 1e9 + max_run / 1e9 * steal_share)
        self.lost += lost
        return lost


class Watchdog:
    def __init__(self, args):
        self.args = args
        self.t0 = time.monotonic()
        self.contention = Contention()
        self.pid = None
        self.ctl = None
        self.timeout = None  # the runner's per-test timeout, once announced
        self.event_t = self.t0  # the last progress: wall time and lost then
        self.event_lost = 0.0
        self.event_what = "the guest's start, before the runner's header"
        self.injecting = False
        self.verdict = ""
        self.killed_at = None
        self.partial = b""

    def read_pid(self):
        if self.pid is None:
            try:
                with open(self.args.pidfile) as f:
                    self.pid = int(f.read().strip())
            except (OSError, ValueError):
                pass
        return self.pid

    def open_ctl(self):
        if self.ctl is None and self.args.ctl:
            try:
                self.ctl = os.open(self.args.ctl, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError:
                pass  # ENXIO: QEMU has not opened it yet
        return self.ctl

    def line(self, text):
        text = ESCAPES.sub("", text.rstrip("\r"))
        m = HEADER.match(text)
        if m:
            self.timeout = int(m.group(1))
            self.progress("the runner's header (per-test timeout %s s)" % m.group(1))
            return
        m = RESULT.match(text)
        if m:
            self.injecting = False
            self.progress("test %s (%s)" % (m.group(1), m.group(2)))
            return
        if self.args.selftest_contention and text.startswith(MARKER):
            self.injecting = True

    def progress(self, what):
        self.event_t = time.monotonic()
        self.event_lost = self.contention.lost
        self.event_what = what

    def bound(self):
        if self.timeout is None:
            return self.args.boot if self.args.boot is not None else 2 * self.args.slack
        return self.timeout + self.args.slack

    def tick(self, wall):
        pid = self.read_pid()
        self.contention.sample(pid, wall)
        if self.injecting:
            self.contention.lost += min(wall, self.args.selftest_contention * wall)
        fd = self.open_ctl()
        if fd is not None:
            try:
                os.write(fd, b"lost_ms %d\n" % int(self.contention.lost * 1000))
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EPIPE):
                    raise
        if self.killed_at is not None:
            if time.monotonic() - self.killed_at > 5 and pid:
                self.signal(signal.SIGKILL)
            return
        now = time.monotonic()
        if now - self.t0 >= self.args.backstop:
            self.kill("ran past the backstop of %d s of wall time (the last progress: %s, %d s earlier)"
                      % (self.args.backstop, self.event_what, now - self.event_t))
        elif self.args.slack is not None:
            wall_since = now - self.event_t
            lost_since = self.contention.lost - self.event_lost
            if wall_since - lost_since >= self.bound():
                how = ("per-test timeout %d s + %d s" % (self.timeout, self.args.slack)
                       if self.timeout is not None else "the boot allowance")
                self.kill("no progress for %d s after %s (%d s of wall time, %d s of it waiting for a host CPU; "
                          "bound %d s: %s)" % (wall_since - lost_since, self.event_what, wall_since, lost_since,
                                               self.bound(), how))

    def signal(self, sig):
        try:
            os.kill(self.pid, sig)
        except (OSError, TypeError):
            pass

    def kill(self, why):
        self.verdict = why
        self.killed_at = time.monotonic()
        print("\n[guest-watchdog] stopping the guest: %s" % why, file=sys.stderr, flush=True)
        self.signal(signal.SIGTERM)

    def run(self):
        out = sys.stdout.buffer
        log = open(self.args.log, "wb") if self.args.log else None
        last = time.monotonic()
        stdin = sys.stdin.buffer.fileno()
        while True:
            wait = max(0.0, 1.0 - (time.monotonic() - last))
            r, _, _ = select.select([stdin], [], [], wait)
            if r:
                data = os.read(stdin, 65536)
                if not data:
                    break
                out.write(data)
                out.flush()
                if log:
                    log.write(data)
                    log.flush()
                lines = (self.partial + data).split(b"\n")
                self.partial = lines.pop()
                for line in lines:
                    self.line(line.decode("utf-8", "replace"))
            now = time.monotonic()
            if now - last >= 1.0:
                self.tick(now - last)
                last = now
        if self.partial:
            self.line(self.partial.decode("utf-8", "replace"))
        if log:
            log.close()
        wall = time.monotonic() - self.t0
        print("[guest-watchdog] the guest waited %d s of its %d s for a host CPU" % (self.contention.lost, wall),
              file=sys.stderr)
        if self.args.verdict:
            with open(self.args.verdict, "w") as f:
                f.write(self.verdict + ("\n" if self.verdict else ""))


# The fake guest of --selftest: writes its pid to PIDFILE, then runs its
# steps: `say TEXT` prints a line, `sleep S` pauses, `spam TEXT` prints
# numbered result lines forever, five a second.
FAKE_GUEST = r"""
import os, sys, time
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
for step in sys.argv[2:]:
    op, _, arg = step.partition(" ")
    if op == "say":
        print(arg, flush=True)
    elif op == "sleep":
        time.sleep(float(arg))
    elif op == "spam":
        n = 0
        while True:
            n += 1
            print("ok %d %s" % (n, arg), flush=True)
            time.sleep(0.2)
"""


def selftest_case(name, steps, opts, expect, results, lock):
    """Runs one fake guest under the watchdog; records (ok, why)."""
    with tempfile.TemporaryDirectory() as d:
        pidfile, verdict, ctl = (os.path.join(d, n) for n in ("pid", "verdict", "ctl"))
        os.mkfifo(ctl)
        # Opened for reading and writing, as QEMU opens its pipe chardev:
        # the watchdog can write, and what it wrote can be read back.
        ctl_fd = os.open(ctl, os.O_RDWR | os.O_NONBLOCK)
        t0 = time.monotonic()
        guest = subprocess.Popen([sys.executable, "-c", FAKE_GUEST, pidfile] + steps, stdout=subprocess.PIPE)
        dog = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--pidfile", pidfile, "--verdict", verdict,
                                "--ctl", ctl, "--log", os.path.join(d, "log")] + opts,
                               stdin=guest.stdout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        guest.stdout.close()
        try:
            dog.wait(timeout=60)
        except subprocess.TimeoutExpired:
            dog.kill()
        guest.kill()
        guest.wait()
        took = time.monotonic() - t0
        with open(verdict) as f:
            said = f.read().strip()
        lost = 0
        try:
            for line in os.read(ctl_fd, 1 << 16).decode().splitlines():
                lost = int(line.split()[1])
        except OSError:
            pass
        os.close(ctl_fd)
        why = expect(said, took, lost)
        with lock:
            results.append((name, why, "%.1f s, lost_ms %d, verdict %r" % (took, lost, said)))


def selftest():
    results, lock = [], threading.Lock()
    head = ["say booting", "say \x1bc\x1b[?7l\x1b[2J# per-test timeout 2 s", "say 1..3"]
    bound = ["--slack", "1", "--boot", "2"]

    def stall(said, took, lost):
        # Killed 3 s (2 + 1) after `ok 2`, which came ~0.5 s in.
        if not said.startswith("no progress for 3 s after test 2 (b) "):
            return "not ended for its stall after test 2"
        return None if 3 <= took < 9 else "ended after %.1f s, not 3.5-9" % took

    def boot(said, took, lost):
        if not said.startswith("no progress for 2 s after the guest's start"):
            return "a guest stuck in its boot not ended as such"
        return None if 2 <= took < 8 else "ended after %.1f s, not 2-8" % took

    def steady(said, took, lost):
        # Eight results a second apart, 8 s in all: more than twice the
        # bound, which a fixed total of that size would have ended.
        return "a guest that progresses was stopped: " + said if said else None

    def backstop(said, took, lost):
        if not said.startswith("ran past the backstop of 4 s"):
            return "a guest printing results forever was not ended by the backstop"
        return None if 4 <= took < 10 else "ended after %.1f s, not 4-10" % took

    def stretched(said, took, lost):
        # 5 s without a result, 80 % of them claimed lost: 1 s of
        # uncontended time, under the 3 s bound; the guest sees it too.
        if said:
            return "the claimed contention did not stretch the bound: " + said
        return None if lost >= 2500 else "the guest was told lost_ms %d, not >= 2500" % lost

    cases = [
        ("stall", head + ["say ok 1 a", "sleep 0.5", "say ok 2 b", "sleep 60"], bound + ["--backstop", "30"], stall),
        ("boot", ["say booting", "sleep 60"], bound + ["--backstop", "30"], boot),
        ("steady", head + ["sleep 1", "say ok %d t%d" % (1, 1)] +
         [s for i in range(2, 9) for s in ("sleep 1", "say ok %d t%d" % (i, i))], bound + ["--backstop", "30"], steady),
        ("backstop", head + ["spam t"], bound + ["--backstop", "4"], backstop),
        ("stretched", head + ["say ok 1 a", "say " + MARKER, "sleep 5", "say ok 2 b"],
         bound + ["--backstop", "30", "--selftest-contention", "0.8"], stretched),
    ]
    threads = [threading.Thread(target=selftest_case, args=c + (results, lock)) for c in cases]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = 0
    for name, why, what in sorted(results):
        print("%s - watchdog %s (%s)%s" % ("not ok" if why else "ok", name, what, ": " + why if why else ""))
        failed += why is not None
    if len(results) != len(cases):
        print("not ok - watchdog: %d of %d cases reported" % (len(results), len(cases)))
        failed += 1
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--log")
    p.add_argument("--pidfile")
    p.add_argument("--backstop", type=float)
    p.add_argument("--slack", type=float)
    p.add_argument("--boot", type=float)
    p.add_argument("--ctl")
    p.add_argument("--verdict")
    p.add_argument("--selftest-contention", type=float, default=0.0)
    p.add_argument("--selftest", action="store_true")
    args = p.parse_args()
    if args.selftest:
        return selftest()
    if not args.pidfile or args.backstop is None:
        p.error("--pidfile and --backstop are required")
    Watchdog(args).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
