//! The chaos mode's extra operations: descriptors shared between threads
//! and forked processes, the module's own files opened.

use super::*;

/// Chaos-only operations: the module's own files (open, read, poll,
/// close), rmmod with whatever is open, a forked child working on
/// inherited descriptors, network namespaces: a device created in one
/// of its own (its queues then worked on from the initial namespace), a
/// device of the initial namespace moved into a namespace that dies at
/// once (its queues still open here), the namespace's last handle let go;
/// and XDP programs attached and detached (`xdp_step`).
pub fn chaos_step(w: &Mutex<World>, node: &str, rng: &mut Rng) -> (String, Result<i64, i32>, bool) {
    let op = rng.below(9);
    // A namespace costs its creation and its cleanup (a work item that
    // takes rtnl for each of its steps): a few per process.
    let op = if (5..=6).contains(&op) && {
        let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
        g.ns_ops += 1;
        g.ns_ops > NS_BUDGET
    } {
        3
    } else {
        op
    };
    match op {
        8 => xdp_step(w, rng),
        5 => {
            let (ns, name) = {
                let g = w.lock().unwrap_or_else(|e| e.into_inner());
                (g.ns.clone(), g.name(NS_DEV))
            };
            let ns = ns.filter(|_| rng.below(3) != 0);
            let fresh = ns.is_none();
            let nonblock = rng.below(3) != 0;
            let frame = crate::pkt::eth([0xff; 6], [2, 0, 0, 0, 0, 7], crate::pkt::ETH_P_ARP, &crate::pkt::arp(1, [2, 0, 0, 0, 0, 7], [10, 1, 1, 2], [0; 6], [10, 1, 1, 1]));
            let r = in_netns(ns.as_deref(), || -> Result<File, i32> {
                let file = File::options().read(true).write(true).custom_flags_nonblock(nonblock).open(node).map_err(|e| e.raw_os_error().unwrap_or(0))?;
                let mut ifr = IfReq::new(&name, DEVS[NS_DEV].flags());
                ioctl_ptr(file.as_raw_fd(), TUNSETIFF, &mut ifr)?;
                let _ = set_up(&name, true);
                let _ = fd_write(file.as_raw_fd(), &frame);
                Ok(file)
            });
            let desc = format!("netns: attach to {name} in {} namespace", if fresh { "a new" } else { "its" });
            match r {
                Err(e) => (format!("netns setup for {desc}"), Err(e), false),
                Ok((Err(e), _)) => (desc, Err(e), false),
                Ok((Ok(file), nsfile)) => {
                    let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
                    g.queues.push(Queue { file: Arc::new(file), dev: NS_DEV, detached: false });
                    g.ns = Some(Arc::new(nsfile));
                    (desc, Ok(0), false)
                }
            }
        }
        6 => {
            let dev = rng.below(HOME as u64) as usize;
            let name = w.lock().unwrap_or_else(|e| e.into_inner()).name(dev);
            let ns = match in_netns(None, || ()) {
                Ok(((), ns)) => ns,
                Err(e) => return (format!("netns setup for moving {name}"), Err(e), false),
            };
            let r = crate::nl::Nl::open(0)
                .map_err(|e| e.raw_os_error().unwrap_or(0))
                .and_then(|nl| nl.set_netns_fd(crate::nl::ifindex(&name), ns.as_raw_fd()));
            // The namespace's only reference goes: it dies, and the device
            // with it (tun's devices are deleted, not sent home), while the
            // queues here stay open.
            drop(ns);
            if r.is_ok() {
                let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
                g.configured[dev] = false;
                    g.filtered[dev] = false;
                g.up[dev] = false;
            }
            (format!("netns: move {name} into a namespace that dies"), r.map(|_| 0), false)
        }
        7 => {
            w.lock().unwrap_or_else(|e| e.into_inner()).ns = None;
            ("netns: let go of the namespace's handle".into(), Ok(0), false)
        }
        0 | 1 => {
            let paths = crate::stress::module_files(&["rt-f0", "rt-f1", "rt-f2", "rt-f3", "rt-f4", "rt-f5"]);
            let Some(p) = paths.get(rng.below(paths.len().max(1) as u64) as usize).filter(|p| !p.ends_with("/micro_bench")) else {
                return ("module file (none)".into(), Ok(0), false);
            };
            match File::open(p) {
                Ok(f) => {
                    let mut buf = vec![0u8; rng.below(4096) as usize];
                    let r = fd_read(f.as_raw_fd(), &mut buf).map(|n| n as i64);
                    let _ = poll_fd(f.as_raw_fd(), libc::POLLIN, Duration::from_millis(rng.below(5)));
                    let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
                    if g.mfiles.len() < 8 {
                        g.mfiles.push(f);
                    } else {
                        let i = rng.below(8) as usize;
                        g.mfiles.swap_remove(i);
                    }
                    // Sysfs attributes the device does not support answer
                    // ENODEV or EOPNOTSUPP; a removed debugfs file EIO; on
                    // 7.3 the core's attributes take rtnl interruptibly
                    // (net-sysfs.c's sysfs_rtnl_lock()), so a signal to a
                    // reader waiting for it gives EINTR (any driver).
                    let r = r.or_else(|e| {
                        if matches!(e, libc::EIO | libc::EINVAL | libc::ENOENT | libc::ENODEV | libc::EOPNOTSUPP | libc::EINTR) {
                            Ok(0)
                        } else {
                            Err(e)
                        }
                    });
                    (format!("read {p}"), r, false)
                }
                // The file went between listing and open: ENOENT; a sysfs
                // file of a device being unregistered, whose kernfs node is
                // deactivated but not yet unlinked: ENODEV (kernfs_fop_open's
                // failed kernfs_get_active(), any driver; seen on 6.12).
                Err(e) => (
                    format!("open {p}"),
                    if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENODEV | libc::EACCES | libc::ENXIO | libc::EPERM)) {
                        Ok(0)
                    } else {
                        Err(e.raw_os_error().unwrap_or(0))
                    },
                    false,
                ),
            }
        }
        2 => {
            let r = match crate::hardening::delete_module("rust_tun") {
                Ok(()) => crate::hardening::finit_module("rust_tun").map(|_| 1),
                Err(libc::EAGAIN | libc::EBUSY | libc::ENOENT) => Ok(0),
                Err(e) => Err(e),
            };
            ("rmmod rust_tun".into(), r, false)
        }
        _ => {
            // A child inherits every descriptor and works on them for a while.
            let fds: Vec<RawFd> = w.lock().unwrap_or_else(|e| e.into_inner()).queues.iter().map(|q| q.file.as_raw_fd()).collect();
            let seed = rng.next();
            // SAFETY: The child only makes raw syscalls on inherited fds and
            // leaves with `_exit`.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let mut r = Rng::new(seed);
                let mut buf = [0u8; 2048];
                for _ in 0..40 {
                    if let Some(&fd) = fds.get(r.below(fds.len().max(1) as u64) as usize) {
                        match r.below(3) {
                            0 => {
                                // Never blocking: no signal reaches the
                                // child, and its parent waits for it.
                                let iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
                                // SAFETY: One iovec into `buf`.
                                let _ = unsafe { libc::preadv2(fd, &iov, 1, -1, libc::RWF_NOWAIT) };
                            }
                            1 => {
                                let p = [0x45u8; 28];
                                let iov = libc::iovec { iov_base: p.as_ptr() as *mut _, iov_len: p.len() };
                                // SAFETY: One iovec into `p`.
                                let _ = unsafe { libc::pwritev2(fd, &iov, 1, -1, libc::RWF_NOWAIT) };
                            }
                            _ => {
                                let _ = poll_fd(fd, libc::POLLIN, Duration::from_millis(1));
                            }
                        }
                    }
                }
                // SAFETY: Leave without running the parent's destructors.
                unsafe { libc::_exit(0) };
            }
            let mut status = 0;
            if pid > 0 {
                // SAFETY: Our child.
                unsafe { libc::waitpid(pid, &mut status, 0) };
            }
            let ok = pid > 0 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
            ("fork a child working on the queues".into(), if ok { Ok(0) } else { Err(libc::ECHILD) }, false)
        }
    }
}

/// Extension for non-blocking opens.
pub trait NonblockOpen {
    fn custom_flags_nonblock(&mut self, on: bool) -> &mut Self;
}

impl NonblockOpen for std::fs::OpenOptions {
    fn custom_flags_nonblock(&mut self, on: bool) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(if on { libc::O_NONBLOCK } else { 0 })
    }
}

/// An XDP program attached to or detached from one of the devices by
/// rtnetlink (`IFLA_XDP`, what `ip link set DEV xdp...` sends): native,
/// generic or default mode; a program returning PASS, DROP, TX or
/// ABORTED, or redirecting to another of the devices; a detach; or a
/// descriptor that is no XDP program (a socket filter, the tun fd, -2).
/// Chaos only: a program changes where frames go, which the differential
/// run would see as divergences while rust_tun has no XDP. The errnos the
/// core and tun.c give (a TUN device refuses native mode: `EOPNOTSUPP`;
/// native over generic: `EEXIST`; no program: `EINVAL`, `EBADF`; the
/// device gone: `ENODEV`) are all plausible.
fn xdp_step(w: &Mutex<World>, rng: &mut Rng) -> (String, Result<i64, i32>, bool) {
    use crate::nl::{Nl, XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE};
    let dev = rng.below(HOME as u64) as usize;
    let other = rng.below(HOME as u64) as usize;
    let (name, target, tun_fd) = {
        let g = w.lock().unwrap_or_else(|e| e.into_inner());
        (g.name(dev), g.name(other), g.queues.first().map(|q| q.file.as_raw_fd()).unwrap_or(-2))
    };
    let (mode, mode_name) = [(XDP_FLAGS_DRV_MODE, "native"), (XDP_FLAGS_SKB_MODE, "generic"), (0, "default")][rng.below(3) as usize];
    let pick = rng.below(9);
    let (prog, what): (Result<Option<OwnedFd>, String>, String) = match pick {
        0..=3 => {
            let act = [2u32, 1, 3, 0][pick as usize];
            (crate::bpf::xdp(&crate::bpf::ret(act)).map(Some), format!("ret {act}"))
        }
        4 => (crate::bpf::xdp(&crate::bpf::redirect(crate::nl::ifindex(&target))).map(Some), format!("redirect to {target}")),
        5 | 6 => (Ok(None), "-1 (detach)".into()),
        7 => (crate::bpf::socket_filter(&crate::bpf::ret(0)).map(Some), "a socket filter".into()),
        _ => (Ok(None), "the tun fd or -2".into()),
    };
    let fd = match (&prog, pick) {
        (Ok(Some(p)), _) => p.as_raw_fd(),
        (Ok(None), 5 | 6) => -1,
        (Ok(None), _) => tun_fd,
        // Without bpf(2) (or as a user it refuses): nothing to attach.
        (Err(_), _) => return (format!("XDP {what} (not loaded)"), Ok(0), false),
    };
    let r = match Nl::open(0) {
        Ok(nl) => nl.set_xdp(crate::nl::ifindex(&name), fd, mode),
        Err(e) => Err(e.raw_os_error().unwrap_or(0)),
    };
    (format!("IFLA_XDP {what} {mode_name} on {name}"), r.map(|_| 0), false)
}
