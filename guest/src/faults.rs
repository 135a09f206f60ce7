//! Allocation failures on the paths only they reach: a device's teardown
//! with every allocation of the deleting task failing, and its creation and
//! its queues' attachment with each allocation failing in turn. Fault
//! injection (failslab, fail_page_alloc, `/proc/thread-self/fail-nth`) is
//! on the debug kernel only: elsewhere these tests skip.

use super::*;
use hardening::FAIL_PAGE_ALLOC;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;

const FAILSLAB: &str = "/sys/kernel/debug/failslab";

/// Skips the test on a kernel without failslab and fail_page_alloc.
fn need_fault_injection() -> TestResult {
    for dir in [FAILSLAB, FAIL_PAGE_ALLOC] {
        if !std::path::Path::new(dir).exists() {
            skip!("no {dir} in this kernel (CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC: the debug kernel)");
        }
    }
    Ok(())
}

/// Fault-injection attributes (debugfs) set for a test and put back as
/// they were when dropped, whatever the test's outcome.
#[derive(Default)]
struct FaultAttrs(Vec<(String, String)>);

impl FaultAttrs {
    /// Sets `attrs` of `dir` in order (the arming one, `probability`,
    /// last); they are put back in the reverse order.
    fn set(&mut self, dir: &str, attrs: &[(&str, &str)]) -> TestResult {
        for (k, v) in attrs {
            let path = format!("{dir}/{k}");
            let old = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
            self.0.push((path.clone(), old.trim().to_string()));
            write_file(&path, v)?;
        }
        Ok(())
    }

    /// Every slab and page allocation (of any order, sleeping or not) of a
    /// task whose `make-it-fail` is 1 fails; no other task's does.
    fn fail_tasks() -> Result<Self, String> {
        let common = [
            ("verbose", "0"),
            ("task-filter", "Y"),
            ("interval", "1"),
            ("times", "-1"),
            ("space", "0"),
            ("ignore-gfp-wait", "N"),
        ];
        let mut a = FaultAttrs::default();
        a.set(FAILSLAB, &common)?;
        a.set(FAILSLAB, &[("cache-filter", "N"), ("probability", "100")])?;
        a.set(FAIL_PAGE_ALLOC, &common)?;
        a.set(FAIL_PAGE_ALLOC, &[("ignore-gfp-highmem", "N"), ("min-order", "0"), ("probability", "100")])?;
        Ok(a)
    }

    /// Only `fail-nth` injects, into every slab allocation and every page
    /// allocation but user memory's (the test's own page faults).
    fn fail_nth() -> Result<Self, String> {
        let common = [("verbose", "0"), ("task-filter", "N"), ("space", "0"), ("ignore-gfp-wait", "N"), ("probability", "0")];
        let mut a = FaultAttrs::default();
        a.set(FAILSLAB, &[("cache-filter", "N")])?;
        a.set(FAILSLAB, &common)?;
        a.set(FAIL_PAGE_ALLOC, &[("ignore-gfp-highmem", "Y"), ("min-order", "0")])?;
        a.set(FAIL_PAGE_ALLOC, &common)?;
        Ok(a)
    }
}

impl Drop for FaultAttrs {
    fn drop(&mut self) {
        for (path, old) in self.0.iter().rev() {
            let _ = std::fs::write(path, old);
        }
    }
}

/// A thread's state letter and wait channel (/proc/self/task/TID).
fn task_state(tid: i32) -> (String, String) {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap_or_default();
    let state = stat.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().next()).unwrap_or("?").to_string();
    let wchan = std::fs::read_to_string(format!("/proc/self/task/{tid}/wchan")).unwrap_or_default();
    (state, wchan)
}

/// Waits until thread `tid` sleeps uninterruptibly (state `D`: a mutex).
fn wait_uninterruptible(tid: i32) -> TestResult {
    let t0 = Instant::now();
    loop {
        let (state, wchan) = task_state(tid);
        if state == "D" {
            return Ok(());
        }
        check!(t0.elapsed() < Duration::from_secs(10), "thread {tid} never waited for rtnl (state {state}, wchan {wchan})");
        thread::sleep(Duration::from_millis(5));
    }
}

/// `struct ifconf`.
#[repr(C)]
struct IfConf {
    len: i32,
    buf: usize,
}

/// rtnl, held by another thread of this process until [`RtnlHeld::release`]
/// (or drop): `SIOCGIFCONF` copies the addresses out under rtnl, into a
/// page whose first touch sleeps (userfaultfd) until released.
struct RtnlHeld {
    page: vnet::napi::SlowPage,
    holder: Option<thread::JoinHandle<Result<i32, i32>>>,
}

impl RtnlHeld {
    /// Needs a device with an IPv4 address (the copy is of those).
    fn take() -> Result<Self, String> {
        let page = vnet::napi::SlowPage::new()?;
        let buf = page.addr() as usize;
        let holder = thread::spawn(move || {
            // SAFETY: Plain socket call.
            let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
            let mut ifc = IfConf { len: vnet::napi::PAGE as i32, buf };
            let r = ioctl_ptr(s, libc::SIOCGIFCONF as u64, &mut ifc);
            // SAFETY: Our socket.
            unsafe { libc::close(s) };
            r
        });
        let held = RtnlHeld { page, holder: Some(holder) };
        held.page.wait_fault(Duration::from_secs(10))?;
        Ok(held)
    }

    /// Lets the holder finish its copy and drop rtnl.
    fn release(&mut self) -> TestResult {
        let Some(h) = self.holder.take() else { return Ok(()) };
        self.page.release(&[])?;
        let r = h.join().map_err(|_| "the rtnl holder panicked".to_string())?;
        r.map_err(|e| format!("SIOCGIFCONF: errno {e} ({})", errname(e)))?;
        Ok(())
    }
}

impl Drop for RtnlHeld {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

/// A memfd of `pages` pages of data, sealable.
fn memfd_pages(pages: usize) -> Result<OwnedFd, String> {
    // SAFETY: A valid name and flags.
    let fd = unsafe { libc::memfd_create(c"rtun-faults".as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    check!(fd >= 0, "memfd_create: errno {}", errno());
    // SAFETY: A new fd of ours.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let data = vec![0x5au8; pages * vnet::napi::PAGE];
    check!(fd_write(fd.as_raw_fd(), &data) == Ok(data.len()), "memfd write: errno {}", errno());
    Ok(fd)
}

/// `F_ADD_SEALS` `F_SEAL_WRITE`: fails with `EBUSY` (after about 150 ms of
/// retries) while anything but the page cache holds one of its pages.
fn seal_write(fd: &OwnedFd) -> Result<(), i32> {
    // SAFETY: fcntl with an int argument.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, libc::F_SEAL_WRITE) };
    if r < 0 { Err(errno()) } else { Ok(()) }
}

/// Flows into the multi-queue device, datagrams per flow.
const FLOWS: u16 = 16;
const PER_FLOW: usize = 4;

/// A persistent multi-queue TAP with packets queued in its rings and no
/// reader is deleted (RTM_DELLINK) with every slab and page allocation of
/// the deleting task failing. The device goes, and its rings are purged at
/// once, while their files are still open (tun.c: `tun_detach_all()`).
///
/// The packets are UDP datagrams sent with `sendfile()` from a memfd to the
/// device's subnet broadcast address: each holds a page of the memfd (the
/// spliced frags; tun keeps frags that are not zerocopy), so the memfd
/// cannot take a write seal while one of them is queued. The sender's
/// socket says nothing: both drivers orphan what they queue.
///
/// The deleting thread's own request must be allocated first: another
/// thread holds rtnl (`SIOCGIFCONF` asleep on a userfaultfd page) while it
/// sends the request and waits for rtnl; only then are its allocations
/// made to fail, and rtnl is let go.
pub fn t_teardown_purges(n: Node) -> TestResult {
    need_fault_injection()?;
    let name = "rt-fault0";
    let qs = mq_open(n.path, name, IFF_TAP | IFF_NO_PI, 3)?;
    ioctl_val(qs[0].fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: errno {e}"))?;
    sh(&format!("ip addr add 10.77.0.1/24 broadcast 10.77.0.255 dev {name} && ip link set {name} up"))?;
    let pages = FLOWS as usize * PER_FLOW;
    let memfd = memfd_pages(pages)?;
    let mut socks = Vec::new();
    for f in 0..FLOWS {
        let s = std::net::UdpSocket::bind(("10.77.0.1", 40000 + f)).map_err(|e| format!("bind: {e}"))?;
        s.set_broadcast(true).map_err(|e| format!("SO_BROADCAST: {e}"))?;
        s.connect("10.77.0.255:9").map_err(|e| format!("connect: {e}"))?;
        for k in 0..PER_FLOW {
            let mut off = ((f as usize * PER_FLOW + k) * vnet::napi::PAGE) as libc::off_t;
            // SAFETY: Valid fds and offset.
            let r = unsafe { libc::sendfile(s.as_raw_fd(), memfd.as_raw_fd(), &mut off, 1000) };
            check!(r == 1000, "sendfile of flow {f}: {r} (errno {})", errno());
        }
        socks.push(s);
    }
    drop(socks);
    check!(
        seal_write(&memfd) == Err(libc::EBUSY),
        "the queued packets do not hold the memfd's pages (write seal taken): the test cannot see a purge"
    );

    let ifindex = nl::ifindex(name);
    let del = nl::Nl::open(0).map_err(|e| format!("netlink: {e}"))?;
    let attrs = FaultAttrs::fail_tasks()?;
    let mut rtnl = RtnlHeld::take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    let deleter = thread::spawn(move || {
        let mif = OpenOptions::new().write(true).open("/proc/thread-self/make-it-fail");
        let _ = tx.send(gettid());
        let mut mif = mif.map_err(|e| format!("make-it-fail: {e}"))?;
        // The first write and the send take the paths the later ones take.
        mif.write_all(b"0").map_err(|e| format!("make-it-fail: {e}"))?;
        let r = del.del_link_request(ifindex);
        // No allocation in here: the file is open, the buffer on the stack.
        let _ = mif.write(b"0");
        Ok::<_, String>((del, r))
    });
    let tid = rx.recv_timeout(Duration::from_secs(10)).map_err(|e| format!("deleting thread: {e}"))?;
    let mif = format!("/proc/self/task/{tid}/make-it-fail");
    let armed = wait_uninterruptible(tid).and_then(|_| write_file(&mif, "1"));
    let released = rtnl.release();
    let joined = deleter.join().map_err(|_| "the deleting thread panicked".to_string());
    let _ = std::fs::write(&mif, "0");
    drop(attrs);
    armed?;
    released?;
    let (del, sent) = joined??;
    sent.map_err(|e| format!("RTM_DELLINK send: errno {e} ({})", errname(e)))?;
    // The answer could not be allocated (ENOBUFS) or says 0.
    let answer = del.answer();
    check!(matches!(answer, Ok(()) | Err(libc::ENOBUFS)), "RTM_DELLINK answer: {answer:?}");
    check!(!link_exists(name), "{name} still exists after RTM_DELLINK with allocations failing");

    let purged = seal_write(&memfd);
    drop(qs);
    let after_close = if purged.is_ok() { Ok(()) } else { seal_write(&memfd) };
    check!(
        purged.is_ok(),
        "the deleted device's rings still hold their packets while the files are open (write seal: errno {:?}; after the files closed: {})",
        purged.err().map(errname),
        if after_close.is_ok() { "purged" } else { "still held" }
    );
    Ok(())
}

/// `/proc/thread-self/fail-nth` of the calling thread: arm it before one
/// system call, then ask whether the fault was injected in it.
struct FailNth(File);

impl FailNth {
    fn open() -> Result<Self, String> {
        let f = OpenOptions::new().read(true).write(true).open("/proc/thread-self/fail-nth");
        Ok(FailNth(f.map_err(|e| format!("/proc/thread-self/fail-nth: {e}"))?))
    }

    /// The `n`th fault-injection site this thread reaches from now on fails.
    fn arm(&self, n: u32) -> TestResult {
        self.0.write_at(n.to_string().as_bytes(), 0).map_err(|e| format!("fail-nth: {e}"))?;
        Ok(())
    }

    /// Whether the armed fault was injected; disarms it.
    fn fired(&self) -> Result<bool, String> {
        let mut b = [0u8; 16];
        let k = self.0.read_at(&mut b, 0).map_err(|e| format!("fail-nth: {e}"))?;
        let left: u32 = std::str::from_utf8(&b[..k]).unwrap_or("").trim().parse().map_err(|_| "fail-nth: unreadable")?;
        self.0.write_at(b"0", 0).map_err(|e| format!("fail-nth: {e}"))?;
        Ok(left == 0)
    }
}

impl Drop for FailNth {
    fn drop(&mut self) {
        let _ = self.0.write_at(b"0", 0);
    }
}

/// `TUNSETIFF` of a device `name` with `flags` on `f`.
fn setiff(f: &File, name: &str, flags: u16) -> Result<(), i32> {
    let mut ifr = IfReq::new(name, flags);
    ioctl_ptr(f.as_raw_fd(), TUNSETIFF, &mut ifr).map(|_| ())
}

/// [`setiff`] on the file a sweep's closures share (`EBADF` if it is
/// gone); the file stays in the cell.
fn setiff_in(file: &std::cell::Cell<Option<File>>, name: &str, flags: u16) -> Result<(), i32> {
    let f = file.take().ok_or(libc::EBADF)?;
    let r = setiff(&f, name, flags);
    file.set(Some(f));
    r
}

/// Opens the node (before a fault is armed: only the ioctl is swept).
fn open_node(node: &str) -> Result<File, String> {
    Tun::open_node(node).map_err(|e| format!("open {node}: {e}"))
}

/// The device's attached queues (`IFLA_TUN_NUM_QUEUES`), what the driver
/// counts. Not sysfs's `tx-N`: `netif_set_real_num_tx_queues()` can fail
/// to add a queue's kobject, which both drivers ignore (tun.c's
/// `tun_set_real_num_queues()` does), so under fault injection sysfs may
/// show fewer queues than are attached.
fn queues(name: &str) -> u32 {
    let Ok(nl) = nl::Nl::open(0) else { return u32::MAX };
    nl.tun_info(nl::ifindex(name)).ok().and_then(|t| t.num_queues).unwrap_or(u32::MAX)
}

/// The errnos an allocation failure may give back: `ENOMEM`; `ENOBUFS`
/// (addrconf's `NETDEV_REGISTER` veto when its sysctl table cannot be
/// registered); `EINVAL` (the core's `netdev_register_kobject()` ignores a
/// failed `dev_set_name()`, and `device_add()` then refuses the nameless
/// device: both drivers, seen on the debug kernel).
fn plausible(e: i32) -> bool {
    [libc::ENOMEM, libc::ENOBUFS, libc::EINVAL].contains(&e)
}

/// How many allocations the sweeps fail at most before calling it a hang.
const MAX_NTH: u32 = 3000;

/// Runs `op` (one system call: the file it works on is opened before) with
/// its `n`th allocation failing, for n = 1, 2, ... until it completes
/// without reaching the fault; `after_fault(n, result)` checks
/// what a fault left. Returns the allocations `op` makes (the last n - 1).
fn sweep(
    what: &str,
    mut op: impl FnMut() -> Result<(), i32>,
    mut after_fault: impl FnMut(u32, Result<(), i32>) -> TestResult,
) -> Result<u32, String> {
    let nth = FailNth::open()?;
    for k in 1..=MAX_NTH {
        nth.arm(k)?;
        let r = op();
        if !nth.fired()? {
            r.map_err(|e| format!("{what} without a fault: errno {e} ({})", errname(e)))?;
            return Ok(k - 1);
        }
        after_fault(k, r).map_err(|e| format!("{what}, allocation {k} failing: {e}"))?;
    }
    Err(format!("{what}: still reaching faults after {MAX_NTH} allocations"))
}

/// Prints a sweep's failures by errno, one line.
fn report(what: &str, allocs: u32, fails: &[(u32, i32)], notes: &[String]) {
    let mut by: Vec<(i32, Vec<u32>)> = Vec::new();
    for &(k, e) in fails {
        match by.iter_mut().find(|(x, _)| *x == e) {
            Some((_, v)) => v.push(k),
            None => by.push((e, vec![k])),
        }
    }
    let by: Vec<String> = by.iter().map(|(e, v)| format!("{} at {v:?}", errname(*e))).collect();
    println!("# {what}: {allocs} allocations; {} failed the call ({}); {} tolerated", fails.len(), by.join(", "), allocs as usize - fails.len());
    for n in notes {
        println!("# {what}: {n}");
    }
}

/// Device creation (`TUNSETIFF` of a new TAP) with each of its allocations
/// failing in turn (`fail-nth`). A failed creation gives `ENOMEM` (or
/// another errno of [`plausible`]), leaves no device behind, and leaves the file usable: the
/// same `TUNSETIFF` without a fault succeeds. One of the allocations is
/// addrconf's (`ipv6_add_dev()`, a `NETDEV_REGISTER` notifier), whose
/// failure vetoes a registration after the device was listed: the
/// unregistration that follows announces it (`RTM_DELLINK`); those are
/// reported.
pub fn t_create_sweep(n: Node) -> TestResult {
    need_fault_injection()?;
    let name = "rt-fnth0";
    let mon = nl::Nl::open(nl::RTMGRP_LINK).map_err(|e| format!("netlink: {e}"))?;
    mon.set_timeout_ms(1);
    let _attrs = FaultAttrs::fail_nth()?;
    let mut fails = Vec::new();
    let mut notes = Vec::new();
    let file = std::cell::Cell::new(Some(open_node(n.path)?));
    let allocs = sweep(
        "TUNSETIFF (new device)",
        || setiff_in(&file, name, IFF_TAP | IFF_NO_PI),
        |k, r| {
            let f = file.take().ok_or("no file")?;
            let events = mon.link_events(name);
            match r {
                Ok(()) => check!(link_exists(name), "TUNSETIFF succeeded, no {name}"),
                Err(e) => {
                    fails.push((k, e));
                    check!(plausible(e), "errno {e} ({})", errname(e));
                    check!(!link_exists(name), "failed with {} and left {name} behind", errname(e));
                    if events.contains(&false) {
                        notes.push(format!(
                            "allocation {k}: {} after the device was listed (RTM_DELLINK{})",
                            errname(e),
                            if events.contains(&true) { ", RTM_NEWLINK" } else { " only" }
                        ));
                    }
                    setiff(&f, name, IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF again on the file: errno {e}"))?;
                }
            }
            drop(f);
            check!(vnet::napi::wait_gone(&format!("/sys/class/net/{name}"), Duration::from_secs(10)), "{name} outlived its file");
            let _ = mon.link_events(name);
            file.set(Some(open_node(n.path)?));
            Ok(())
        },
    )?;
    drop(file.take());
    report("TUNSETIFF (new device)", allocs, &fails, &notes);
    Ok(())
}

/// Attaching a queue with each of its allocations failing in turn: a
/// second file's `TUNSETIFF` onto a multi-queue device, `TUNSETQUEUE`
/// re-attaching a detached queue, and `TUNSETIFF` onto a persistent
/// device. A failed attach gives an errno of [`plausible`], leaves the
/// device and its other queues as they were, and the file can attach
/// afterwards.
pub fn t_attach_sweep(n: Node) -> TestResult {
    need_fault_injection()?;
    let _attrs = FaultAttrs::fail_nth()?;
    let flags = IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE;

    // A second queue by TUNSETIFF.
    let name = "rt-fatt0";
    let q0 = Tun::create(n.path, name, flags).map_err(|e| format!("TUNSETIFF: errno {e}"))?;
    let mut fails = Vec::new();
    let file = std::cell::Cell::new(Some(open_node(n.path)?));
    let allocs = sweep(
        "TUNSETIFF (second queue)",
        || setiff_in(&file, name, flags),
        |k, r| {
            let f = file.take().ok_or("no file")?;
            if let Err(e) = r {
                fails.push((k, e));
                check!(plausible(e), "errno {e} ({})", errname(e));
                check!(link_exists(name) && queues(name) == 1, "{} queues after the failure", queues(name));
                setiff(&f, name, flags).map_err(|e| format!("TUNSETIFF again: errno {e}"))?;
            }
            check!(queues(name) == 2, "{} queues attached, expected 2", queues(name));
            drop(f);
            check!(queues(name) == 1, "{} queues after the second closed", queues(name));
            file.set(Some(open_node(n.path)?));
            Ok(())
        },
    )?;
    drop(file.take());
    report("TUNSETIFF (second queue)", allocs, &fails, &[]);

    // Re-attaching a detached queue by TUNSETQUEUE.
    let q1 = Tun::create(n.path, name, flags).map_err(|e| format!("TUNSETIFF: errno {e}"))?;
    setqueue(&q1, IFF_DETACH_QUEUE).map_err(|e| format!("detach: errno {e}"))?;
    let mut fails = Vec::new();
    let allocs = sweep(
        "TUNSETQUEUE (attach)",
        || setqueue(&q1, IFF_ATTACH_QUEUE).map(|_| ()),
        |k, r| {
            if let Err(e) = r {
                fails.push((k, e));
                check!(plausible(e), "errno {e} ({})", errname(e));
                check!(queues(name) == 1, "{} queues after the failure", queues(name));
                setqueue(&q1, IFF_ATTACH_QUEUE).map_err(|e| format!("attach again: errno {e}"))?;
            }
            check!(queues(name) == 2, "{} queues attached, expected 2", queues(name));
            setqueue(&q1, IFF_DETACH_QUEUE).map_err(|e| format!("detach: errno {e}"))?;
            Ok(())
        },
    )?;
    report("TUNSETQUEUE (attach)", allocs, &fails, &[]);
    drop(q1);
    drop(q0);
    check!(vnet::napi::wait_gone(&format!("/sys/class/net/{name}"), Duration::from_secs(10)), "{name} outlived its files");

    // A file onto a persistent device by TUNSETIFF.
    let name = "rt-fper0";
    let t = Tun::create(n.path, name, IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: errno {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: errno {e}"))?;
    drop(t);
    let mut fails = Vec::new();
    let file = std::cell::Cell::new(Some(open_node(n.path)?));
    let res = sweep(
        "TUNSETIFF (persistent device)",
        || setiff_in(&file, name, IFF_TAP | IFF_NO_PI),
        |k, r| {
            let f = file.take().ok_or("no file")?;
            if let Err(e) = r {
                fails.push((k, e));
                check!(plausible(e), "errno {e} ({})", errname(e));
                check!(link_exists(name), "the persistent {name} went with the failure");
                setiff(&f, name, IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF again: errno {e}"))?;
            }
            drop(f);
            check!(link_exists(name), "the persistent {name} went with its file");
            file.set(Some(open_node(n.path)?));
            Ok(())
        },
    );
    drop(file.take());
    if let Ok(allocs) = res {
        report("TUNSETIFF (persistent device)", allocs, &fails, &[]);
    }
    sh(&format!("ip link del {name}"))?;
    res.map(|_| ())
}

/// The test module whose notifier vetoes devices named `rtunveto*`
/// (testmod/rtun_veto.c), loaded for a test and unloaded when dropped.
struct VetoModule;

impl VetoModule {
    const NAME: &str = "rtun_veto";

    fn load() -> Result<Self, String> {
        if !std::path::Path::new(&format!("{MODDIR}/{}.ko", Self::NAME)).exists() {
            skip!("no {}.ko for this kernel (`make testmod`; not built for Debian's)", Self::NAME);
        }
        load(Self::NAME)?;
        Ok(VetoModule)
    }

    /// One of its counters: `vetoes`, `holds`, `rebroadcasts`.
    fn count(&self, what: &str) -> Result<u32, String> {
        let path = format!("/sys/module/{}/parameters/{what}", Self::NAME);
        let s = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        s.trim().parse().map_err(|_| format!("{path}: {s:?}"))
    }
}

impl Drop for VetoModule {
    fn drop(&mut self) {
        let _ = unload(Self::NAME);
    }
}

/// Another subsystem's `NETDEV_REGISTER` notifier vetoes the device
/// (`-EPERM`) after `register_netdevice()` listed it, and keeps a
/// reference to it for 1.5 s from the `NETDEV_UNREGISTER` that follows
/// (the test module rtun_veto.ko): `netdev_run_todo()` waits for it and
/// broadcasts `NETDEV_UNREGISTER` again meanwhile, to the driver's
/// notifier too, about a device whose creation failed (finding 5: the
/// driver must not have dropped what that notifier reaches). `TUNSETIFF`
/// gives `EPERM`, leaves no device, the file stays usable, and the kernel
/// logs nothing (the runner's splat check; KASAN on the debug kernel).
pub fn t_veto_lingering_ref(n: Node) -> TestResult {
    let m = VetoModule::load()?;
    let name = "rtunveto0";
    let (vetoes, holds, rebroadcasts) = (m.count("vetoes")?, m.count("holds")?, m.count("rebroadcasts")?);
    let f = Tun::open_node(n.path).map_err(|e| format!("open: {e}"))?;
    let t0 = Instant::now();
    let mut ifr = IfReq::new(name, IFF_TAP | IFF_NO_PI);
    let r = ioctl_ptr(f.as_raw_fd(), TUNSETIFF, &mut ifr);
    let took = t0.elapsed();
    expect_errno!(r, libc::EPERM, "TUNSETIFF of a vetoed device");
    check!(!link_exists(name), "{name} exists after its registration was vetoed");
    check!(m.count("vetoes")? == vetoes + 1, "the module vetoed {} registrations, expected 1", m.count("vetoes")? - vetoes);
    check!(m.count("holds")? == holds + 1, "the module took {} references, expected 1", m.count("holds")? - holds);
    let again = m.count("rebroadcasts")? - rebroadcasts;
    check!(again >= 1, "no NETDEV_UNREGISTER rebroadcast while the reference was held (TUNSETIFF took {took:?})");
    println!("# EPERM after {:.2} s, NETDEV_UNREGISTER broadcast again {again} times", took.as_secs_f64());

    // The file attaches afterwards, to a device of another name.
    let mut ifr = IfReq::new("rt-veto1", IFF_TAP | IFF_NO_PI);
    ioctl_ptr(f.as_raw_fd(), TUNSETIFF, &mut ifr).map_err(|e| format!("TUNSETIFF after the veto: errno {e} ({})", errname(e)))?;
    check!(link_exists("rt-veto1"), "no rt-veto1 after TUNSETIFF");
    drop(f);
    check!(vnet::napi::wait_gone("/sys/class/net/rt-veto1", Duration::from_secs(10)), "rt-veto1 outlived its file");
    drop(m);
    check!(!module_loaded(VetoModule::NAME), "rmmod {} failed", VetoModule::NAME);
    Ok(())
}
