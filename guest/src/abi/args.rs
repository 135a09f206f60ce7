//! Directed argument classes of every ioctl `__tun_chr_ioctl()` handles,
//! one table: each ioctl before `TUNSETIFF` (`EBADFD`, except those tun.c
//! serves without a device or whose `ifreq` it copies first: `EFAULT`), a
//! bad pointer, each out-of-range value, the edges (0, the largest, one
//! more, `INT_MAX`, `INT_MIN`, -1, bits above 32 of an `unsigned long`
//! argument), the TAP-only ones on a TUN device, unknown numbers; after
//! each call the state it may change (sysfs, the matching GET ioctl,
//! ethtool). tun.c 7.3 and 6.12 (`drivers/net/tun.c`, `tun_vnet.h`) are
//! the reference: the C run checks the table itself, the rust_tun run the
//! driver against it (with its one documented difference: no eBPF
//! programs). Every row is run and every mismatch reported.
//! What the fuzzers (fuzz/) reach at random, this reaches on purpose.

use super::*;

/// What a row expects of the ioctl.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    /// Success, whatever it returns.
    Any,
    /// Success returning this.
    Ret(i32),
    /// This errno.
    E(i32),
}

type Call<'a> = Box<dyn Fn() -> Result<i32, i32> + 'a>;
type Probe<'a> = Box<dyn Fn() -> String + 'a>;

/// One row: what, the call, what it must give, and then optionally a
/// probe of the state and what it must read.
struct Row<'a> {
    what: String,
    call: Call<'a>,
    want: Want,
    state: Option<(Probe<'a>, String)>,
}

/// The rows, built in order (the state carries from one to the next).
#[derive(Default)]
struct Table<'a>(Vec<Row<'a>>);

impl<'a> Table<'a> {
    fn row(&mut self, what: impl Into<String>, call: impl Fn() -> Result<i32, i32> + 'a, want: Want) {
        self.0.push(Row { what: what.into(), call: Box::new(call), want, state: None });
    }

    fn row_state(
        &mut self,
        what: impl Into<String>,
        call: impl Fn() -> Result<i32, i32> + 'a,
        want: Want,
        probe: impl Fn() -> String + 'a,
        state: impl Into<String>,
    ) {
        self.0.push(Row { what: what.into(), call: Box::new(call), want, state: Some((Box::new(probe), state.into())) });
    }

    /// Runs every row; the mismatches.
    fn run(&self) -> Vec<String> {
        let mut bad = Vec::new();
        for r in &self.0 {
            let got = (r.call)();
            let ok = match (r.want, got) {
                (Want::Any, Ok(_)) => true,
                (Want::Ret(v), Ok(g)) => v == g,
                (Want::E(e), Err(g)) => e == g,
                _ => false,
            };
            let shown = match got {
                Ok(v) => format!("returned {v}"),
                Err(e) => format!("errno {e} ({})", errname(e)),
            };
            if !ok {
                bad.push(format!("{}: {shown}, expected {:?}", r.what, r.want));
            }
            if let Some((probe, want)) = &r.state {
                let s = probe();
                if s != *want {
                    bad.push(format!("{} ({shown}): state {s:?}, expected {want:?}", r.what));
                }
            }
        }
        bad
    }
}

const fn ioc(dir: u64, ty: u8, nr: u64, size: u64) -> u64 {
    (dir << 30) | (size << 16) | ((ty as u64) << 8) | nr
}
/// `TUNSETIFF`'s number with an 8-byte size: not tun's.
const TUNSETIFF_SIZE8: u64 = ioc(1, b'T', 202, 8);
/// `TUNGETFEATURES`' number with the write direction: not tun's.
const TUNGETFEATURES_W: u64 = ioc(1, b'T', 207, 4);
/// A `'T'` number tun has none of.
const T_UNKNOWN: u64 = ioc(0, b'T', 0xf0, 0);
const TUNSETSTEERINGEBPF: u64 = ioc(2, b'T', 224, 4);
const TUNSETFILTEREBPF: u64 = ioc(2, b'T', 225, 4);
const SIOCGIFFLAGS: u64 = 0x8913;
const SIOCSIFMTU: u64 = 0x8922;
/// `SIOCDEVPRIVATE`: a socket-ioctl number tun copies an `ifreq` for and
/// then does not know.
const SIOCDEVPRIVATE: u64 = 0x89f0;
/// An address no ioctl may write or read.
const BAD: usize = 8;

fn int(fd: RawFd, cmd: u64, v: i32) -> Result<i32, i32> {
    let mut v = v;
    ioctl_ptr(fd, cmd, &mut v)
}

fn get(fd: RawFd, cmd: u64) -> String {
    let mut v = 0x5a5a_5a5ai32;
    match ioctl_ptr(fd, cmd, &mut v) {
        Ok(_) => v.to_string(),
        Err(e) => format!("errno {e}"),
    }
}

fn bad(fd: RawFd, cmd: u64) -> Result<i32, i32> {
    ioctl_ptr(fd, cmd, BAD as *mut u8)
}

fn ifreq(fd: RawFd, cmd: u64) -> Result<i32, i32> {
    let mut r = IfReqAddr { name: [0; 16], family: 0, data: [0; 14], pad: [0; 8] };
    ioctl_ptr(fd, cmd, &mut r)
}

/// `ETHTOOL_GTXCSUM`: the device's transmit checksum offload.
fn txcsum(name: &str) -> String {
    let mut v = [0x16u32, 0x5a];
    match ethtool_cmd(name, v.as_mut_ptr().cast()) {
        Ok(()) => v[1].to_string(),
        Err(e) => format!("errno {e}"),
    }
}

fn msglvl(name: &str) -> String {
    ethtool_msglvl(name).map(|v| v.to_string()).unwrap_or_else(|e| format!("errno {e}"))
}

/// The `len` of what `TUNGETFILTER` gives.
fn filter_len(fd: RawFd) -> String {
    let mut b = [0u8; 16];
    match ioctl_ptr(fd, TUNGETFILTER, b.as_mut_ptr()) {
        Ok(_) => u16::from_ne_bytes([b[0], b[1]]).to_string(),
        Err(e) => format!("errno {e}"),
    }
}

/// `TUNATTACHFILTER` of `len` instructions at `prog`.
fn attach(fd: RawFd, len: u16, prog: *const SockFilter) -> Result<i32, i32> {
    let mut f = SockFprog { len, filter: prog };
    ioctl_ptr(fd, TUNATTACHFILTER, &mut f)
}

/// What a BPF program fd that is not one gives: `EBADF` or `EINVAL` from
/// `bpf_prog_get_type()`, or `EOPNOTSUPP` on a kernel without
/// `CONFIG_BPF_SYSCALL` (which has no `kernel.unprivileged_bpf_disabled`;
/// the suite's kernels all have it now; this serves one built without).
fn not_a_prog(badf: bool) -> i32 {
    if !std::path::Path::new("/proc/sys/kernel/unprivileged_bpf_disabled").exists() {
        libc::EOPNOTSUPP
    } else if badf {
        libc::EBADF
    } else {
        libc::EINVAL
    }
}

/// Every tun ioctl's argument classes, before and after `TUNSETIFF`, on
/// TAP, TUN and a multi-queue TAP, with the resulting state.
pub fn t_ioctl_args(n: Node) -> TestResult {
    use Want::{Any, Ret, E};
    let (ebadfd, efault, einval) = (E(libc::EBADFD), E(libc::EFAULT), E(libc::EINVAL));
    let u = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let uf = u.as_raw_fd();
    let files: std::cell::RefCell<Vec<std::fs::File>> = Default::default();
    let mut tb = Table::default();

    // Before TUNSETIFF: no device.
    let simple: &[(&str, u64)] = &[
        ("TUNSETNOCSUM", TUNSETNOCSUM),
        ("TUNSETDEBUG", TUNSETDEBUG),
        ("TUNSETPERSIST", TUNSETPERSIST),
        ("TUNSETOWNER", TUNSETOWNER),
        ("TUNSETGROUP", TUNSETGROUP),
        ("TUNSETLINK", TUNSETLINK),
        ("TUNSETOFFLOAD", TUNSETOFFLOAD),
        ("TUNDETACHFILTER", TUNDETACHFILTER),
        ("unknown 'T' number", T_UNKNOWN),
        ("TUNSETIFF with size 8", TUNSETIFF_SIZE8),
        ("TUNGETFEATURES with _IOW", TUNGETFEATURES_W),
        ("ioctl 0", 0),
    ];
    for &(what, cmd) in simple {
        tb.row(format!("unattached: {what} 1"), move || ioctl_val(uf, cmd, 1), ebadfd);
    }
    let ptrs: &[(&str, u64)] = &[
        ("TUNGETIFF", TUNGETIFF),
        ("TUNSETTXFILTER", TUNSETTXFILTER),
        ("TUNGETSNDBUF", TUNGETSNDBUF),
        ("TUNSETSNDBUF", TUNSETSNDBUF),
        ("TUNATTACHFILTER", TUNATTACHFILTER),
        ("TUNGETFILTER", TUNGETFILTER),
        ("TUNGETVNETHDRSZ", TUNGETVNETHDRSZ),
        ("TUNSETVNETHDRSZ", TUNSETVNETHDRSZ),
        ("TUNGETVNETLE", TUNGETVNETLE),
        ("TUNSETVNETLE", TUNSETVNETLE),
        ("TUNGETVNETBE", TUNGETVNETBE),
        ("TUNSETVNETBE", TUNSETVNETBE),
        ("TUNSETSTEERINGEBPF", TUNSETSTEERINGEBPF),
        ("TUNSETFILTEREBPF", TUNSETFILTEREBPF),
        ("TUNSETCARRIER", TUNSETCARRIER),
    ];
    for &(what, cmd) in ptrs {
        // A valid pointer to 16 zeroed bytes (a `-1` for the eBPF ones).
        tb.row(
            format!("unattached: {what} valid pointer"),
            move || {
                let mut b = [0u8; 24];
                b[..4].copy_from_slice(&(-1i32).to_ne_bytes());
                ioctl_ptr(uf, cmd, b.as_mut_ptr())
            },
            E(libc::EBADFD),
        );
        // No copy before the device check.
        tb.row(format!("unattached: {what} bad pointer"), move || bad(uf, cmd), E(libc::EBADFD));
    }
    // The socket-ioctl numbers: the ifreq is copied first.
    for (what, cmd) in [("SIOCGIFHWADDR", SIOCGIFHWADDR), ("SIOCSIFHWADDR", SIOCSIFHWADDR), ("SIOCGIFFLAGS", SIOCGIFFLAGS), ("SIOCDEVPRIVATE", SIOCDEVPRIVATE)] {
        tb.row(format!("unattached: {what} valid ifreq"), move || ifreq(uf, cmd), E(libc::EBADFD));
        tb.row(format!("unattached: {what} bad pointer"), move || bad(uf, cmd), efault);
    }
    tb.row("unattached: TUNGETFEATURES bad pointer", move || bad(uf, TUNGETFEATURES), efault);
    tb.row("unattached: TUNGETFEATURES", move || int(uf, TUNGETFEATURES, 0), Any);
    tb.row(
        "unattached: SIOCGSKNS",
        move || {
            // SAFETY: Closing the namespace fd just returned.
            ioctl_val(uf, SIOCGSKNS, 0).inspect(|&fd| unsafe {
                libc::close(fd);
            })
        },
        Any,
    );
    tb.row("unattached: TUNGETDEVNETNS", move || ioctl_val(uf, TUNGETDEVNETNS, 0), ebadfd);
    tb.row("unattached: TUNSETQUEUE bad pointer", move || bad(uf, TUNSETQUEUE), efault);
    for (what, fl) in [("IFF_ATTACH_QUEUE", IFF_ATTACH_QUEUE), ("IFF_DETACH_QUEUE", IFF_DETACH_QUEUE), ("0", 0), ("both", IFF_ATTACH_QUEUE | IFF_DETACH_QUEUE)] {
        tb.row(
            format!("unattached: TUNSETQUEUE {what}"),
            move || {
                let mut r = IfReq::new("", fl);
                ioctl_ptr(uf, TUNSETQUEUE, &mut r)
            },
            einval,
        );
    }
    tb.row("unattached: TUNSETIFINDEX bad pointer", move || bad(uf, TUNSETIFINDEX), efault);
    tb.row("unattached: TUNSETIFINDEX INT_MIN", move || int(uf, TUNSETIFINDEX, i32::MIN), einval);
    tb.row("unattached: TUNSETIFINDEX 0", move || int(uf, TUNSETIFINDEX, 0), Ret(0));
    tb.row("unattached: TUNSETIFF bad pointer", move || bad(uf, TUNSETIFF), efault);

    // TUNSETIFF's flag classes, each on a fresh file.
    let setiff = |name: &'static str, flags: u16, index: Option<i32>| {
        let files = &files;
        move || -> Result<i32, i32> {
            let f = Tun::open_node(n.path).map_err(|e| e.raw_os_error().unwrap_or(0))?;
            if let Some(i) = index {
                int(f.as_raw_fd(), TUNSETIFINDEX, i)?;
            }
            // Not `IfReq::new`: the flags exactly as given.
            let mut r = IfReq::new(name, 0);
            r.flags = flags;
            let ret = ioctl_ptr(f.as_raw_fd(), TUNSETIFF, &mut r);
            files.borrow_mut().push(f);
            ret
        }
    };
    let flags = |name: &'static str| move || sysfs(name, "tun_flags");
    tb.row("TUNSETIFF flags 0", setiff("rt-ib0", 0, None), einval);
    tb.row("TUNSETIFF IFF_NO_PI alone", setiff("rt-ib0", IFF_NO_PI, None), E(libc::EINVAL));
    tb.row_state("TUNSETIFF IFF_TUN|IFF_TAP: a TUN", setiff("rt-ib1", IFF_TUN | IFF_TAP | IFF_NO_PI, None), Ret(0), flags("rt-ib1"), format!("{:#x}", IFF_TUN | IFF_NO_PI));
    tb.row_state(
        "TUNSETIFF unknown bits 0x0c and the queue bits: ignored",
        setiff("rt-ib2", IFF_TAP | IFF_NO_PI | 0x000c | IFF_ATTACH_QUEUE | IFF_DETACH_QUEUE, None),
        Ret(0),
        flags("rt-ib2"),
        format!("{:#x}", IFF_TAP | IFF_NO_PI),
    );
    tb.row_state("TUNSETIFF name rt-ib%d", setiff("rt-ib%d", IFF_TUN | IFF_NO_PI, None), Ret(0), || link_exists("rt-ib0").to_string(), "true");
    tb.row_state("TUNSETIFF IFF_NO_CARRIER", setiff("rt-ib3", IFF_TAP | IFF_NO_PI | IFF_NO_CARRIER, None), Ret(0), || {
        let _ = sh("ip link set rt-ib3 up");
        sysfs("rt-ib3", "carrier")
    }, "0");
    tb.row_state("TUNSETIFF with TUNSETIFINDEX INT_MAX", setiff("rt-ib4", IFF_TUN | IFF_NO_PI, Some(i32::MAX)), Ret(0), || sysfs("rt-ib4", "ifindex"), i32::MAX.to_string());

    // A TAP and a TUN, attached.
    let tap = Tun::create(n.path, "rt-ia0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF TAP: {e}"))?;
    let tun = Tun::create(n.path, "rt-ia1", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF TUN: {e}"))?;
    let (a, b) = (tap.fd(), tun.fd());
    let tapflags = move || sysfs("rt-ia0", "tun_flags");
    let base = IFF_TAP | IFF_NO_PI | napi_bit();
    tb.row("TAP: TUNSETIFF again", move || ifreq(a, TUNSETIFF), E(libc::EEXIST));
    tb.row("TAP: TUNSETIFF bad pointer", move || bad(a, TUNSETIFF), efault);
    tb.row("TAP: TUNSETIFINDEX 5", move || int(a, TUNSETIFINDEX, 5), E(libc::EPERM));
    tb.row("TAP: TUNSETIFINDEX bad pointer (device checked first)", move || bad(a, TUNSETIFINDEX), E(libc::EPERM));
    tb.row("TAP: TUNGETIFF bad pointer", move || bad(a, TUNGETIFF), efault);
    for v in [0u64, 1, u64::MAX] {
        tb.row(format!("TAP: TUNSETNOCSUM {v:#x}"), move || ioctl_val(a, TUNSETNOCSUM, v as libc::c_ulong), Ret(0));
    }
    for (v, lvl) in [(0u64, 0u32), (u64::from(u32::MAX), u32::MAX), ((1 << 32) | 5, 5)] {
        tb.row_state(format!("TAP: TUNSETDEBUG {v:#x}"), move || ioctl_val(a, TUNSETDEBUG, v as libc::c_ulong), Ret(0), || msglvl("rt-ia0"), lvl.to_string());
    }
    for (v, on) in [(1u64 << 32, true), (0, false), (u64::MAX, true), (0, false)] {
        let want = format!("{:#x}", base | if on { IFF_PERSIST } else { 0 });
        tb.row_state(format!("TAP: TUNSETPERSIST {v:#x}"), move || ioctl_val(a, TUNSETPERSIST, v as libc::c_ulong), Ret(0), tapflags, want);
    }
    for (cmd, what, attr) in [(TUNSETOWNER, "TUNSETOWNER", "owner"), (TUNSETGROUP, "TUNSETGROUP", "group")] {
        let probe = move || sysfs("rt-ia0", attr);
        for (v, want, st) in [
            (0u64, Ret(0), "0"),
            (u64::from(u32::MAX), E(libc::EINVAL), "0"),
            ((1 << 32) | 7, Ret(0), "7"),
            (0xffff_fffe, Ret(0), "4294967294"),
            (u64::MAX, E(libc::EINVAL), "4294967294"),
            (i32::MAX as u64, Ret(0), "2147483647"),
        ] {
            tb.row_state(format!("TAP: {what} {v:#x}"), move || ioctl_val(a, cmd, v as libc::c_ulong), want, probe, st);
        }
    }
    let link = move || format!("{}/{}", sysfs("rt-ia0", "type"), sysfs("rt-ia0", "addr_len"));
    for (v, st) in [(0u64, "0/7"), (0xffff, "65535/0"), (0x10001, "1/6"), (u64::MAX, "65535/0"), ((1 << 32) | 776, "776/4"), (1, "1/6")] {
        tb.row_state(format!("TAP: TUNSETLINK {v:#x}"), move || ioctl_val(a, TUNSETLINK, v as libc::c_ulong), Ret(0), link, st);
    }
    let csum = || txcsum("rt-ia0");
    for (v, want, st) in [
        (1u64, Ret(0), "1"),
        (2, einval, "1"),
        (8, E(libc::EINVAL), "1"),
        (1 << 32, E(libc::EINVAL), "1"),
        ((1 << 32) | 1, E(libc::EINVAL), "1"),
        (u64::MAX, E(libc::EINVAL), "1"),
        (0x21, E(libc::EINVAL), "1"),
        (0, Ret(0), "0"),
        (0x11, Ret(0), "1"),
        (0x61, Ret(0), "1"),
        (0x0f, Ret(0), "1"),
        (0, Ret(0), "0"),
    ] {
        tb.row_state(format!("TAP: TUNSETOFFLOAD {v:#x}"), move || ioctl_val(a, TUNSETOFFLOAD, v as libc::c_ulong), want, csum, st);
    }

    // TUNSETTXFILTER: `struct tun_filter` (flags, count) and `count`
    // addresses after it.
    tb.row("TAP: TUNSETTXFILTER bad pointer", move || bad(a, TUNSETTXFILTER), efault);
    tb.row("TUN: TUNSETTXFILTER", move || ioctl_ptr(b, TUNSETTXFILTER, [0u8; 4].as_mut_ptr()), E(libc::EINVAL));
    tb.row("TAP: TUNSETTXFILTER count 0", move || ioctl_ptr(a, TUNSETTXFILTER, [0u8; 4].as_mut_ptr()), Ret(0));
    tb.row(
        "TAP: TUNSETTXFILTER count 1",
        move || {
            let mut f = [0u8, 0, 1, 0, 2, 0, 0, 0, 0, 1];
            f[2..4].copy_from_slice(&1u16.to_ne_bytes());
            ioctl_ptr(a, TUNSETTXFILTER, f.as_mut_ptr())
        },
        Ret(1),
    );
    tb.row(
        "TAP: TUNSETTXFILTER count 1, the address on an unmapped page",
        move || {
            let page = 4096;
            // SAFETY: A fresh anonymous mapping; its second page unmapped
            // again, so the header ends where the mapping does.
            let p = unsafe {
                libc::mmap(std::ptr::null_mut(), 2 * page, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
            };
            if p == libc::MAP_FAILED {
                return Err(-1);
            }
            // SAFETY: Ours, as above.
            unsafe { libc::munmap(p.cast::<u8>().add(page).cast(), page) };
            // SAFETY: The last 4 bytes of the mapped page.
            let hdr = unsafe { p.cast::<u8>().add(page - 4) };
            // SAFETY: In the page.
            unsafe { std::ptr::copy_nonoverlapping([0u8, 0, 1, 0].as_ptr(), hdr, 4) };
            let r = ioctl_ptr(a, TUNSETTXFILTER, hdr);
            // SAFETY: The page still mapped.
            unsafe { libc::munmap(p, page) };
            r
        },
        efault,
    );

    tb.row("TAP: TUNGETSNDBUF bad pointer", move || bad(a, TUNGETSNDBUF), efault);
    let sndbuf = move || get(a, TUNGETSNDBUF);
    for (v, want, st) in [
        (1, Ret(0), "1".to_string()),
        (0, E(libc::EINVAL), "1".to_string()),
        (-1, E(libc::EINVAL), "1".to_string()),
        (i32::MIN, E(libc::EINVAL), "1".to_string()),
        (i32::MAX, Ret(0), i32::MAX.to_string()),
    ] {
        tb.row_state(format!("TAP: TUNSETSNDBUF {v}"), move || int(a, TUNSETSNDBUF, v), want, sndbuf, st);
    }
    tb.row_state("TAP: TUNSETSNDBUF bad pointer", move || bad(a, TUNSETSNDBUF), efault, sndbuf, i32::MAX.to_string());

    // Classic BPF filters. tun.c keeps the `sock_fprog` it was given even
    // when attaching it fails (`TUNGETFILTER` returns it).
    static ONE: [SockFilter; 1] = [SockFilter { code: 0x06, jt: 0, jf: 0, k: 0xffff }];
    static BADOP: [SockFilter; 1] = [SockFilter { code: 0xffff, jt: 0, jf: 0, k: 0 }];
    let big: &'static [SockFilter] = Box::leak(vec![ONE[0]; 4097].into_boxed_slice());
    let flen = move || filter_len(a);
    tb.row("TUN: TUNATTACHFILTER", move || attach(b, 1, ONE.as_ptr()), E(libc::EINVAL));
    tb.row("TUN: TUNDETACHFILTER", move || ioctl_val(b, TUNDETACHFILTER, 0), E(libc::EINVAL));
    tb.row("TUN: TUNGETFILTER", move || ioctl_ptr(b, TUNGETFILTER, [0u8; 16].as_mut_ptr()), E(libc::EINVAL));
    tb.row("TAP: TUNGETFILTER bad pointer", move || bad(a, TUNGETFILTER), efault);
    tb.row_state("TAP: TUNATTACHFILTER bad pointer", move || bad(a, TUNATTACHFILTER), efault, flen, "0");
    tb.row_state("TAP: TUNATTACHFILTER len 0", move || attach(a, 0, ONE.as_ptr()), E(libc::EINVAL), flen, "0");
    tb.row_state("TAP: TUNATTACHFILTER len 4097 (BPF_MAXINSNS + 1)", move || attach(a, 4097, big.as_ptr()), E(libc::EINVAL), flen, "4097");
    tb.row_state("TAP: TUNATTACHFILTER len 1 at a bad address", move || attach(a, 1, BAD as *const SockFilter), efault, flen, "1");
    tb.row_state("TAP: TUNATTACHFILTER an invalid opcode", move || attach(a, 1, BADOP.as_ptr()), E(libc::EINVAL), flen, "1");
    tb.row_state("TAP: TUNATTACHFILTER len 4096", move || attach(a, 4096, big.as_ptr()), Ret(0), flen, "4096");
    tb.row_state("TAP: TUNATTACHFILTER len 1", move || attach(a, 1, ONE.as_ptr()), Ret(0), flen, "1");
    // Detached, the fprog is still what TUNGETFILTER gives.
    tb.row_state("TAP: TUNDETACHFILTER", move || ioctl_val(a, TUNDETACHFILTER, 0), Ret(0), flen, "1");
    tb.row_state("TAP: TUNDETACHFILTER again", move || ioctl_val(a, TUNDETACHFILTER, 0), Ret(0), flen, "1");

    // The vnet header's size and endianness.
    let hdrsz = move || get(a, TUNGETVNETHDRSZ);
    tb.row("TAP: TUNGETVNETHDRSZ bad pointer", move || bad(a, TUNGETVNETHDRSZ), efault);
    for (v, want, st) in [
        (9, E(libc::EINVAL), "10".to_string()),
        (0, E(libc::EINVAL), "10".to_string()),
        (-1, E(libc::EINVAL), "10".to_string()),
        (i32::MIN, E(libc::EINVAL), "10".to_string()),
        (i32::MAX, Ret(0), i32::MAX.to_string()),
        (10, Ret(0), "10".to_string()),
        (12, Ret(0), "12".to_string()),
    ] {
        tb.row_state(format!("TAP: TUNSETVNETHDRSZ {v}"), move || int(a, TUNSETVNETHDRSZ, v), want, hdrsz, st);
    }
    tb.row_state("TAP: TUNSETVNETHDRSZ bad pointer", move || bad(a, TUNSETVNETHDRSZ), efault, hdrsz, "12");
    let le = move || get(a, TUNGETVNETLE);
    for (v, st) in [(2, "1"), (0, "0"), (-1, "1"), (i32::MIN, "1"), (0, "0")] {
        tb.row_state(format!("TAP: TUNSETVNETLE {v}"), move || int(a, TUNSETVNETLE, v), Ret(0), le, st);
    }
    tb.row_state("TAP: TUNSETVNETLE bad pointer", move || bad(a, TUNSETVNETLE), efault, le, "0");
    tb.row("TAP: TUNGETVNETLE bad pointer", move || bad(a, TUNGETVNETLE), efault);
    // Without CONFIG_TUN_VNET_CROSS_LE, EINVAL before any copy.
    tb.row("TAP: TUNGETVNETBE bad pointer", move || bad(a, TUNGETVNETBE), einval);
    tb.row("TAP: TUNSETVNETBE bad pointer", move || bad(a, TUNSETVNETBE), E(libc::EINVAL));

    // eBPF programs by fd: -1 detaches; anything else must be a program
    // (abi/ebpf.rs attaches real ones).
    for (cmd, what) in [(TUNSETSTEERINGEBPF, "TUNSETSTEERINGEBPF"), (TUNSETFILTEREBPF, "TUNSETFILTEREBPF")] {
        tb.row(format!("TAP: {what} -1"), move || int(a, cmd, -1), Ret(0));
        tb.row(format!("TAP: {what} bad pointer"), move || bad(a, cmd), efault);
        tb.row(format!("TAP: {what} the tun fd"), move || int(a, cmd, a), E(not_a_prog(false)));
        tb.row(format!("TAP: {what} -2"), move || int(a, cmd, -2), E(not_a_prog(true)));
        tb.row(format!("TAP: {what} INT_MAX"), move || int(a, cmd, i32::MAX), E(not_a_prog(true)));
    }

    // The socket-ioctl numbers tun does not serve, and unknown ones.
    for (what, cmd) in [("SIOCGIFFLAGS", SIOCGIFFLAGS), ("SIOCSIFMTU", SIOCSIFMTU), ("SIOCDEVPRIVATE", SIOCDEVPRIVATE)] {
        tb.row(format!("TAP: {what}"), move || ifreq(a, cmd), E(libc::EINVAL));
        tb.row(format!("TAP: {what} bad pointer"), move || bad(a, cmd), efault);
    }
    for (what, cmd) in [("unknown 'T' number", T_UNKNOWN), ("TUNSETIFF with size 8", TUNSETIFF_SIZE8), ("TUNGETFEATURES with _IOW", TUNGETFEATURES_W), ("ioctl 0", 0)] {
        tb.row(format!("TAP: {what}"), move || ioctl_val(a, cmd, 0), E(libc::EINVAL));
    }
    tb.row("TAP: SIOCSIFHWADDR bad pointer", move || bad(a, SIOCSIFHWADDR), efault);
    tb.row("TAP: SIOCGIFHWADDR bad pointer", move || bad(a, SIOCGIFHWADDR), efault);
    tb.row_state(
        "TAP: SIOCSIFHWADDR family 0 (not the device's type)",
        move || {
            let mut r = IfReqAddr { name: [0; 16], family: 0, data: [0; 14], pad: [0; 8] };
            r.data[..6].copy_from_slice(&[2, 1, 2, 3, 4, 5]);
            ioctl_ptr(a, SIOCSIFHWADDR, &mut r)
        },
        E(libc::EINVAL),
        || (sysfs("rt-ia0", "address") != "02:01:02:03:04:05").to_string(),
        "true",
    );
    tb.row("TUN: SIOCSIFHWADDR (no ndo_set_mac_address)", move || {
        let mut r = IfReqAddr { name: [0; 16], family: 0xfffe, data: [0; 14], pad: [0; 8] };
        ioctl_ptr(b, SIOCSIFHWADDR, &mut r)
    }, E(libc::EOPNOTSUPP));

    // TUNSETQUEUE on a single-queue device.
    for (what, fl) in [("IFF_DETACH_QUEUE", IFF_DETACH_QUEUE), ("IFF_ATTACH_QUEUE", IFF_ATTACH_QUEUE), ("0", 0)] {
        tb.row(format!("TAP: TUNSETQUEUE {what} (single queue)"), move || {
            let mut r = IfReq::new("", fl);
            ioctl_ptr(a, TUNSETQUEUE, &mut r)
        }, E(libc::EINVAL));
    }

    // Carrier: any non-zero `unsigned int` is on (the device up, so sysfs
    // shows it).
    tb.row_state("TAP up", || sh("ip link set rt-ia0 up").map(|_| 0).map_err(|_| -1), Ret(0), || sysfs("rt-ia0", "operstate").is_empty().to_string(), "false");
    tb.row("TAP up: TUNSETLINK 1", move || ioctl_val(a, TUNSETLINK, 1), E(libc::EBUSY));
    tb.row("TAP: TUNSETCARRIER bad pointer", move || bad(a, TUNSETCARRIER), efault);
    let carrier = || {
        thread::sleep(Duration::from_millis(50));
        sysfs("rt-ia0", "carrier")
    };
    for (v, st) in [(0, "0"), (256, "1"), (0, "0"), (-1, "1"), (0, "0"), (2, "1"), (i32::MIN, "1")] {
        tb.row_state(format!("TAP: TUNSETCARRIER {v}"), move || int(a, TUNSETCARRIER, v), Ret(0), carrier, st);
    }

    // A multi-queue TAP: attach and detach in each state.
    let mq = mq_open(n.path, "rt-ia2", IFF_TAP | IFF_NO_PI, 2)?;
    let q1 = mq[1].fd();
    let sq = move |fl: u16| {
        move || {
            let mut r = IfReq::new("", fl);
            ioctl_ptr(q1, TUNSETQUEUE, &mut r)
        }
    };
    let nq = || tx_queues("rt-ia2").to_string();
    tb.row_state("MQ: TUNSETQUEUE attach, attached", sq(IFF_ATTACH_QUEUE), E(libc::EINVAL), nq, "2");
    tb.row_state("MQ: TUNSETQUEUE both bits, attached (attach wins)", sq(IFF_ATTACH_QUEUE | IFF_DETACH_QUEUE), E(libc::EINVAL), nq, "2");
    tb.row_state("MQ: TUNSETQUEUE 0", sq(0), E(libc::EINVAL), nq, "2");
    tb.row_state("MQ: TUNSETQUEUE detach", sq(IFF_DETACH_QUEUE), Ret(0), nq, "1");
    tb.row_state("MQ: TUNSETQUEUE detach, detached", sq(IFF_DETACH_QUEUE), E(libc::EINVAL), nq, "1");
    tb.row_state("MQ: TUNSETQUEUE both bits, detached", sq(IFF_ATTACH_QUEUE | IFF_DETACH_QUEUE), Ret(0), nq, "2");
    tb.row_state("MQ: TUNSETQUEUE detach again", sq(IFF_DETACH_QUEUE), Ret(0), nq, "1");
    tb.row_state("MQ: TUNGETIFF of the detached queue", move || {
        let mut r = IfReq::new("", 0);
        ioctl_ptr(q1, TUNGETIFF, &mut r).map(|_| i32::from(r.flags & IFF_DETACH_QUEUE != 0))
    }, Ret(1), nq, "1");
    tb.row("MQ: TUNSETIFF on the detached queue", move || ifreq(q1, TUNSETIFF), E(libc::EEXIST));
    tb.row_state("MQ: TUNSETQUEUE attach", sq(IFF_ATTACH_QUEUE), Ret(0), nq, "2");

    let bad_rows = tb.run();
    let total = tb.0.len();
    drop(tb);
    drop(files);
    drop((tap, tun, mq, u));
    for b in &bad_rows {
        println!("# {b}");
    }
    check!(bad_rows.is_empty(), "{} of {total} rows differ from tun.c: first: {}", bad_rows.len(), bad_rows[0]);
    println!("# {total} rows as tun.c");
    Ok(())
}
