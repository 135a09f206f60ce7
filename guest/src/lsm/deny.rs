//! An LSM that refuses (issue 40): with a policy that denies a tun hook,
//! rust_tun must fail the operation with the policy's errno, as the C tun
//! does, and leave no trace of it: no device, no half-attached file, no
//! changed flags or queues, no rtnetlink announcement, the file's
//! `TUNGETIFF` as before; and the file must work once the policy is gone.
//! The policy is a BPF LSM program (`bpf.rs`) returning `-EACCES`, an
//! errno neither driver makes up on its own in these paths (their own
//! refusals are `EPERM`, `EINVAL`, `EBUSY`). It needs a kernel with the BPF LSM active: Debian's, whose
//! `CONFIG_LSM` lists `bpf` (active with no boot parameter, beside
//! AppArmor); the test kernels build none and skip.
//!
//! One test per operation, each refused by every hook tun.c calls on its
//! way: creation (`tun_dev_create`, then in `ndo_init`
//! `tun_dev_alloc_security` and `tun_dev_attach`), `TUNSETIFF` on an
//! existing device (`tun_dev_open`, `tun_dev_attach`), `TUNSETQUEUE
//! IFF_ATTACH_QUEUE` (`tun_dev_attach_queue`, `tun_dev_attach`).

use super::bpf::{self, Refusal, VmlinuxBtf};
use super::*;
use crate::nl::{Nl, TunInfo, RTMGRP_LINK};

/// The policy's errno.
const ERRNO: i32 = libc::EACCES;

/// The kernel's BTF, if BPF LSM programs can refuse each of `hooks` here.
/// Skips where they cannot, but on Debian's kernel, which activates the
/// BPF LSM itself: there it fails, rather than skip unseen.
fn policy_possible(hooks: &[&str]) -> Result<VmlinuxBtf, String> {
    let btf = if std::path::Path::new(bpf::VMLINUX_BTF).exists() { Some(VmlinuxBtf::read()?) } else { None };
    for hook in hooks {
        if let Some(why) = bpf::unavailable(btf.as_ref(), hook)? {
            check!(kernel_flavor()? != "debian", "{why}, on Debian's kernel, whose CONFIG_LSM lists bpf");
            skip!("{why}");
        }
    }
    btf.ok_or_else(|| "no BTF".to_string())
}

/// What a refused operation by file `fd` on device `name` must leave as
/// it was.
#[derive(Debug, PartialEq)]
struct Snapshot {
    /// Every network device, by name (/sys/class/net).
    links: Vec<String>,
    /// The device as rtnetlink reports it, with its ifindex and sysfs
    /// `tun_flags`; `None` if rtnetlink has no such device.
    dev: Option<(i32, String, TunInfo)>,
    /// The file's `TUNGETIFF`: (name, flags), or the errno (`EBADFD`:
    /// attached to nothing; a detached queue still answers).
    file: Result<(String, u16), i32>,
}

fn snapshot(name: &str, fd: RawFd) -> Result<Snapshot, String> {
    let mut links: Vec<String> = std::fs::read_dir("/sys/class/net")
        .map_err(|e| format!("/sys/class/net: {e}"))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    links.sort();
    let nl = Nl::open(0).map_err(|e| format!("netlink: {e}"))?;
    let dev = match nl.link_by_name(name) {
        Ok(l) => Some((crate::nl::ifindex(name), sysfs(name, "tun_flags"), l.tun)),
        Err(e) if e.raw_os_error() == Some(libc::ENODEV) => None,
        Err(e) => return Err(format!("RTM_GETLINK {name}: {e}")),
    };
    check!(dev.is_some() == link_exists(name), "rtnetlink and /sys/class/net disagree on whether {name} exists");
    let mut ifr = IfReq::new("", 0);
    let file = ioctl_ptr(fd, TUNGETIFF, &mut ifr).map(|_| (ifr.name(), ifr.flags));
    Ok(Snapshot { links, dev, file })
}

/// Runs `op` of file `fd` while a BPF LSM program makes `hook` refuse:
/// `op` must fail with [`ERRNO`], and leave device `name`, the device
/// list and the file as they were, with no RTM_NEWLINK about `name`.
fn refused(
    btf: &VmlinuxBtf,
    hook: &str,
    (name, fd): (&str, RawFd),
    what: &str,
    op: impl FnOnce() -> Result<i32, i32>,
) -> TestResult {
    let before = snapshot(name, fd)?;
    let events = Nl::open(RTMGRP_LINK).map_err(|e| format!("netlink: {e}"))?;
    {
        let _policy = Refusal::attach(btf, hook, ERRNO)?;
        fails(op(), ERRNO, &format!("{what}, {hook} refusing"))?;
    }
    events.set_timeout_ms(300);
    let announced = events.count_newlink(name);
    check!(announced == 0, "{what}, refused by {hook}: {announced} RTM_NEWLINK about {name}");
    let after = snapshot(name, fd)?;
    check!(before == after, "{what}, refused by {hook}, changed things:\nbefore {before:?}\nafter  {after:?}");
    Ok(())
}

fn tunsetiff(f: &std::fs::File, name: &str, flags: u16) -> Result<i32, i32> {
    let mut ifr = IfReq::new(name, flags);
    ioctl_ptr(f.as_raw_fd(), TUNSETIFF, &mut ifr)
}

/// Creating a device, refused by each hook on the way (before anything
/// is allocated; in `ndo_init`, which `register_netdevice()` unwinds): no
/// device, the file still unattached, and the same file creates the
/// device once the policy is gone.
pub fn t_lsm_deny_create(n: Node) -> TestResult {
    let hooks = ["tun_dev_create", "tun_dev_alloc_security", "tun_dev_attach"];
    let btf = policy_possible(&hooks)?;
    let name = "rt-lsmc0";
    for hook in hooks {
        for flags in [IFF_TUN, IFF_TAP | IFF_MULTI_QUEUE] {
            let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
            let what = format!("TUNSETIFF creating {name} (flags {flags:#x})");
            refused(&btf, hook, (name, f.as_raw_fd()), &what, || tunsetiff(&f, name, flags))?;
            tunsetiff(&f, name, flags).map_err(|e| format!("{what} once {hook} allows: errno {e} ({})", errname(e)))?;
            check!(link_exists(name), "{name} missing after a TUNSETIFF that succeeded");
            drop(f);
            check!(!link_exists(name), "{name} outlived its only file");
        }
    }
    Ok(())
}

/// `TUNSETIFF` on an existing, persistent device, refused: the device
/// stays as it was (no queue attached, its flags unchanged although the
/// request asked for others), the file unattached; allowed, it attaches.
pub fn t_lsm_deny_open(n: Node) -> TestResult {
    let hooks = ["tun_dev_open", "tun_dev_attach"];
    let btf = policy_possible(&hooks)?;
    let name = "rt-lsmo0";
    let nl = Nl::open(0).map_err(|e| format!("netlink: {e}"))?;
    for hook in hooks {
        let t = Tun::create(n.path, name, IFF_TAP | IFF_NO_PI).map_err(|e| format!("creating {name}: errno {e}"))?;
        ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: errno {e}"))?;
        drop(t);
        let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
        let what = format!("TUNSETIFF on the persistent {name}");
        refused(&btf, hook, (name, f.as_raw_fd()), &what, || tunsetiff(&f, name, IFF_TAP | IFF_VNET_HDR))?;
        // Had the refused TUNSETIFF left the file attached (EINVAL) or a
        // queue taken (single queue: EBUSY), this one would fail.
        tunsetiff(&f, name, IFF_TAP | IFF_VNET_HDR)
            .map_err(|e| format!("{what} once {hook} allows: errno {e} ({})", errname(e)))?;
        let info = nl.link_by_name(name).map_err(|e| format!("RTM_GETLINK {name}: {e}"))?.tun;
        check!(
            info.vnet_hdr == Some(1) && info.pi == Some(1),
            "{name} after the allowed TUNSETIFF: {info:?} (want the flags it asked for: vnet_hdr, pi)"
        );
        ioctl_val(f.as_raw_fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST 0: errno {e}"))?;
        drop(f);
        check!(!link_exists(name), "{name} outlived its only file once not persistent");
    }
    Ok(())
}

/// `TUNSETQUEUE IFF_ATTACH_QUEUE` of a detached queue, refused: the
/// queue stays detached (one queue attached, one disabled; its file's
/// `TUNGETIFF` still names the device); allowed, it attaches.
pub fn t_lsm_deny_attach_queue(n: Node) -> TestResult {
    let hooks = ["tun_dev_attach_queue", "tun_dev_attach"];
    let btf = policy_possible(&hooks)?;
    let name = "rt-lsmq0";
    let nl = Nl::open(0).map_err(|e| format!("netlink: {e}"))?;
    let queues = |want: (u32, u32)| -> TestResult {
        let info = nl.link_by_name(name).map_err(|e| format!("RTM_GETLINK {name}: {e}"))?.tun;
        let have = (info.num_queues.unwrap_or(u32::MAX), info.num_disabled_queues.unwrap_or(u32::MAX));
        check!(have == want, "{name}: (queues, disabled queues) {have:?}, expected {want:?}");
        Ok(())
    };
    for hook in hooks {
        let q = mq_open(n.path, name, IFF_TAP | IFF_NO_PI, 2)?;
        setqueue(&q[1], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE IFF_DETACH_QUEUE: errno {e}"))?;
        queues((1, 1))?;
        let what = format!("TUNSETQUEUE IFF_ATTACH_QUEUE on {name}'s detached queue");
        refused(&btf, hook, (name, q[1].fd()), &what, || setqueue(&q[1], IFF_ATTACH_QUEUE))?;
        setqueue(&q[1], IFF_ATTACH_QUEUE)
            .map_err(|e| format!("{what} once {hook} allows: errno {e} ({})", errname(e)))?;
        queues((2, 0))?;
        drop(q);
        check!(!link_exists(name), "{name} outlived its queues");
    }
    Ok(())
}
