//! `rtun`: the guest-side programs of rust-tun.
//!
//! - `rtun test [FILTER]`: the guest test suite, KTAP output.
//! - `rtun list [FILTER]`: the names `rtun test` would run, one a line.
//! - `rtun tap-drain NODE NAME`: create a TAP device on NODE named NAME,
//!   bring it up and read (drain) it until killed; for pktgen runs.
//!
//! It runs as PID 1's child in the test initramfs, as root, with busybox for
//! `insmod`, `rmmod`, `ip` and `ping`.

mod pkt;
mod stress;
mod tun;

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};
use tun::*;

/// The rust_tun device node.
const RUST_NODE: &str = "/dev/net/rust_tun";
/// The C tun device node.
const C_NODE: &str = "/dev/net/tun";
/// Where the initramfs keeps modules.
const MODDIR: &str = "/lib/modules";

type TestResult = Result<(), String>;

macro_rules! check {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!("{}:{}: {}", file!(), line!(), format!($($fmt)+)));
        }
    };
}

macro_rules! expect_errno {
    ($res:expr, $errno:expr, $what:expr) => {
        match $res {
            Err(e) if e == $errno => {}
            Err(e) => {
                return Err(format!(
                    "{}:{}: {}: errno {} ({}), expected {} ({})",
                    file!(), line!(), $what, e, errname(e), $errno, errname($errno)
                ))
            }
            Ok(_) => {
                return Err(format!(
                    "{}:{}: {}: succeeded, expected {} ({})",
                    file!(), line!(), $what, $errno, errname($errno)
                ))
            }
        }
    };
}

/// Ends a test as skipped (KTAP `# SKIP`), with the reason.
macro_rules! skip {
    ($($fmt:tt)+) => {
        return Err(format!("SKIP: {}", format!($($fmt)+)))
    };
}

mod abi;
mod behaviour;
mod clients;
mod ethtool;
mod fileops;
mod vnet;
mod fuzz;
mod nl;
mod hardening;
mod lsm;
mod queues;
mod runner;

fn errname(e: i32) -> &'static str {
    match e {
        libc::EPERM => "EPERM",
        libc::EINVAL => "EINVAL",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::EAGAIN => "EAGAIN",
        libc::EBADFD => "EBADFD",
        libc::EIO => "EIO",
        libc::EMSGSIZE => "EMSGSIZE",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ENOENT => "ENOENT",
        libc::E2BIG => "E2BIG",
        libc::EACCES => "EACCES",
        libc::ENOMEM => "ENOMEM",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENXIO => "ENXIO",
        libc::ENODEV => "ENODEV",
        libc::EINTR => "EINTR",
        _ => "?",
    }
}

/// Runs a command; Ok(stdout) on exit status 0.
fn sh(cmd: &str) -> Result<String, String> {
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`{cmd}` failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// A number that grows over the suite's tests, for what must differ from
/// one run of a test to the next (a port the previous run's connection may
/// still hold). Each test runs in a process of its own (runner.rs), so a
/// static counter would start again at 0: this one lives in /tmp.
fn suite_serial() -> u16 {
    const FILE: &str = "/tmp/rtun-suite-serial";
    let n = std::fs::read_to_string(FILE).ok().and_then(|s| s.trim().parse::<u16>().ok()).unwrap_or(0);
    let _ = std::fs::write(FILE, (n.wrapping_add(1) % 1000).to_string());
    n
}

fn module_loaded(name: &str) -> bool {
    std::fs::read_to_string("/proc/modules")
        .map(|m| m.lines().any(|l| l.split(' ').next() == Some(name)))
        .unwrap_or(false)
}

fn load(name: &str) -> TestResult {
    if !module_loaded(name) {
        sh(&format!("insmod {MODDIR}/{name}.ko"))?;
    }
    Ok(())
}

fn unload(name: &str) -> TestResult {
    if module_loaded(name) {
        sh(&format!("rmmod {name}"))?;
    }
    Ok(())
}

/// A device node under test: rust_tun, or C tun for the side-by-side ABI runs.
#[derive(Clone, Copy)]
struct Node {
    path: &'static str,
    module: &'static str,
    /// The tests' name prefix: `rust_tun`, `tun`, or `dropin` (rust_tun
    /// standing in for tun.ko).
    label: &'static str,
    tun_prefix: &'static str,
    tap_prefix: &'static str,
    driver: &'static str,
    /// What `TUNGETFEATURES` must say: exactly what the driver implements.
    features: u32,
}

const RUST: Node = Node {
    path: RUST_NODE,
    module: "rust_tun",
    label: "rust_tun",
    tun_prefix: "rtun",
    tap_prefix: "rtap",
    driver: "rust_tun",
    features: (IFF_TUN | IFF_TAP | IFF_NO_CARRIER | IFF_NO_PI | IFF_ONE_QUEUE | IFF_MULTI_QUEUE | IFF_VNET_HDR | IFF_NAPI | IFF_NAPI_FRAGS)
        as u32,
};
const C: Node = Node {
    path: C_NODE,
    module: "tun",
    label: "tun",
    tun_prefix: "tun",
    tap_prefix: "tap",
    driver: "tun",
    features: (IFF_TUN | IFF_TAP | IFF_NO_CARRIER | IFF_NO_PI | IFF_ONE_QUEUE | IFF_MULTI_QUEUE | IFF_VNET_HDR | IFF_NAPI | IFF_NAPI_FRAGS)
        as u32,
};

/// rust_tun loaded with `dropin=1`, as `/dev/net/tun` with tun's identity
/// (the drop-in run: `RTUN_DROPIN=1`, tun.ko absent). It runs every test
/// written for the C tun, with the C tun's expectations.
const DROPIN: Node = Node {
    path: C_NODE,
    module: "rust_tun",
    label: "dropin",
    tun_prefix: "tun",
    tap_prefix: "tap",
    driver: "tun",
    features: RUST.features,
};

impl Node {
    fn setup(&self) -> TestResult {
        if self.label == "dropin" {
            check!(module_loaded("rust_tun"), "the drop-in run needs rust_tun loaded with dropin=1");
            return Ok(());
        }
        load(self.module)
    }
}

/// Whether this is the drop-in run (`RTUN_DROPIN=1`).
fn dropin_run() -> bool {
    std::env::var("RTUN_DROPIN").is_ok_and(|v| v == "1")
}

/// Configures a TUN device as a point-to-point link `local` <-> `peer`, up.
fn ptp_up(name: &str, local: &str, peer: &str) -> TestResult {
    sh(&format!("ip addr add {local} peer {peer} dev {name} && ip link set {name} up"))?;
    Ok(())
}

/// Reads packets until `pred` accepts one or `timeout` passes.
fn read_until(t: &Tun, timeout: Duration, mut pred: impl FnMut(&[u8]) -> bool) -> Result<Vec<u8>, String> {
    let deadline = Instant::now() + timeout;
    let mut buf = vec![0u8; 65536];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        check!(!left.is_zero(), "no matching packet within {timeout:?}");
        match t.read_timeout(&mut buf, left) {
            Ok(n) => {
                if pred(&buf[..n]) {
                    return Ok(buf[..n].to_vec());
                }
            }
            Err(libc::ETIMEDOUT) => {}
            Err(e) => return Err(format!("read: errno {e} ({})", errname(e))),
        }
    }
}

// ---------------------------------------------------------------------------
// Tests.

fn t_load_unload(_: Node) -> TestResult {
    unload("rust_tun")?;
    check!(!std::path::Path::new(RUST_NODE).exists(), "{RUST_NODE} exists before load");
    load("rust_tun")?;
    let meta = std::fs::metadata(RUST_NODE).map_err(|e| format!("{RUST_NODE}: {e}"))?;
    use std::os::unix::fs::FileTypeExt;
    check!(meta.file_type().is_char_device(), "{RUST_NODE} is not a character device");
    let misc = std::fs::read_to_string("/proc/misc").unwrap_or_default();
    check!(misc.contains("rust_tun"), "rust_tun not in /proc/misc: {misc}");
    unload("rust_tun")?;
    check!(!std::path::Path::new(RUST_NODE).exists(), "{RUST_NODE} left after rmmod");
    load("rust_tun")
}

fn t_create_tun(n: Node) -> TestResult {
    let t = Tun::create(n.path, "", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    check!(t.name.starts_with(n.tun_prefix), "default name {} lacks {}", t.name, n.tun_prefix);
    check!(link_exists(&t.name), "no /sys/class/net/{}", t.name);
    check!(sysfs(&t.name, "type") == "65534", "type {} != ARPHRD_NONE", sysfs(&t.name, "type"));
    check!(sysfs(&t.name, "mtu") == "1500", "mtu {}", sysfs(&t.name, "mtu"));
    check!(sysfs(&t.name, "tx_queue_len") == "500", "tx_queue_len {}", sysfs(&t.name, "tx_queue_len"));
    let (name, flags) = t.getiff().map_err(|e| format!("TUNGETIFF: {e}"))?;
    check!(name == t.name, "TUNGETIFF name {name} != {}", t.name);
    check!(flags & (IFF_TUN | IFF_TAP | IFF_NO_PI) == IFF_TUN | IFF_NO_PI, "TUNGETIFF flags {flags:#x}");
    let name = t.name.clone();
    drop(t);
    check!(!link_exists(&name), "{name} left after close");
    Ok(())
}

fn t_create_tap(n: Node) -> TestResult {
    let t = Tun::create(n.path, "", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    check!(t.name.starts_with(n.tap_prefix), "default name {} lacks {}", t.name, n.tap_prefix);
    check!(sysfs(&t.name, "type") == "1", "type {} != ARPHRD_ETHER", sysfs(&t.name, "type"));
    let mac = sysfs(&t.name, "address");
    check!(mac.len() == 17 && mac != "00:00:00:00:00:00", "address {mac}");
    let first = u8::from_str_radix(&mac[..2], 16).unwrap_or(1);
    check!(first & 1 == 0 && first & 2 == 2, "address {mac} not a local unicast");
    let (_, flags) = t.getiff().map_err(|e| format!("TUNGETIFF: {e}"))?;
    check!(flags & (IFF_TUN | IFF_TAP) == IFF_TAP, "TUNGETIFF flags {flags:#x}");
    Ok(())
}

fn t_create_named(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-named0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    check!(t.name == "rt-named0", "name {}", t.name);
    check!(link_exists("rt-named0"), "rt-named0 missing");
    let t2 = Tun::create(n.path, "rt-fmt%d", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    check!(t2.name == "rt-fmt0", "name {}", t2.name);
    Ok(())
}

/// `TUNGETFEATURES` says exactly what the driver implements, and each
/// feature it claims works: a device created with it reports it in
/// `TUNGETIFF` and behaves accordingly; a flag it does not claim is masked.
fn t_features(n: Node) -> TestResult {
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let mut feat: u32 = 0;
    ioctl_ptr(f.as_raw_fd(), TUNGETFEATURES, &mut feat).map_err(|e| format!("TUNGETFEATURES: {e}"))?;
    check!(feat == n.features, "TUNGETFEATURES {feat:#x}, expected {:#x}", n.features);
    expect_errno!(ioctl_ptr(f.as_raw_fd(), TUNGETFEATURES, 8usize as *mut u32), libc::EFAULT, "TUNGETFEATURES to a bad pointer");
    let settable = [IFF_NO_PI, IFF_ONE_QUEUE, IFF_MULTI_QUEUE, IFF_VNET_HDR, IFF_NAPI, IFF_NAPI_FRAGS];
    for bit in settable {
        let name = format!("rt-ft{bit:x}");
        // tun.c takes IFF_NAPI_FRAGS only with IFF_NAPI.
        let with = if bit == IFF_NAPI_FRAGS { bit | IFF_NAPI } else { bit };
        let t = Tun::create(n.path, &name, IFF_TAP | with).map_err(|e| format!("TUNSETIFF with {with:#x}: {e}"))?;
        let (_, got) = t.getiff().map_err(|e| format!("TUNGETIFF: {e}"))?;
        let claimed = feat & u32::from(bit) != 0;
        let reported = got & bit != 0;
        // IFF_ONE_QUEUE is accepted and has meant nothing since 3.8; both
        // report it back as given.
        if bit == IFF_ONE_QUEUE {
            continue;
        }
        check!(reported == claimed, "{bit:#x}: claimed {claimed}, reported by TUNGETIFF {reported}");
        if !claimed {
            continue;
        }
        match bit {
            IFF_NO_PI => {
                sh(&format!("ip link set {name} up"))?;
                let frame = pkt::eth([0xff; 6], [2, 0, 0, 0, 0, 1], pkt::ETH_P_ARP, &[0u8; 28]);
                check!(t.write(&frame) == Ok(frame.len()), "IFF_NO_PI: a frame without tun_pi");
            }
            IFF_MULTI_QUEUE => {
                let t2 = Tun::create(n.path, &name, IFF_TAP | bit).map_err(|e| format!("second queue: {e}"))?;
                check!(tx_queues(&name) == 2, "IFF_MULTI_QUEUE: {} queues", tx_queues(&name));
                drop(t2);
            }
            IFF_VNET_HDR => {
                let mut sz: i32 = 0;
                ioctl_ptr(t.fd(), TUNGETVNETHDRSZ, &mut sz).map_err(|e| format!("TUNGETVNETHDRSZ: {e}"))?;
                check!(sz == 10, "IFF_VNET_HDR: header size {sz}");
            }
            IFF_NAPI => {
                // A frame written goes through the NAPI context and counts.
                sh(&format!("ip link set {name} up"))?;
                let rx0 = stat(&name, "rx_packets")?;
                let mut frame = vec![0u8; 4];
                frame.extend_from_slice(&pkt::eth([0xff; 6], [2, 0, 0, 0, 0, 1], pkt::ETH_P_ARP, &[0u8; 28]));
                frame[2..4].copy_from_slice(&pkt::ETH_P_ARP.to_be_bytes());
                check!(t.write(&frame) == Ok(frame.len()), "IFF_NAPI: write {:?}", t.write(&frame));
                check!(stat(&name, "rx_packets")? == rx0 + 1, "IFF_NAPI: rx_packets {} after one write", stat(&name, "rx_packets")?);
            }
            _ => {}
        }
    }
    Ok(())
}

/// Write an ICMP echo request into a TUN device; the stack's reply is read
/// back; the counters move by exactly that.
fn t_tun_round_trip(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-rt0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up(&t.name, "10.10.0.1", "10.10.0.2")?;
    let c0 = counters(&t.name)?;
    let req = pkt::ipv4([10, 10, 0, 2], [10, 10, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 0x4242, 1, b"rust-tun round trip"));
    let w = t.write(&req).map_err(|e| format!("write: {e}"))?;
    check!(w == req.len(), "write returned {w}, expected {}", req.len());
    let mut buf = vec![0u8; 2048];
    let got = t.read_timeout(&mut buf, Duration::from_secs(3)).map_err(|e| format!("read: {e}"))?;
    let rep = &buf[..got];
    let ok = pkt::parse_ipv4(rep)
        .and_then(|ip| pkt::parse_icmp_echo(ip.payload).map(|e| (ip.src, e)))
        .is_some_and(|(src, (ty, id, seq, data))| {
            src == [10, 10, 0, 1] && ty == 0 && id == 0x4242 && seq == 1 && data == b"rust-tun round trip"
        });
    check!(ok, "the first packet read is not the reply: {:02x?}", &rep[..rep.len().min(40)]);
    let c1 = counters(&t.name)?;
    check!(c1.rx_packets == c0.rx_packets + 1 && c1.rx_bytes == c0.rx_bytes + req.len() as u64, "rx: {c0:?} -> {c1:?}");
    check!(c1.tx_packets == c0.tx_packets + 1 && c1.tx_bytes == c0.tx_bytes + got as u64, "tx: {c0:?} -> {c1:?}");
    check!(c1.rx_dropped == c0.rx_dropped && c1.tx_dropped == c0.tx_dropped, "drops: {c0:?} -> {c1:?}");
    Ok(())
}
/// ARP and ICMP through a TAP device: Ethernet frames both ways.
fn t_tap_round_trip(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-tap0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip addr add 10.11.0.1/24 dev rt-tap0 && ip link set rt-tap0 up")?;
    let me = [0x02, 0, 0, 0, 0, 0x22];
    let arp = pkt::arp(1, me, [10, 11, 0, 2], [0; 6], [10, 11, 0, 1]);
    t.write(&pkt::eth([0xff; 6], me, pkt::ETH_P_ARP, &arp)).map_err(|e| format!("write arp: {e}"))?;
    let reply = read_until(&t, Duration::from_secs(3), |f| {
        pkt::parse_eth(f).is_some_and(|(dst, _, ty, p)| {
            dst == me && ty == pkt::ETH_P_ARP && pkt::parse_arp(p).is_some_and(|a| a.0 == 2 && a.2 == [10, 11, 0, 1])
        })
    })?;
    let (_, devmac, _, _) = pkt::parse_eth(&reply).ok_or("bad frame")?;
    let mac = sysfs("rt-tap0", "address");
    let want = devmac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":");
    check!(mac == want, "ARP reply from {want}, device address {mac}");
    let req = pkt::ipv4([10, 11, 0, 2], [10, 11, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 7, 9, b"tap"));
    t.write(&pkt::eth(devmac, me, pkt::ETH_P_IP, &req)).map_err(|e| format!("write icmp: {e}"))?;
    read_until(&t, Duration::from_secs(3), |f| {
        pkt::parse_eth(f).is_some_and(|(dst, _, ty, p)| {
            dst == me
                && ty == pkt::ETH_P_IP
                && pkt::parse_ipv4(p).and_then(|ip| pkt::parse_icmp_echo(ip.payload)).is_some_and(|e| e.0 == 0 && e.1 == 7 && e.2 == 9)
        })
    })?;
    Ok(())
}

/// `ping` from the stack through the device, answered by a user-space responder.
fn t_ping(n: Node) -> TestResult {
    let t = Arc::new(Tun::create(n.path, "rt-ping0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?);
    ptp_up(&t.name, "10.12.0.1", "10.12.0.2")?;
    let stop = Arc::new(AtomicBool::new(false));
    let (t2, stop2) = (t.clone(), stop.clone());
    let responder = thread::spawn(move || {
        let mut answered = 0u32;
        let mut buf = vec![0u8; 65536];
        while !stop2.load(Ordering::Relaxed) {
            if let Ok(n) = t2.read_timeout(&mut buf, Duration::from_millis(100)) {
                if let Some(rep) = pkt::echo_reply_for(&buf[..n]) {
                    if t2.write(&rep).is_ok() {
                        answered += 1;
                    }
                }
            }
        }
        answered
    });
    let r = sh("ping -c 3 -W 2 10.12.0.2");
    stop.store(true, Ordering::Relaxed);
    let answered = responder.join().map_err(|_| "responder panicked")?;
    let out = r?;
    check!(out.contains("3 packets received"), "ping output: {out}");
    check!(answered == 3, "responder answered {answered} requests");
    Ok(())
}

/// Without IFF_NO_PI every packet carries a 4-byte `struct tun_pi`: its
/// protocol says what the write is, and reads carry it; a short read strips
/// the packet (TUN_PKT_STRIP) and the next read returns the next packet.
fn t_tun_pi(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-pi0", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up(&t.name, "10.14.0.1", "10.14.0.2")?;
    let req = |seq: u16| pkt::ipv4([10, 14, 0, 2], [10, 14, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 5, seq, b"pi"));
    let with_pi = |proto: [u8; 2], p: &[u8]| {
        let mut w = vec![0, 0, proto[0], proto[1]];
        w.extend_from_slice(p);
        w
    };
    let mut buf = vec![0u8; 2048];
    // The protocol field decides: an IPv4 packet labelled IPv6 gets no answer.
    let w = with_pi([0x86, 0xdd], &req(1));
    check!(t.write(&w) == Ok(w.len()), "write labelled IPv6");
    expect_errno!(t.read_timeout(&mut buf, Duration::from_millis(300)), libc::ETIMEDOUT, "reply to a packet labelled IPv6");
    let w = with_pi([0x08, 0x00], &req(2));
    check!(t.write(&w) == Ok(w.len()), "write labelled IPv4");
    let got = t.read_timeout(&mut buf, Duration::from_secs(3)).map_err(|e| format!("read: {e}"))?;
    check!(buf[0..4] == [0, 0, 0x08, 0x00], "tun_pi {:02x?}", &buf[..4]);
    check!(pkt::parse_ipv4(&buf[4..got]).and_then(|ip| pkt::parse_icmp_echo(ip.payload)).is_some_and(|e| e.0 == 0 && e.2 == 2), "not the reply to seq 2");
    // Two replies queued; a 10-byte read strips the first (flag set, 10
    // bytes returned), the next read returns the second, whole.
    for seq in [3, 4] {
        t.write(&with_pi([8, 0], &req(seq))).map_err(|e| format!("write: {e}"))?;
    }
    thread::sleep(Duration::from_millis(200));
    let mut small = [0u8; 10];
    check!(t.read(&mut small) == Ok(10), "short read");
    check!(u16::from_ne_bytes([small[0], small[1]]) & TUN_PKT_STRIP != 0, "TUN_PKT_STRIP not set: {:02x?}", &small[..4]);
    check!(small[2..4] == [0x08, 0x00] && small[4] >> 4 == 4, "short read: {small:02x?}");
    let got = t.read(&mut buf).map_err(|e| format!("read after the short one: {e}"))?;
    check!(u16::from_ne_bytes([buf[0], buf[1]]) == 0, "flags on a whole read: {:02x?}", &buf[..4]);
    check!(pkt::parse_ipv4(&buf[4..got]).and_then(|ip| pkt::parse_icmp_echo(ip.payload)).is_some_and(|e| e.0 == 0 && e.2 == 4), "the read after a short one is not the next packet");
    // A buffer shorter than tun_pi itself is EINVAL (and the packet is lost).
    t.write(&with_pi([8, 0], &req(5))).map_err(|e| format!("write: {e}"))?;
    thread::sleep(Duration::from_millis(200));
    let mut tiny = [0u8; 3];
    expect_errno!(t.read(&mut tiny), libc::EINVAL, "read into 3 bytes with tun_pi");
    expect_errno!(t.read_timeout(&mut buf, Duration::from_millis(200)), libc::ETIMEDOUT, "read after the EINVAL one");
    expect_errno!(t.write(&[0, 0, 8]), libc::EINVAL, "write of 3 bytes with tun_pi");
    Ok(())
}
fn t_bad_ioctls(n: Node) -> TestResult {
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let fd = f.as_raw_fd();
    let mut ifr = IfReq::new("", IFF_NO_PI);
    expect_errno!(ioctl_ptr(fd, TUNSETIFF, &mut ifr), libc::EINVAL, "TUNSETIFF without IFF_TUN/IFF_TAP");
    expect_errno!(ioctl_ptr(fd, TUNSETIFF, 16usize as *mut IfReq), libc::EFAULT, "TUNSETIFF from an unmapped pointer");
    let mut out = IfReq::new("", 0);
    expect_errno!(ioctl_ptr(fd, TUNGETIFF, &mut out), libc::EBADFD, "TUNGETIFF before TUNSETIFF");
    expect_errno!(ioctl_val(fd, TUNSETPERSIST, 1), libc::EBADFD, "TUNSETPERSIST before TUNSETIFF");
    expect_errno!(fd_write(fd, &[0x45; 20]), libc::EBADFD, "write before TUNSETIFF");
    let mut buf = [0u8; 64];
    expect_errno!(fd_read(fd, &mut buf), libc::EBADFD, "read before TUNSETIFF");
    let mut lo = IfReq::new("lo", IFF_TUN | IFF_NO_PI);
    expect_errno!(ioctl_ptr(fd, TUNSETIFF, &mut lo), libc::EINVAL, "TUNSETIFF on lo (not ours)");
    let mut slash = IfReq::new("a/b", IFF_TUN | IFF_NO_PI);
    expect_errno!(ioctl_ptr(fd, TUNSETIFF, &mut slash), libc::EINVAL, "TUNSETIFF with an invalid name");

    let t = Tun::create(n.path, "rt-bad0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let mut again = IfReq::new("rt-bad1", IFF_TUN | IFF_NO_PI);
    expect_errno!(ioctl_ptr(t.fd(), TUNSETIFF, &mut again), libc::EEXIST, "TUNSETIFF twice on one fd");
    expect_errno!(ioctl_ptr(t.fd(), TUNGETIFF, 16usize as *mut IfReq), libc::EFAULT, "TUNGETIFF to an unmapped pointer");
    expect_errno!(ioctl_val(t.fd(), 0x54ff, 0), libc::EINVAL, "unknown ioctl");
    // The device still works after all that.
    check!(t.getiff().is_ok_and(|(name, _)| name == "rt-bad0"), "TUNGETIFF after bad ioctls");

    let f2 = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let mut tap_on_tun = IfReq::new("rt-bad0", IFF_TAP | IFF_NO_PI);
    expect_errno!(ioctl_ptr(f2.as_raw_fd(), TUNSETIFF, &mut tap_on_tun), libc::EINVAL, "IFF_TAP on a TUN device");
    let mut excl = IfReq::new("rt-bad0", IFF_TUN | IFF_NO_PI | IFF_TUN_EXCL);
    expect_errno!(ioctl_ptr(f2.as_raw_fd(), TUNSETIFF, &mut excl), libc::EBUSY, "IFF_TUN_EXCL on an existing device");
    let mut second = IfReq::new("rt-bad0", IFF_TUN | IFF_NO_PI);
    expect_errno!(ioctl_ptr(f2.as_raw_fd(), TUNSETIFF, &mut second), libc::EBUSY, "second queue on a single-queue device");
    Ok(())
}

fn t_bad_writes(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-bw0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up(&t.name, "10.15.0.1", "10.15.0.2")?;
    let d0 = stat(&t.name, "rx_dropped")?;
    expect_errno!(t.write(&[0x55; 20]), libc::EINVAL, "TUN write with IP version 5");
    expect_errno!(t.write(&[]), libc::EINVAL, "zero-length TUN write");
    check!(stat(&t.name, "rx_dropped")? == d0 + 2, "rx_dropped {} after two bad writes", stat(&t.name, "rx_dropped")?);
    expect_errno!(fd_write_raw(t.fd(), 16usize as *const u8, 40), libc::EFAULT, "write from an unmapped buffer");

    let tap = Tun::create(n.path, "rt-bw1", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-bw1 up")?;
    expect_errno!(tap.write(&[0u8; 13]), libc::EINVAL, "TAP write shorter than an Ethernet header");
    // Down device: EIO.
    sh("ip link set rt-bw1 down")?;
    let frame = pkt::eth([0xff; 6], [2, 0, 0, 0, 0, 1], pkt::ETH_P_IP, &[0x45; 28]);
    expect_errno!(tap.write(&frame), libc::EIO, "write to a down device");
    Ok(())
}

fn t_nonblock_poll(n: Node) -> TestResult {
    let t = Tun::create_nonblock(n.path, "rt-nb0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let mut buf = [0u8; 2048];
    expect_errno!(t.read(&mut buf), libc::EAGAIN, "non-blocking read of an empty queue");
    // Down: neither readable nor writable.
    let ev = poll_fd(t.fd(), libc::POLLIN | libc::POLLOUT, Duration::ZERO).map_err(|e| format!("poll: {e}"))?;
    check!(ev & (libc::POLLIN | libc::POLLOUT) == 0, "poll of a down device: {ev:#x}");
    ptp_up(&t.name, "10.16.0.1", "10.16.0.2")?;
    let ev = poll_fd(t.fd(), libc::POLLOUT, Duration::ZERO).map_err(|e| format!("poll: {e}"))?;
    check!(ev & libc::POLLOUT != 0, "poll of an up device lacks POLLOUT: {ev:#x}");
    // A packet from the stack makes it readable; a sleeping poll wakes.
    let t0 = Instant::now();
    let sender = thread::spawn(|| {
        thread::sleep(Duration::from_millis(200));
        udp_send("10.16.0.2", 1)
    });
    let ev = poll_fd(t.fd(), libc::POLLIN, Duration::from_secs(5)).map_err(|e| format!("poll: {e}"))?;
    sender.join().map_err(|_| "sender panicked")??;
    check!(ev & libc::POLLIN != 0, "no POLLIN after a packet: {ev:#x}");
    check!(t0.elapsed() < Duration::from_secs(4), "poll woke late");
    let got = t.read(&mut buf).map_err(|e| format!("read: {e}"))?;
    check!(pkt::parse_ipv4(&buf[..got]).is_some_and(|ip| ip.proto == pkt::IPPROTO_UDP), "not the UDP packet");
    Ok(())
}

/// Sends `count` UDP datagrams to `dst`:9.
fn udp_send(dst: &str, count: usize) -> TestResult {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").map_err(|e| e.to_string())?;
    for i in 0..count {
        s.send_to(&(i as u32).to_be_bytes(), format!("{dst}:9")).map_err(|e| format!("send {i}: {e}"))?;
    }
    Ok(())
}

/// Sends one UDP datagram to `dst`:9000+i for each i (drain_ports then
/// reads 9000+i back).
fn udp_send_ports(dst: &str, ports: std::ops::Range<u16>) -> TestResult {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").map_err(|e| e.to_string())?;
    for i in ports {
        s.send_to(b"p", format!("{dst}:{}", 9000 + i)).map_err(|e| format!("send {i}: {e}"))?;
    }
    Ok(())
}

/// The calling thread's id.
fn gettid() -> i32 {
    // SAFETY: No arguments, always succeeds.
    unsafe { libc::gettid() }
}

/// Waits until thread `tid` of this process sleeps (state `S` in
/// /proc/self/task/TID/stat): it is blocked, not merely slow to start.
fn wait_blocked(tid: i32) -> TestResult {
    let t0 = Instant::now();
    loop {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap_or_default();
        // The state follows the parenthesised command name.
        let state = stat.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().next());
        if state == Some("S") {
            return Ok(());
        }
        check!(t0.elapsed() < Duration::from_secs(5), "thread {tid} never blocked (state {state:?})");
        thread::sleep(Duration::from_millis(10));
    }
}

/// Waits up to 2 s for /sys/class/net/NAME/ATTR to read `want` (operstate
/// follows carrier through the linkwatch work, not at once).
fn wait_sysfs(name: &str, attr: &str, want: &str) -> bool {
    let t0 = Instant::now();
    while sysfs(name, attr) != want {
        if t0.elapsed() > Duration::from_secs(2) {
            return false;
        }
        thread::sleep(Duration::from_millis(20));
    }
    true
}

/// IP header and truncation errors so far (/proc/net/snmp).
fn ip_in_errors() -> Result<u64, String> {
    let text = std::fs::read_to_string("/proc/net/snmp").map_err(|e| e.to_string())?;
    let mut ip = text.lines().filter(|l| l.starts_with("Ip:"));
    let (names, values) = (ip.next().ok_or("no Ip: header")?, ip.next().ok_or("no Ip: values")?);
    let mut sum = 0;
    for (n, v) in names.split_whitespace().zip(values.split_whitespace()) {
        if n == "InHdrErrors" || n == "InTruncatedPkts" {
            sum += v.parse::<u64>().map_err(|e| e.to_string())?;
        }
    }
    Ok(sum)
}

/// A blocked reader wakes for a packet.
fn t_blocking_read(n: Node) -> TestResult {
    let t = Arc::new(Tun::create(n.path, "rt-blk0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?);
    ptp_up(&t.name, "10.17.0.1", "10.17.0.2")?;
    let t2 = t.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = thread::spawn(move || {
        let _ = tx.send(gettid());
        let mut buf = [0u8; 2048];
        t2.read(&mut buf)
    });
    let tid = rx.recv().map_err(|e| e.to_string())?;
    wait_blocked(tid)?;
    udp_send("10.17.0.2", 1)?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while !reader.is_finished() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    check!(reader.is_finished(), "blocked reader not woken");
    let n = reader.join().map_err(|_| "reader panicked")?.map_err(|e| format!("read: {e}"))?;
    check!(n == 20 + 8 + 4, "read {n} bytes");
    Ok(())
}
/// The ring holds tx_queue_len packets; the rest are dropped and counted.
fn t_ring_full(n: Node) -> TestResult {
    let t = Tun::create_nonblock(n.path, "rt-ring0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up(&t.name, "10.18.0.1", "10.18.0.2")?;
    let d0 = stat(&t.name, "tx_dropped")?;
    udp_send("10.18.0.2", 600)?;
    let mut buf = [0u8; 2048];
    let mut queued = 0;
    loop {
        match t.read(&mut buf) {
            Ok(_) => queued += 1,
            Err(libc::EAGAIN) => break,
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    let dropped = stat(&t.name, "tx_dropped")? - d0;
    check!(queued == 500, "{queued} packets queued, expected tx_queue_len 500");
    check!(dropped == 100, "{dropped} counted as tx_dropped, expected 100");
    check!(stat(&t.name, "tx_packets")? == 500, "tx_packets {}", stat(&t.name, "tx_packets")?);
    Ok(())
}

fn t_ethtool(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-eth0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let (driver, _) = ethtool_info(&t.name).map_err(|e| format!("SIOCETHTOOL: {e}"))?;
    check!(driver == n.driver, "driver {driver}, expected {}", n.driver);
    sh(&format!("ip link set {} up", t.name))?;
    let (_, link) = ethtool_info(&t.name).map_err(|e| format!("SIOCETHTOOL: {e}"))?;
    check!(link == 1, "link {link} on an up device with carrier");
    check!(sysfs(&t.name, "carrier") == "1", "carrier {}", sysfs(&t.name, "carrier"));
    Ok(())
}

/// TUNSETPERSIST keeps a device without files (up, it has no carrier),
/// pins the module, and the device can be re-attached by name.
fn t_persist(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-per0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    check!(t.getiff().is_ok_and(|(_, f)| f & IFF_PERSIST != 0), "IFF_PERSIST not reported");
    drop(t);
    check!(link_exists("rt-per0"), "persistent device gone after close");
    sh("ip link set rt-per0 up")?;
    check!(sysfs("rt-per0", "carrier") == "0", "carrier {:?} with no file attached", sysfs("rt-per0", "carrier"));
    check!(wait_sysfs("rt-per0", "operstate", "down"), "operstate {:?} with no file attached", sysfs("rt-per0", "operstate"));
    check!(sh(&format!("rmmod {}", n.module)).is_err(), "rmmod succeeded with a persistent device");
    check!(link_exists("rt-per0"), "device gone after refused rmmod");
    let t = Tun::create(n.path, "rt-per0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("re-attach: {e}"))?;
    check!(sysfs("rt-per0", "carrier") == "1", "carrier {:?} with a file attached", sysfs("rt-per0", "carrier"));
    check!(wait_sysfs("rt-per0", "operstate", "up"), "operstate {:?} with a file attached", sysfs("rt-per0", "operstate"));
    ioctl_val(t.fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST 0: {e}"))?;
    drop(t);
    check!(!link_exists("rt-per0"), "non-persistent device left after close");
    Ok(())
}

/// Deleting a persistent device under an attached reader wakes the reader
/// with EFAULT (tun: `RCV_SHUTDOWN`), and the file then reports EBADFD.
fn t_delete_under_reader(n: Node) -> TestResult {
    let t = Arc::new(Tun::create(n.path, "rt-del0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?);
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    let t2 = t.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = thread::spawn(move || {
        let _ = tx.send(gettid());
        let mut buf = [0u8; 2048];
        t2.read(&mut buf)
    });
    wait_blocked(rx.recv().map_err(|e| e.to_string())?)?;
    sh("ip link del rt-del0")?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while !reader.is_finished() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    check!(reader.is_finished(), "reader not woken by device deletion");
    expect_errno!(reader.join().map_err(|_| "reader panicked")?, libc::EFAULT, "the blocked read");
    check!(!link_exists("rt-del0"), "device still there");
    expect_errno!(t.getiff(), libc::EBADFD, "TUNGETIFF after deletion");
    expect_errno!(t.write(&[0x45; 20]), libc::EBADFD, "write after deletion");
    let mut buf = [0u8; 64];
    expect_errno!(t.read(&mut buf), libc::EBADFD, "read after deletion");
    Ok(())
}
/// rmmod with an open fd is refused and harmless; after close it works.
fn t_unload_with_open_fd(_: Node) -> TestResult {
    load("rust_tun")?;
    let t = Tun::create(RUST_NODE, "rt-unl0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let f = Tun::open_node(RUST_NODE).map_err(|e| e.to_string())?;
    check!(sh("rmmod rust_tun").is_err(), "rmmod succeeded with open files");
    check!(module_loaded("rust_tun"), "module gone");
    check!(t.getiff().is_ok(), "device broken after refused rmmod");
    ptp_up(&t.name, "10.19.0.1", "10.19.0.2")?;
    let req = pkt::ipv4([10, 19, 0, 2], [10, 19, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 1, 1, b"x"));
    t.write(&req).map_err(|e| format!("write: {e}"))?;
    read_until(&t, Duration::from_secs(3), |p| pkt::parse_ipv4(p).is_some_and(|ip| ip.proto == pkt::IPPROTO_ICMP))?;
    drop(t);
    drop(f);
    sh("rmmod rust_tun")?;
    check!(!module_loaded("rust_tun"), "module still loaded");
    check!(!link_exists("rt-unl0"), "device left after unload");
    load("rust_tun")
}

// ---------------------------------------------------------------------------
// Multi-queue, flows, static keys.

const DEBUGFS: &str = "/sys/kernel/debug/rust_tun";
const RPS_SOCK_FLOW_ENTRIES: &str = "/proc/sys/net/core/rps_sock_flow_entries";
const LO_RPS_CPUS: &str = "/sys/class/net/lo/queues/rx-0/rps_cpus";
const UNGUARDED_PARAM: &str = "/sys/module/rust_tun/parameters/unguarded";
const FLOW_AGEING_PARAM: &str = "/sys/module/rust_tun/parameters/flow_ageing_ms";

fn write_file(path: &str, val: &str) -> TestResult {
    std::fs::write(path, val).map_err(|e| format!("write {val} to {path}: {e}"))
}

/// Puts the RPS/RFS knobs back to off (both static keys disabled).
fn keys_off() -> TestResult {
    write_file(RPS_SOCK_FLOW_ENTRIES, "0")?;
    write_file(LO_RPS_CPUS, "0")
}

/// `<debugfs>/rust_tun/DEV/stats` as (key, value) pairs.
fn dbg_stat(dev: &str, key: &str) -> Result<String, String> {
    let path = format!("{DEBUGFS}/{dev}/stats");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    text.lines()
        .find_map(|l| l.strip_prefix(key).and_then(|v| v.strip_prefix(' ')).map(str::to_string))
        .ok_or_else(|| format!("{key} not in {path}: {text}"))
}

fn dbg_count(dev: &str, key: &str) -> Result<u64, String> {
    dbg_stat(dev, key)?.parse().map_err(|e| format!("{key}: {e}"))
}

/// One line of `<debugfs>/rust_tun/DEV/flows`.
#[derive(Debug)]
struct FlowLine {
    rps_rxhash: u32,
    queue: u16,
    rfs_ent: Option<u32>,
}

fn dbg_flows(dev: &str) -> Result<(usize, Vec<FlowLine>), String> {
    let path = format!("{DEBUGFS}/{dev}/flows");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let mut lines = text.lines();
    let count = lines
        .next()
        .and_then(|l| l.strip_prefix("flow_count "))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("bad {path}"))?;
    let mut flows = Vec::new();
    for l in lines {
        let field = |k: &str| {
            l.split(' ')
                .find_map(|f| f.strip_prefix(k))
                .ok_or_else(|| format!("no {k} in {l}"))
        };
        let hex = |v: &str| u32::from_str_radix(v, 16).map_err(|e| format!("{l}: {e}"));
        let rfs = field("rfs_ent=")?;
        flows.push(FlowLine {
            rps_rxhash: hex(field("rps_rxhash=")?)?,
            queue: field("queue=")?.parse().map_err(|e| format!("{l}: {e}"))?,
            rfs_ent: if rfs == "none" { None } else { Some(hex(rfs)?) },
        });
    }
    Ok((count, flows))
}

/// Whether the loaded module's guards are jump-label sites.
fn jump_labels() -> Result<bool, String> {
    let path = format!("{DEBUGFS}/jump_sites");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    match text.lines().next() {
        Some("jump_labels=1") => Ok(true),
        Some("jump_labels=0") => Ok(false),
        other => Err(format!("{path}: first line {other:?}")),
    }
}

/// `<debugfs>/rust_tun/jump_sites` as (key, insn) pairs.
fn jump_sites() -> Result<Vec<(String, String)>, String> {
    let path = format!("{DEBUGFS}/jump_sites");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    Ok(text
        .lines()
        .skip(1)
        .map(|l| {
            let get = |k: &str| l.split(' ').find_map(|f| f.strip_prefix(k)).unwrap_or("").to_string();
            (get("key="), get("insn="))
        })
        .collect())
}

/// Checks that every site of `key` holds `insn`, and that there is one.
fn sites_are(key: &str, insn: &str) -> TestResult {
    let sites = jump_sites()?;
    let mine: Vec<_> = sites.iter().filter(|(k, _)| k == key).collect();
    check!(!mine.is_empty(), "no jump site for {key}: {sites:?}");
    check!(mine.iter().all(|(_, i)| i == insn), "{key} sites are not all {insn}: {sites:?}");
    Ok(())
}

/// Opens `n` queues of a multi-queue device.
fn mq_open(node: &str, name: &str, flags: u16, n: usize) -> Result<Vec<Tun>, String> {
    (0..n)
        .map(|i| Tun::create(node, name, flags | IFF_MULTI_QUEUE).map_err(|e| format!("queue {i}: TUNSETIFF: {e}")))
        .collect()
}

fn tx_queues(name: &str) -> usize {
    std::fs::read_dir(format!("/sys/class/net/{name}/queues"))
        .map(|d| d.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("tx-")).count())
        .unwrap_or(0)
}

fn setqueue(t: &Tun, flags: u16) -> Result<i32, i32> {
    let mut ifr = IfReq::new("", flags);
    ioctl_ptr(t.fd(), TUNSETQUEUE, &mut ifr)
}

/// Pins the calling thread to `cpu`.
fn pin_to_cpu(cpu: usize) -> TestResult {
    // SAFETY: A zeroed cpu_set_t is an empty set; CPU_SET fills it in.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: Valid set for the calling thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    check!(r == 0, "sched_setaffinity: errno {}", errno());
    Ok(())
}

/// A UDP/IPv4 packet from `src`:`sport` to `dst`:`dport`.
fn udp_pkt(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16) -> Vec<u8> {
    pkt::ipv4(src, dst, pkt::IPPROTO_UDP, &pkt::udp(sport, dport, b"flow"))
}

/// Reads everything queued on a non-blocking queue: the UDP destination ports.
fn drain_ports(t: &Tun) -> Vec<u16> {
    let mut buf = [0u8; 2048];
    let mut ports = Vec::new();
    while let Ok(n) = t.read(&mut buf) {
        if let Some((_, d)) = pkt::udp_ports(&buf[..n]) {
            ports.push(d);
        }
    }
    ports
}

fn t_mq_attach_detach(n: Node) -> TestResult {
    let q = mq_open(n.path, "rt-mq0", IFF_TAP | IFF_NO_PI, 4)?;
    check!(tx_queues("rt-mq0") == 4, "{} tx queues with 4 files", tx_queues("rt-mq0"));
    let sq = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let mut ifr = IfReq::new("rt-mq0", IFF_TAP | IFF_NO_PI);
    expect_errno!(ioctl_ptr(sq.as_raw_fd(), TUNSETIFF, &mut ifr), libc::EINVAL, "single-queue attach to a multi-queue device");

    setqueue(&q[1], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    check!(tx_queues("rt-mq0") == 3, "{} tx queues after a detach", tx_queues("rt-mq0"));
    check!(q[1].getiff().is_ok_and(|(_, f)| f & IFF_DETACH_QUEUE != 0), "IFF_DETACH_QUEUE not reported");
    check!(q[0].getiff().is_ok_and(|(_, f)| f & IFF_DETACH_QUEUE == 0), "IFF_DETACH_QUEUE on an attached queue");
    expect_errno!(setqueue(&q[1], IFF_DETACH_QUEUE), libc::EINVAL, "detaching a detached queue");
    setqueue(&q[1], IFF_ATTACH_QUEUE).map_err(|e| format!("TUNSETQUEUE attach: {e}"))?;
    check!(tx_queues("rt-mq0") == 4, "{} tx queues after re-attach", tx_queues("rt-mq0"));
    expect_errno!(setqueue(&q[0], IFF_ATTACH_QUEUE), libc::EINVAL, "attaching an attached queue");
    expect_errno!(setqueue(&q[0], 0), libc::EINVAL, "TUNSETQUEUE without a flag");

    // Closing a detached queue, then the rest, removes the device.
    setqueue(&q[3], IFF_DETACH_QUEUE).map_err(|e| format!("TUNSETQUEUE detach: {e}"))?;
    drop(q);
    check!(!link_exists("rt-mq0"), "device left after closing every queue");

    let single = Tun::create(n.path, "rt-sq0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    expect_errno!(setqueue(&single, IFF_DETACH_QUEUE), libc::EINVAL, "detaching a single-queue device");
    Ok(())
}

fn t_mq_queue_limit(n: Node) -> TestResult {
    let q = mq_open(n.path, "rt-mq1", IFF_TUN | IFF_NO_PI, 256)?;
    check!(tx_queues("rt-mq1") == 256, "{} tx queues", tx_queues("rt-mq1"));
    expect_errno!(
        Tun::create(n.path, "rt-mq1", IFF_TUN | IFF_NO_PI | IFF_MULTI_QUEUE),
        libc::E2BIG,
        "the 257th queue"
    );
    drop(q);
    check!(!link_exists("rt-mq1"), "device left");
    Ok(())
}

/// Flows written on queue k map to k; the reverse traffic of a flow is read
/// on k; detach drops the queue's flows; idle flows age out after 3 s.
fn t_mq_flows(n: Node) -> TestResult {
    keys_off()?;
    let q = mq_open(n.path, "rt-mqf", IFF_TUN | IFF_NO_PI, 2)?;
    for t in &q {
        // SAFETY: Setting O_NONBLOCK on our fd.
        unsafe { libc::fcntl(t.fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    }
    ptp_up("rt-mqf", "10.31.0.1", "10.31.0.2")?;
    let sock = std::net::UdpSocket::bind("10.31.0.1:7000").map_err(|e| e.to_string())?;
    let port = |k: usize, f: usize| (1000 + 100 * k + f) as u16;
    for k in 0..2 {
        for f in 0..5 {
            q[k].write(&udp_pkt([10, 31, 0, 2], port(k, f), [10, 31, 0, 1], 7000)).map_err(|e| format!("write: {e}"))?;
        }
    }
    let (count, flows) = dbg_flows("rt-mqf")?;
    check!(count == 10, "flow_count {count}, expected 10");
    for k in 0..2u16 {
        let on_k = flows.iter().filter(|f| f.queue == k).count();
        check!(on_k == 5, "{on_k} flows on queue {k}: {flows:?}");
    }
    for t in &q {
        drain_ports(t);
    }
    // The stack's replies follow their flow's queue.
    for k in 0..2 {
        for f in 0..5 {
            sock.send_to(b"back", format!("10.31.0.2:{}", port(k, f))).map_err(|e| e.to_string())?;
        }
    }
    thread::sleep(Duration::from_millis(100));
    for k in 0..2 {
        let mut got = drain_ports(&q[k]);
        got.sort();
        let want: Vec<u16> = (0..5).map(|f| port(k, f)).collect();
        check!(got == want, "queue {k} read ports {got:?}, expected {want:?}");
    }
    let (_, flows) = dbg_flows("rt-mqf")?;
    check!(flows.iter().all(|f| f.rps_rxhash != 0), "transmit did not save rps_rxhash: {flows:?}");

    // Detaching queue 1 drops its flows; re-attaching brings no flows back.
    setqueue(&q[1], IFF_DETACH_QUEUE).map_err(|e| format!("detach: {e}"))?;
    let (count, flows) = dbg_flows("rt-mqf")?;
    check!(count == 5 && flows.iter().all(|f| f.queue == 0), "after detach: {count} {flows:?}");
    setqueue(&q[1], IFF_ATTACH_QUEUE).map_err(|e| format!("attach: {e}"))?;
    q[1].write(&udp_pkt([10, 31, 0, 2], 4242, [10, 31, 0, 1], 7000)).map_err(|e| format!("write: {e}"))?;
    let (count, _) = dbg_flows("rt-mqf")?;
    check!(count == 6, "flow_count {count} after re-attach and a new flow");

    // Ageing: 3 s after the last write, by a timer that rounds up to a
    // second: gone within 4 s of the last write on an idle guest, plus
    // ten times the polls' own timer lateness (wait_flows_aged). Flows are
    // never gone early: the guest's clock and jiffies move together.
    let idle = Instant::now();
    let late = wait_flows_aged("rt-mqf", idle, Duration::from_secs(4), Duration::from_millis(200))?;
    println!("# flows aged out {:?} after the last write (timer lateness up to {late:?})", idle.elapsed());
    check!(idle.elapsed() >= Duration::from_secs(3), "flows aged out after only {:?}", idle.elapsed());
    Ok(())
}

/// A queue leaving from the middle: the last queue takes its index (as in
/// tun.c), the departed queue's flows go, and the moved queue's flows
/// follow it to its new index, so the replies of its flows still reach its
/// file (rust_tun's deliberate difference: tun.c deletes the flows of an
/// index no queue has and leaves the moved queue's flows pointing at its
/// old index).
fn t_mq_flows_move(n: Node) -> TestResult {
    keys_off()?;
    let q = mq_open(n.path, "rt-mqm", IFF_TUN | IFF_NO_PI, 3)?;
    for t in &q {
        // SAFETY: Setting O_NONBLOCK on our fd.
        unsafe { libc::fcntl(t.fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    }
    ptp_up("rt-mqm", "10.36.0.1", "10.36.0.2")?;
    let sock = std::net::UdpSocket::bind("10.36.0.1:7000").map_err(|e| e.to_string())?;
    let port = |k: usize, f: usize| (2000 + 100 * k + f) as u16;
    for (k, t) in q.iter().enumerate() {
        for f in 0..4 {
            t.write(&udp_pkt([10, 36, 0, 2], port(k, f), [10, 36, 0, 1], 7000)).map_err(|e| format!("write: {e}"))?;
        }
    }
    check!(dbg_flows("rt-mqm")?.0 == 12, "flow_count {}", dbg_flows("rt-mqm")?.0);
    // Queue 0 leaves; queue 2 takes index 0.
    setqueue(&q[0], IFF_DETACH_QUEUE).map_err(|e| format!("detach: {e}"))?;
    let (count, flows) = dbg_flows("rt-mqm")?;
    check!(count == 8, "flow_count {count} after queue 0 left");
    let on = |i: u16| flows.iter().filter(|f| f.queue == i).count();
    check!(on(0) == 4 && on(1) == 4 && on(2) == 0, "flows per queue 0/1/2: {}/{}/{}", on(0), on(1), on(2));
    for t in &q {
        drain_ports(t);
    }
    for f in 0..4 {
        sock.send_to(b"back", format!("10.36.0.2:{}", port(2, f))).map_err(|e| e.to_string())?;
    }
    thread::sleep(Duration::from_millis(100));
    let mut got = drain_ports(&q[2]);
    got.sort();
    check!(got == (0..4).map(|f| port(2, f)).collect::<Vec<_>>(), "the moved queue read {got:?}");
    Ok(())
}

/// `mq_open()` of a device created while `flow_ageing_ms` is `ms`: its
/// flows age after `ms` (the parameter is read at creation). The parameter
/// goes back to its default whatever the open did.
fn mq_open_ageing(n: Node, name: &str, flags: u16, queues: usize, ms: u32) -> Result<Vec<Tun>, String> {
    write_file(FLOW_AGEING_PARAM, &ms.to_string())?;
    let q = mq_open(n.path, name, flags, queues);
    write_file(FLOW_AGEING_PARAM, "3000")?;
    q
}

/// Waits for `dev`'s flows to age out, polling every `step`; fails once
/// `since` is `bound` old plus ten times the worst lateness of the polls'
/// own sleeps (a loaded host delays the guest's timers alike: the same
/// boot's timers, the same load). Returns the worst lateness.
fn wait_flows_aged(dev: &str, since: Instant, bound: Duration, step: Duration) -> Result<Duration, String> {
    let mut late = Duration::ZERO;
    loop {
        let (count, _) = dbg_flows(dev)?;
        if count == 0 {
            return Ok(late);
        }
        let bound = bound + late * 10;
        check!(since.elapsed() < bound, "{count} flows left after {:?} (bound {bound:?})", since.elapsed());
        let t0 = Instant::now();
        thread::sleep(step);
        late = late.max(t0.elapsed().saturating_sub(step));
    }
}

fn t_flow_limit(n: Node) -> TestResult {
    keys_off()?;
    // Flows of a device created now live 10 min without a packet, so the
    // table fills however slowly this kernel writes (a debug kernel takes
    // longer than the default 3 s for 4097 writes).
    let q = mq_open_ageing(n, "rt-flim", IFF_TUN | IFF_NO_PI, 2, 600_000)?;
    ptp_up("rt-flim", "10.32.0.1", "10.32.0.2")?;
    let _sink = std::net::UdpSocket::bind("10.32.0.1:7000").map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    for i in 0..4097u32 {
        let src = [10, 32, (i >> 8) as u8 + 1, i as u8];
        q[0].write(&udp_pkt(src, 5000, [10, 32, 0, 1], 7000)).map_err(|e| format!("write {i}: {e}"))?;
    }
    println!("# 4097 flows written in {:?}", t0.elapsed());
    let (count, flows) = dbg_flows("rt-flim")?;
    check!(count == 4096, "flow_count {count}, expected MAX_TAP_FLOWS 4096");
    check!(flows.len() == 4096, "{} flow lines", flows.len());
    check!(dbg_count("rt-flim", "flow_count")? == 4096, "stats flow_count disagrees");
    Ok(())
}

/// The `flow_ageing_ms` parameter: values outside 100 ms .. 10 min and
/// garbage are refused with EINVAL (one too large for 32 bits with
/// ERANGE, kstrtouint's) and leave it as it was; a device ages
/// its flows with the value it was created with.
fn t_flow_ageing_param(n: Node) -> TestResult {
    keys_off()?;
    let read = || std::fs::read_to_string(FLOW_AGEING_PARAM).map(|s| s.trim().to_string()).map_err(|e| e.to_string());
    check!(read()? == "3000", "default {}", read()?);
    for (bad, want) in
        [("0", libc::EINVAL), ("99", libc::EINVAL), ("600001", libc::EINVAL), ("-1", libc::EINVAL), ("abc", libc::EINVAL), ("1000x", libc::EINVAL), ("4294967296", libc::ERANGE)]
    {
        let r = std::fs::write(FLOW_AGEING_PARAM, bad);
        check!(r.as_ref().is_err_and(|e| e.raw_os_error() == Some(want)), "writing {bad:?}: {r:?}, expected errno {want}");
        check!(read()? == "3000", "after writing {bad:?}: {}", read()?);
    }
    let q = mq_open_ageing(n, "rt-fage", IFF_TUN | IFF_NO_PI, 2, 500)?;
    ptp_up("rt-fage", "10.37.0.1", "10.37.0.2")?;
    let _sink = std::net::UdpSocket::bind("10.37.0.1:7000").map_err(|e| e.to_string())?;
    q[0].write(&udp_pkt([10, 37, 0, 2], 5000, [10, 37, 0, 1], 7000)).map_err(|e| format!("write: {e}"))?;
    let written = Instant::now();
    check!(dbg_flows("rt-fage")?.0 == 1, "no flow after a write");
    // 500 ms, rounded up to a second by the timer: gone well before the
    // default 3 s would let it go (on a guest that is not starved).
    wait_flows_aged("rt-fage", written, Duration::from_millis(2500), Duration::from_millis(50))?;
    let aged = written.elapsed();
    println!("# a 500 ms device aged its flow after {aged:?}");
    check!(aged >= Duration::from_millis(500), "aged after only {aged:?}");
    Ok(())
}

/// `tx_queue_len` is the ring's size: shrinking a ring that holds packets
/// keeps the oldest that fit (ptr_ring_resize) and frees the rest; growing
/// it keeps them all.
fn t_txqlen(n: Node) -> TestResult {
    let t = Tun::create_nonblock(n.path, "rt-ql0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up(&t.name, "10.33.0.1", "10.33.0.2")?;
    sh("ip link set rt-ql0 qlen 10")?;
    udp_send("10.33.0.2", 25)?;
    check!(drain_ports(&t).len() == 10, "queued with txqueuelen 10");
    check!(stat("rt-ql0", "tx_dropped")? == 15, "tx_dropped {}", stat("rt-ql0", "tx_dropped")?);
    // 10 packets queued (ports 0..9 in payload order), then shrink to 4.
    udp_send_ports("10.33.0.2", 0..10)?;
    let d0 = stat("rt-ql0", "tx_dropped")?;
    sh("ip link set rt-ql0 qlen 4")?;
    let kept = drain_ports(&t);
    check!(kept == [9000, 9001, 9002, 9003], "kept {kept:?} after shrinking to 4");
    if n.module == "rust_tun" {
        // Deliberate difference: tun.c frees them without counting.
        check!(stat("rt-ql0", "tx_dropped")? == d0 + 6, "tx_dropped +{}", stat("rt-ql0", "tx_dropped")? - d0);
    }
    // Grow with packets queued: all stay, in order.
    udp_send_ports("10.33.0.2", 0..4)?;
    sh("ip link set rt-ql0 qlen 100")?;
    udp_send_ports("10.33.0.2", 4..8)?;
    let kept = drain_ports(&t);
    check!(kept == (9000..9008).collect::<Vec<_>>(), "after growing: {kept:?}");
    Ok(())
}
/// TUNSETOWNER/TUNSETGROUP and tun's permission rules, with unprivileged
/// callers (another uid, no capabilities).
fn t_owner_group(n: Node) -> TestResult {
    let as_user = |uid: u32, gid: u32, name: &str| -> i32 {
        use std::os::unix::process::CommandExt;
        Command::new("/bin/rtun")
            .args(["attach", n.path, name])
            .uid(uid)
            .gid(gid)
            .status()
            .map(|s| s.code().unwrap_or(-1))
            .unwrap_or(-1)
    };
    // As distributions' udev rules do for /dev/net/tun (rust_tun's node is
    // created 0666 already).
    sh(&format!("chmod 0666 {}", n.path))?;
    let t = Tun::create(n.path, "rt-own0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    ioctl_val(t.fd(), TUNSETOWNER, 1000).map_err(|e| format!("TUNSETOWNER: {e}"))?;
    expect_errno!(ioctl_val(t.fd(), TUNSETOWNER, u32::MAX as libc::c_ulong), libc::EINVAL, "TUNSETOWNER -1");
    drop(t);
    let code = as_user(1000, 1000, "rt-own0");
    check!(code == 0, "the owner could not attach: {code} ({})", errname(code));
    check!(as_user(1001, 1001, "rt-own0") == libc::EPERM, "another user attached");
    check!(as_user(1001, 1001, "rt-own-new") == libc::EPERM, "an unprivileged user created a device");
    check!(!link_exists("rt-own-new"), "device created");
    let t = Tun::create(n.path, "rt-own0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("re-attach: {e}"))?;
    ioctl_val(t.fd(), TUNSETGROUP, 2000).map_err(|e| format!("TUNSETGROUP: {e}"))?;
    drop(t);
    // With both set, both must match.
    let code = as_user(1000, 2000, "rt-own0");
    check!(code == 0, "owner in the group could not attach: {code} ({})", errname(code));
    check!(as_user(1001, 2000, "rt-own0") == libc::EPERM, "a group member that is not the owner attached");
    check!(as_user(1000, 1000, "rt-own0") == libc::EPERM, "the owner outside the group attached");
    let t = Tun::create(n.path, "rt-own0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("re-attach: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST 0: {e}"))?;
    Ok(())
}

/// The guard sites in the loaded module are NOPs while the keys are off and
/// JMPs to their targets while on, following both sysctls without reload.
fn t_jump_sites(_: Node) -> TestResult {
    keys_off()?;
    // What the kernel was built with decides (the host runner reads it from
    // the booted kernel's .config), not what the module says of itself.
    let flavor = std::fs::read_to_string("/etc/rtun-flavor").map_err(|e| e.to_string())?;
    let want = std::fs::read_to_string("/etc/rtun-jump-label").map_err(|e| e.to_string())?.trim() == "y";
    check!(jump_labels()? == want, "module reports jump_labels={}, the {} kernel has them: {want}", jump_labels()?, flavor.trim());
    if !want {
        // A kernel without jump labels: the guards read the keys' counts
        // (the guards tests check they still follow the sysctls), and the
        // module has no jump entries at all.
        let sites = jump_sites()?;
        check!(sites.is_empty(), "jump sites without jump labels: {sites:?}");
        println!("# no jump labels in this kernel: guards read the key counts");
        return Ok(());
    }
    sites_are("rps_needed", "nop")?;
    sites_are("rfs_needed", "nop")?;
    let sites = jump_sites()?;
    check!(sites.iter().all(|(k, _)| k == "rps_needed" || k == "rfs_needed"), "unknown sites: {sites:?}");
    write_file(RPS_SOCK_FLOW_ENTRIES, "32768")?;
    sites_are("rps_needed", "jmp")?;
    sites_are("rfs_needed", "jmp")?;
    write_file(RPS_SOCK_FLOW_ENTRIES, "0")?;
    sites_are("rps_needed", "nop")?;
    sites_are("rfs_needed", "nop")?;
    write_file(LO_RPS_CPUS, "1")?;
    sites_are("rps_needed", "jmp")?;
    sites_are("rfs_needed", "nop")?;
    keys_off()?;
    sites_are("rps_needed", "nop")?;
    sites_are("rfs_needed", "nop")
}

/// A single-queue device's transmit path and a multi-queue device's write
/// path, with a flow whose rps_rxhash is set. Returns (rps_hashes of the
/// single-queue device, rfs_records of the multi-queue device) after one
/// round of traffic, the flow written from CPU 1.
struct GuardRig {
    sq: Tun,
    mq: Vec<Tun>,
    sock: std::net::UdpSocket,
}

impl GuardRig {
    fn new(node: &str) -> Result<Self, String> {
        let sq = Tun::create_nonblock(node, "rt-gsq", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
        ptp_up("rt-gsq", "10.35.0.1", "10.35.0.2")?;
        let mq = mq_open(node, "rt-gmq", IFF_TUN | IFF_NO_PI, 2)?;
        for t in &mq {
            // SAFETY: Setting O_NONBLOCK on our fd.
            unsafe { libc::fcntl(t.fd(), libc::F_SETFL, libc::O_NONBLOCK) };
        }
        ptp_up("rt-gmq", "10.34.0.1", "10.34.0.2")?;
        let sock = std::net::UdpSocket::bind("10.34.0.1:7000").map_err(|e| e.to_string())?;
        let rig = GuardRig { sq, mq, sock };
        // Create the flow, then let the reply direction set its rps_rxhash.
        rig.write_flow(1)?;
        rig.sock.send_to(b"back", "10.34.0.2:5000").map_err(|e| e.to_string())?;
        thread::sleep(Duration::from_millis(50));
        check!(drain_ports(&rig.mq[1]) == [5000], "the reply did not come back on queue 1");
        let (_, flows) = dbg_flows("rt-gmq")?;
        check!(flows.len() == 1 && flows[0].rps_rxhash != 0 && flows[0].queue == 1, "flow: {flows:?}");
        Ok(rig)
    }

    /// Writes `count` packets of the flow on queue 1 from a thread on CPU 1.
    fn write_flow(&self, count: usize) -> TestResult {
        let fd = self.mq[1].fd();
        thread::scope(|s| {
            s.spawn(|| {
                pin_to_cpu(1)?;
                for _ in 0..count {
                    fd_write(fd, &udp_pkt([10, 34, 0, 2], 5000, [10, 34, 0, 1], 7000)).map_err(|e| format!("write: {e}"))?;
                }
                Ok(())
            })
            .join()
            .map_err(|_| "writer panicked".to_string())?
        })
    }

    /// One round: 10 packets out of the single-queue device, 10 written
    /// into the flow. Returns (rps_hashes, rfs_records).
    fn round(&self) -> Result<(u64, u64), String> {
        udp_send("10.35.0.2", 10)?;
        drain_ports(&self.sq);
        self.write_flow(10)?;
        let mut buf = [0u8; 2048];
        while self.sock.set_nonblocking(true).is_ok() && self.sock.recv(&mut buf).is_ok() {}
        Ok((dbg_count("rt-gsq", "rps_hashes")?, dbg_count("rt-gmq", "rfs_records")?))
    }
}

/// The micro-benchmark (`<debugfs>/rust_tun/micro_bench`) records into a
/// table of its own, not into the live RFS table, whose entries steer
/// received flows: with a global table of one entry (every hash shares it),
/// the entry a flow recorded is still there after a benchmark run (which
/// records hash 0x9e3779b9 tens of millions of times). The devices are
/// created with `flow_ageing_ms=600000`: the run takes longer than the
/// flow's 3 s on the debug kernel.
fn t_micro_bench_private_table(n: Node) -> TestResult {
    keys_off()?;
    write_file(FLOW_AGEING_PARAM, "600000")?;
    let rig = GuardRig::new(n.path);
    write_file(FLOW_AGEING_PARAM, "3000")?;
    let rig = rig?;
    write_file(RPS_SOCK_FLOW_ENTRIES, "1")?;
    let r = (|| {
        rig.round()?;
        let (_, flows) = dbg_flows("rt-gmq")?;
        let before = flows.first().and_then(|f| f.rfs_ent);
        check!(before.is_some(), "no RFS entry for the flow: {flows:?}");
        let out = std::fs::read_to_string(format!("{DEBUGFS}/micro_bench")).map_err(|e| format!("micro_bench: {e}"))?;
        check!(out.lines().filter(|l| l.starts_with("impl=rust ")).count() == 9, "micro_bench: {out}");
        let (_, flows) = dbg_flows("rt-gmq")?;
        let after = flows.first().and_then(|f| f.rfs_ent);
        check!(after == before, "the live RFS entry went from {before:08x?} to {after:08x?} during micro_bench (its hash: 9e3779b9)");
        Ok(())
    })();
    write_file(RPS_SOCK_FLOW_ENTRIES, "0")?;
    r
}

fn t_guards_rfs(n: Node) -> TestResult {
    keys_off()?;
    let rig = GuardRig::new(n.path)?;
    let (h, r) = rig.round()?;
    check!((h, r) == (0, 0), "keys off: rps_hashes {h}, rfs_records {r}");

    write_file(RPS_SOCK_FLOW_ENTRIES, "32768")?;
    let (h1, r1) = rig.round()?;
    check!(h1 >= 10, "rps_sock_flow_entries on: rps_hashes {h1}");
    check!(r1 == 10, "rps_sock_flow_entries on: rfs_records {r1}, expected 10");
    let (_, flows) = dbg_flows("rt-gmq")?;
    let f = &flows[0];
    // rps_cpu_mask is 1 with 2 CPUs: the entry is the hash with the
    // writer's CPU (1) in its low bit.
    check!(f.rfs_ent == Some((f.rps_rxhash & !1) | 1), "RFS entry {:x?} for hash {:08x} written on CPU 1", f.rfs_ent, f.rps_rxhash);

    write_file(RPS_SOCK_FLOW_ENTRIES, "0")?;
    let (h2, r2) = rig.round()?;
    check!((h2, r2) == (h1, r1), "keys off again: counters moved from ({h1}, {r1}) to ({h2}, {r2})");
    Ok(())
}

fn t_guards_rps_cpus(n: Node) -> TestResult {
    keys_off()?;
    let rig = GuardRig::new(n.path)?;
    write_file(LO_RPS_CPUS, "1")?;
    let (h1, r1) = rig.round()?;
    check!(h1 >= 10 && r1 == 0, "rps_cpus only: rps_hashes {h1}, rfs_records {r1}");
    write_file(LO_RPS_CPUS, "0")?;
    let (h2, r2) = rig.round()?;
    check!((h2, r2) == (h1, r1), "rps_cpus off again: counters moved to ({h2}, {r2})");
    Ok(())
}

fn t_unguarded(n: Node) -> TestResult {
    keys_off()?;
    write_file(UNGUARDED_PARAM, "1")?;
    let rig = GuardRig::new(n.path);
    write_file(UNGUARDED_PARAM, "0")?;
    let rig = rig?;
    check!(dbg_stat("rt-gsq", "mode")? == "unguarded", "mode {}", dbg_stat("rt-gsq", "mode")?);
    let (h, r) = rig.round()?;
    check!(h >= 10 && r == 10, "unguarded, keys off: rps_hashes {h}, rfs_records {r}");
    let g = Tun::create(n.path, "rt-gd0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    check!(dbg_stat(&g.name, "mode")? == "guarded", "a device created after the reset is not guarded");
    Ok(())
}

fn t_modinfo(_: Node) -> TestResult {
    let out = sh("modinfo rust_tun")?;
    check!(out.contains("parm:") && out.contains("unguarded:") && out.contains("rps_needed"), "modinfo: {out}");
    check!(out.contains("flow_ageing_ms:") && out.contains("TUN_FLOW_EXPIRE"), "modinfo: {out}");
    check!(out.contains("description:") && out.contains("license:"), "modinfo: {out}");
    // None of tun.ko's aliases: static, they would hold without dropin=1,
    // and with both modules installed modprobe would load both (the rst,
    // "Module aliases"; modprobe.d chooses: dropin_on_demand).
    for alias in ["char-major-10-200", "devname:net/tun", "rtnl-link-tun"] {
        check!(!out.contains(alias), "modinfo declares {alias}: {out}");
    }
    Ok(())
}

/// Seconds of the stress run (`RTUN_STRESS_SECS`, default 10).
fn stress_secs() -> u64 {
    std::env::var("RTUN_STRESS_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(10)
}

/// The seed of the stress run and the fuzzer (`RTUN_SEED`, default 1).
fn seed() -> u64 {
    std::env::var("RTUN_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1)
}

fn t_stress(n: Node) -> TestResult {
    load("pktgen")?;
    let out = Command::new("/bin/rtun")
        .args(["stress", n.path, &seed().to_string(), &stress_secs().to_string()])
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    println!("# stress: {}", text.trim());
    check!(out.status.success(), "stress failed: {text}");
    check!(!link_exists("rt-st0"), "stress device left behind");
    Ok(())
}

/// The differential fuzzer: one seeded sequence of operations against tun,
/// then rust_tun; every result must agree (divergences in what rust_tun
/// does not implement yet are listed, not failed).
fn t_fuzz_diff(_: Node) -> TestResult {
    load("tun")?;
    let iters = std::env::var("RTUN_FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(20000u64) / 10;
    let out = Command::new("/bin/rtun")
        .args(["fuzz-diff", &seed().to_string(), &iters.to_string()])
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    println!("# fuzz-diff: {}", text.trim());
    check!(out.status.success(), "fuzz-diff: {text}");
    Ok(())
}

fn t_fuzz(n: Node) -> TestResult {
    let iters = std::env::var("RTUN_FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(20000u64);
    let out = Command::new("/bin/rtun")
        .args(["fuzz", n.path, &seed().to_string(), &iters.to_string(), "3"])
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    println!("# fuzz: {}", text.trim());
    check!(out.status.success(), "fuzz failed: {text}");
    // Whatever the fuzzer left (it may have unloaded the module), the
    // driver still works.
    runner::teardown();
    load("rust_tun")?;
    let t = Tun::create(n.path, "rt-afz", IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF after fuzz: {e}"))?;
    ptp_up(&t.name, "10.51.0.1", "10.51.0.2")?;
    let req = pkt::ipv4([10, 51, 0, 2], [10, 51, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 3, 3, b"after"));
    t.write(&req).map_err(|e| format!("write: {e}"))?;
    read_until(&t, Duration::from_secs(3), |p| pkt::parse_ipv4(p).is_some_and(|ip| ip.proto == pkt::IPPROTO_ICMP))?;
    Ok(())
}

/// Hostile input: over-long and non-NUL-terminated names, bad name
/// formats, writes of odd sizes and garbage headers; each gets tun's errno
/// (or is accepted and dropped by the stack, as with tun) and the device
/// keeps working.
fn t_hostile_names(n: Node) -> TestResult {
    // 16 bytes, no NUL: tun forces ifr_name[15] = 0.
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let mut ifr = IfReq::new("", IFF_TUN | IFF_NO_PI);
    ifr.name = *b"rt-0123456789abc";
    ioctl_ptr(f.as_raw_fd(), TUNSETIFF, &mut ifr).map_err(|e| format!("TUNSETIFF 16-byte name: {e}"))?;
    check!(ifr.name() == "rt-0123456789ab", "name {:?}", ifr.name());
    check!(link_exists("rt-0123456789ab"), "truncated device missing");
    let f2 = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let mut bad = IfReq::new("rt-%d%d", IFF_TUN | IFF_NO_PI);
    expect_errno!(ioctl_ptr(f2.as_raw_fd(), TUNSETIFF, &mut bad), libc::EINVAL, "name with two %d");
    let mut dot = IfReq::new(".", IFF_TUN | IFF_NO_PI);
    expect_errno!(ioctl_ptr(f2.as_raw_fd(), TUNSETIFF, &mut dot), libc::EINVAL, "name '.'");
    Ok(())
}

fn t_hostile_writes(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-hw0", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    ptp_up(&t.name, "10.52.0.1", "10.52.0.2")?;
    let ping = pkt::ipv4([10, 52, 0, 2], [10, 52, 0, 1], pkt::IPPROTO_ICMP, &pkt::icmp_echo(8, 9, 9, b"ok?"));
    let with_pi = |proto: [u8; 2], p: &[u8]| {
        let mut w = vec![0, 0, proto[0], proto[1]];
        w.extend_from_slice(p);
        w
    };
    // A tun_pi naming a protocol nobody handles, a garbage IP header, a
    // length field that lies: the driver takes each whole (the write
    // returns its length, rx_packets counts it), the stack drops it (the
    // core counts the unknown protocol in rx_dropped, IP the other two).
    let c0 = counters(&t.name)?;
    let ip0 = ip_in_errors()?;
    let w = with_pi([0x12, 0x34], &ping);
    check!(t.write(&w) == Ok(w.len()), "write with an unknown tun_pi protocol");
    let mut garbage = ping.clone();
    garbage[0] = 0x4f; // IHL 15 with a 20-byte header
    let w = with_pi([8, 0], &garbage);
    check!(t.write(&w) == Ok(w.len()), "write with a garbage header");
    let mut liar = ping.clone();
    liar[2] = 0xff;
    let w = with_pi([8, 0], &liar);
    check!(t.write(&w) == Ok(w.len()), "write with a lying length");
    let c1 = counters(&t.name)?;
    check!(c1.rx_packets == c0.rx_packets + 3 && c1.rx_dropped == c0.rx_dropped + 1, "counters {c0:?} -> {c1:?}");
    check!(ip_in_errors()? == ip0 + 2, "IP header/truncation errors +{}, expected 2", ip_in_errors()? - ip0);
    expect_errno!(t.write(&[0, 0]), libc::EINVAL, "write shorter than tun_pi");
    // An MTU-sized packet is fine.
    let big = pkt::ipv4([10, 52, 0, 2], [10, 52, 0, 1], pkt::IPPROTO_UDP, &pkt::udp(1, 9, &[0u8; 1472]));
    check!(t.write(&with_pi([8, 0], &big)) == Ok(1504), "MTU-sized write");
    // The device still answers.
    t.write(&with_pi([8, 0], &ping)).map_err(|e| format!("write: {e}"))?;
    read_until(&t, Duration::from_secs(3), |p| {
        p.len() > 4 && pkt::parse_ipv4(&p[4..]).and_then(|ip| pkt::parse_icmp_echo(ip.payload)).is_some_and(|e| e.0 == 0 && e.1 == 9)
    })?;
    Ok(())
}

/// Writes larger than any frame: EMSGSIZE (rust_tun's documented
/// difference: tun.c builds a paged skb and lets the stack drop it). The
/// largest frame is taken whole.
fn t_oversized_write(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-big0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-big0 up")?;
    let c0 = counters("rt-big0")?;
    let huge = vec![0u8; 70000];
    expect_errno!(t.write(&huge), libc::EMSGSIZE, "70000-byte write");
    let max = vec![0u8; 65535 + 14 + 4];
    check!(t.write(&max) == Ok(max.len()), "a 65553-byte frame");
    let c1 = counters("rt-big0")?;
    check!(c1.rx_packets == c0.rx_packets + 1 && c1.rx_bytes == c0.rx_bytes + max.len() as u64, "{c0:?} -> {c1:?}");
    // The refused write is no packet; the zero-filled frame (ethertype 0,
    // nobody's) is dropped by the core, which counts it.
    check!(c1.rx_dropped == c0.rx_dropped + 1, "rx_dropped: {c0:?} -> {c1:?}");
    check!(t.getiff().is_ok(), "device broken");
    Ok(())
}
type TestFn = fn(Node) -> TestResult;

/// (name, test, nodes it runs on). ABI tests run on C tun too: same client,
/// same expectations, which is the proof that the ABIs agree.
const TESTS: &[(&str, TestFn, &[Node])] = &[
    ("load_unload", t_load_unload, &[RUST]),
    ("create_tun", t_create_tun, &[RUST, C]),
    ("create_tap", t_create_tap, &[RUST, C]),
    ("create_named", t_create_named, &[RUST, C]),
    ("features", t_features, &[RUST, C]),
    ("tun_round_trip", t_tun_round_trip, &[RUST, C]),
    ("tap_round_trip", t_tap_round_trip, &[RUST, C]),
    ("ping", t_ping, &[RUST, C]),
    ("tun_pi", t_tun_pi, &[RUST, C]),
    ("bad_ioctls", t_bad_ioctls, &[RUST, C]),
    ("bad_writes", t_bad_writes, &[RUST, C]),
    ("nonblock_poll", t_nonblock_poll, &[RUST, C]),
    ("blocking_read", t_blocking_read, &[RUST, C]),
    ("ring_full", t_ring_full, &[RUST, C]),
    ("ethtool", t_ethtool, &[RUST, C]),
    ("persist", t_persist, &[RUST, C]),
    ("delete_under_reader", t_delete_under_reader, &[RUST, C]),
    ("mq_attach_detach", t_mq_attach_detach, &[RUST, C]),
    ("mq_queue_limit", t_mq_queue_limit, &[RUST, C]),
    ("mq_delete_with_detached", queues::t_delete_with_detached, &[RUST, C]),
    ("mq_create_uevents", queues::t_mq_create_uevents, &[RUST, C]),
    ("txqlen_every_ring", queues::t_txqlen_every_ring, &[RUST, C]),
    ("mq_flows_follow_queues", t_mq_flows, &[RUST]),
    ("mq_flows_move_with_queue", t_mq_flows_move, &[RUST]),
    ("flow_limit", t_flow_limit, &[RUST]),
    ("flow_ageing_param", t_flow_ageing_param, &[RUST]),
    ("tx_queue_len_resizes_ring", t_txqlen, &[RUST, C]),
    ("owner_group_permissions", t_owner_group, &[RUST, C]),
    ("jump_sites_follow_keys", t_jump_sites, &[RUST]),
    ("guards_rfs_sysctl", t_guards_rfs, &[RUST]),
    ("guards_rps_cpus", t_guards_rps_cpus, &[RUST]),
    ("micro_bench_private_table", t_micro_bench_private_table, &[RUST]),
    ("unguarded_mode", t_unguarded, &[RUST]),
    ("modinfo_params", t_modinfo, &[RUST]),
    ("hostile_names", t_hostile_names, &[RUST, C]),
    ("hostile_writes", t_hostile_writes, &[RUST, C]),
    ("oversized_write", t_oversized_write, &[RUST]),
    ("stress", t_stress, &[RUST]),
    ("fuzz", t_fuzz, &[RUST]),
    ("fuzz_vs_tun", t_fuzz_diff, &[RUST]),
    ("unload_with_open_fd", t_unload_with_open_fd, &[RUST]),
    ("files_open_across_rmmod", hardening::t_files_open_across_rmmod, &[RUST]),
    ("debugfs_under_load", hardening::t_debugfs_under_load, &[RUST]),
    ("zerocopy_completion", hardening::t_zerocopy_completion, &[RUST, C]),
    ("tx_timestamp", hardening::t_tx_timestamp, &[RUST, C]),
    ("alloc_without_high_order", hardening::t_alloc_without_high_order, &[RUST, C]),
    ("large_writes_intact", hardening::t_large_writes_intact, &[RUST, C]),
    ("txqueuelen_zero", hardening::t_txqueuelen_zero, &[RUST, C]),
    ("pollout_on_up", hardening::t_pollout_on_up, &[RUST, C]),
    ("rwf_nowait", hardening::t_rwf_nowait, &[RUST, C]),
    ("flow_reuse_idle", hardening::t_flow_reuse_idle, &[RUST]),
    ("flow_table_lazy", hardening::t_flow_table_lazy, &[RUST]),
    ("userns_create", hardening::t_userns_create, &[RUST, C]),
    ("userns_foreign", hardening::t_userns_foreign, &[RUST, C]),
    ("netns_move", hardening::t_netns_move, &[RUST, C]),
    ("netns_exit", hardening::t_netns_exit, &[RUST, C]),
    ("delete_many_queues", hardening::t_delete_many_queues, &[RUST, C]),
    ("queue_attach_no_grace_period", hardening::t_queue_attach_no_grace_period, &[RUST, C]),
    ("blocking_readers_many_producers", behaviour::t_blocking_readers_many_producers, &[RUST, C]),
    ("epollet_reader_many_producers", behaviour::t_epollet_reader_many_producers, &[RUST, C]),
    ("signals_interrupt_read", behaviour::t_signals_interrupt_read, &[RUST, C]),
    ("iovecs", behaviour::t_iovecs, &[RUST, C]),
    ("short_read_no_pi", behaviour::t_short_read_no_pi, &[RUST, C]),
    ("remove_under_pktgen", behaviour::t_remove_under_pktgen, &[RUST, C]),
    ("carrier_operstate", behaviour::t_carrier_operstate, &[RUST, C]),
    ("mtu_under_traffic", behaviour::t_mtu_under_traffic, &[RUST, C]),
    ("ipv6_tun_no_pi", behaviour::t_ipv6_tun_no_pi, &[RUST, C]),
    ("vlan_on_tap", behaviour::t_vlan_on_tap, &[RUST, C]),
    ("fd_passing_fork", behaviour::t_fd_passing_fork, &[RUST, C]),
    ("flow_follows_writer", behaviour::t_flow_follows_writer, &[RUST, C]),
    ("busy_flow_no_ageing", behaviour::t_busy_flow_no_ageing, &[RUST, C]),
    ("txqlen_detached", behaviour::t_txqlen_detached, &[RUST, C]),
    ("read_exact_pi", behaviour::t_read_exact_pi, &[RUST, C]),
    ("sysfs_identity", abi::t_sysfs_identity, &[RUST, C]),
    ("link_info", abi::t_link_info, &[RUST, C]),
    ("fdinfo_iff", abi::t_fdinfo_iff, &[RUST, C]),
    ("ethtool_identity", abi::t_ethtool_identity, &[RUST, C]),
    ("ethtool_link_ksettings", ethtool::t_ethtool_link_ksettings, &[RUST, C]),
    ("ethtool_channels", ethtool::t_ethtool_channels, &[RUST, C]),
    ("ethtool_ts_info", ethtool::t_ethtool_ts_info, &[RUST, C]),
    ("ethtool_coalesce", ethtool::t_ethtool_coalesce, &[RUST, C]),
    ("rx_batched_writes", ethtool::t_rx_batched_writes, &[RUST, C]),
    ("tap_qinq_gso", ethtool::t_tap_qinq_gso, &[RUST, C]),
    ("sndbuf", abi::t_sndbuf, &[RUST, C]),
    ("carrier_abi", abi::t_carrier_abi, &[RUST, C]),
    ("setlink", abi::t_setlink, &[RUST, C]),
    ("setifindex", abi::t_setifindex, &[RUST, C]),
    ("netns_fds", abi::t_netns_fds, &[RUST, C]),
    ("txfilter", abi::t_txfilter, &[RUST, C]),
    ("txfilter_largest", abi::t_txfilter_largest, &[RUST, C]),
    ("attach_filter", abi::t_attach_filter, &[RUST, C]),
    ("getfilter_bytes", abi::t_getfilter_bytes, &[RUST, C]),
    ("fdinfo_bytes_name", abi::t_fdinfo_bytes_name, &[RUST, C]),
    ("misc_ioctls", abi::t_misc_ioctls, &[RUST, C]),
    ("state_notify", abi::t_state_notify, &[RUST, C]),
    ("excl_foreign", abi::t_excl_foreign, &[RUST, C]),
    ("header_ops", abi::t_header_ops, &[RUST, C]),
    ("napi_flags", abi::t_napi_flags, &[RUST, C]),
    ("hwaddr", abi::t_hwaddr, &[RUST, C]),
    ("sndbuf_all_queues", abi::t_sndbuf_all_queues, &[RUST, C]),
    ("setlink_addr_len", abi::t_setlink_addr_len, &[RUST, C]),
    ("fasync_sigio", fileops::t_fasync_sigio, &[RUST, C]),
    ("fasync_pollout", fileops::t_fasync_pollout, &[RUST, C]),
    ("read_pos", fileops::t_read_pos, &[RUST, C]),
    ("hwaddr_bytes", fileops::t_hwaddr_bytes, &[RUST, C]),
    ("queue_attach_filter", fileops::t_queue_attach_filter, &[RUST, C]),
    ("tunsetdebug_messages", fileops::t_tun_debug, &[RUST, C]),
    ("sock_file", fileops::t_sock_file, &[RUST]),
    ("vnet_basic", vnet::t_vnet_basic, &[RUST, C]),
    ("vnet_malformed", vnet::t_vnet_malformed, &[RUST, C]),
    ("vnet_malformed_tap", vnet::t_vnet_malformed_tap, &[RUST, C]),
    ("vnet_gso_udp_write", vnet::t_vnet_gso_udp_write, &[RUST, C]),
    ("vnet_gso_tcp_read", vnet::t_vnet_gso_tcp_read, &[RUST, C]),
    ("vnet_gso_udp_read", vnet::t_vnet_gso_udp_read, &[RUST, C]),
    ("vnet_settings_persist", vnet::t_vnet_settings_persist, &[RUST, C]),
    ("vnet_gso_udp6_write", vnet::t_vnet_gso_udp6_write, &[RUST, C]),
    ("vnet_gso_tcp_write", vnet::t_vnet_gso_tcp_write, &[RUST, C]),
    ("vnet_gso_tcp6_write", vnet::t_vnet_gso_tcp6_write, &[RUST, C]),
    ("napi", vnet::t_napi, &[RUST, C]),
    ("napi_frags", vnet::t_napi_frags, &[RUST, C]),
    ("napi_frags_delete_during_write", vnet::t_napi_frags_delete_during_write, &[RUST, C]),
    ("delete_under_writers", vnet::t_delete_under_writers, &[RUST, C]),
    ("vnet_tso6_read", vnet::t_vnet_tso6_read, &[RUST, C]),
    ("vnet_tso_ecn_read", vnet::t_vnet_tso_ecn_read, &[RUST, C]),
    ("vnet_uso_alone", vnet::t_vnet_uso_alone, &[RUST, C]),
    ("vnet_stats_headers", vnet::t_vnet_stats_headers, &[RUST, C]),
    ("napi_frags_frame_limit", vnet::t_napi_frags_frame_limit, &[RUST, C]),
    ("compat_32bit", clients::t_compat_32bit, &[RUST]),
    ("clients", clients::t_clients, &[C]),
    ("dropin_conflicts", clients::t_dropin_conflicts, &[DROPIN]),
    ("lsm_hooks", lsm::t_lsm_hooks, &[RUST]),
    ("dropin_on_demand", clients::t_dropin_on_demand, &[DROPIN]),
];

/// The write-path benchmark (issue 5, table 2): a two-queue TUN device on
/// `node`; `flows` distinct UDP flows, each created by a write and given an
/// `rps_rxhash` by one packet of the reverse direction; then `packets`
/// writes cycling over the flows, each on its flow's queue, from CPU 1,
/// timed with CLOCK_MONOTONIC (guest instructions under -icount). Prints
/// one `BENCH write` line.
fn bench_write(node: &str, name: &str, flows: u32, packets: u32) -> Result<String, String> {
    check!(flows > 0 && packets > 0, "FLOWS and PACKETS must be positive");
    let q = mq_open(node, name, IFF_TUN | IFF_NO_PI, 2)?;
    for t in &q {
        // SAFETY: Setting O_NONBLOCK on our fd.
        unsafe { libc::fcntl(t.fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    }
    ptp_up(name, "10.40.0.1", "10.40.0.2")?;
    // No ICMP errors for the writes to a closed port during the run.
    write_file("/proc/sys/net/ipv4/icmp_msgs_per_sec", "0")?;
    write_file("/proc/sys/net/ipv4/icmp_msgs_burst", "0")?;
    let sport = |f: u32| 10000 + f as u16;
    let pkts: Vec<Vec<u8>> = (0..flows).map(|f| udp_pkt([10, 40, 0, 2], sport(f), [10, 40, 0, 1], 7000)).collect();
    {
        let sock = std::net::UdpSocket::bind("10.40.0.1:7000").map_err(|e| e.to_string())?;
        for f in 0..flows {
            q[(f % 2) as usize].write(&pkts[f as usize]).map_err(|e| format!("write: {e}"))?;
        }
        for f in 0..flows {
            sock.send_to(b"back", format!("10.40.0.2:{}", sport(f))).map_err(|e| e.to_string())?;
        }
        thread::sleep(Duration::from_millis(20));
        for t in &q {
            drain_ports(t);
        }
    }
    pin_to_cpu(1)?;
    let fds = [q[0].fd(), q[1].fd()];
    let t0 = Instant::now();
    for i in 0..packets {
        let f = i % flows;
        fd_write(fds[(f % 2) as usize], &pkts[f as usize]).map_err(|e| format!("write {i}: {e}"))?;
    }
    let ns = t0.elapsed().as_nanos() as f64;
    Ok(format!(
        "BENCH write packets={packets} flows={flows} ns={ns:.0} pps={:.0} ns_per_packet={:.1}",
        f64::from(packets) * 1e9 / ns,
        ns / f64::from(packets)
    ))
}

/// `rtun mkdevs NODE PREFIX COUNT QUEUES`: creates COUNT persistent TAP
/// devices PREFIX0.. on NODE, each with QUEUES queue files (multi-queue
/// when QUEUES > 1) that are then closed, leaving them idle; for the
/// memory benchmark.
fn mkdevs(node: &str, prefix: &str, count: u32, queues: u32) -> Result<String, String> {
    for i in 0..count {
        let name = format!("{prefix}{i}");
        let mq = if queues > 1 { IFF_MULTI_QUEUE } else { 0 };
        let q = (0..queues.max(1))
            .map(|_| Tun::create(node, &name, IFF_TAP | IFF_NO_PI | mq).map_err(|e| format!("{name}: TUNSETIFF: errno {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        ioctl_val(q[0].fd(), TUNSETPERSIST, 1).map_err(|e| format!("{name}: TUNSETPERSIST: errno {e}"))?;
    }
    Ok(format!("created {count} persistent devices {prefix}0.. with {queues} queue(s) each"))
}

/// Attaches to (or creates) TAP device `name` on `node` and exits with 0 or
/// the errno: the unprivileged side of the permission tests.
fn attach(node: &str, name: &str) -> i32 {
    match Tun::create(node, name, IFF_TAP | IFF_NO_PI) {
        Ok(_) => 0,
        Err(e) => e,
    }
}

/// Creates a TAP device on `node`, brings it up and drains it until killed.
fn tap_drain(node: &str, name: &str) -> i32 {
    let t = match Tun::create(node, name, IFF_TAP | IFF_NO_PI) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("rtun: TUNSETIFF {name} on {node}: errno {e} ({})", errname(e));
            return 1;
        }
    };
    if let Err(e) = sh(&format!("ip link set {} up", t.name)) {
        eprintln!("rtun: {e}");
        return 1;
    }
    println!("rtun: draining {} on {node}", t.name);
    let mut buf = vec![0u8; 65536];
    loop {
        if let Err(e) = t.read(&mut buf) {
            if e != libc::EINTR {
                eprintln!("rtun: read: errno {e}");
                return 1;
            }
        }
    }
}

/// Prints a subcommand's summary line or error; its exit status.
fn report(what: &str, r: Result<String, String>) -> i32 {
    match r {
        Ok(line) => {
            println!("{line}");
            0
        }
        Err(e) => {
            eprintln!("rtun: {what}: {e}");
            1
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let code = match args.get(1).map(String::as_str) {
        Some("test") => runner::run_tests(args.get(2).map(String::as_str)),
        Some("list") => runner::list_tests(args.get(2).map(String::as_str)),
        Some("tap-drain") if args.len() == 4 => tap_drain(&args[2], &args[3]),
        Some("attach") if args.len() == 4 => attach(&args[2], &args[3]),
        Some("stress") if args.len() == 5 => report(
            "stress",
            stress::stress(&args[2], args[3].parse().unwrap_or(1), args[4].parse().unwrap_or(10)),
        ),
        Some("fuzz") if args.len() == 6 => {
            let num = |i: usize| args[i].parse().unwrap_or(1);
            report("fuzz", fuzz::fuzz(&args[2], num(3), num(4), num(5)))
        }
        Some("fuzz-diff") if args.len() == 4 => {
            let num = |i: usize| args[i].parse().unwrap_or(1);
            report("fuzz-diff", fuzz::fuzz_diff(num(2), num(3)))
        }
        Some("bench-write") if args.len() == 6 => {
            let num = |i: usize| args[i].parse().unwrap_or(0);
            report("bench-write", bench_write(&args[2], &args[3], num(4), num(5)))
        }
        Some("bench-gso") if args.len() == 5 => {
            let num = |i: usize| args[i].parse().unwrap_or(0);
            report("bench-gso", vnet::bench_gso(&args[2], num(3), num(4)))
        }
        Some("mkdevs") if args.len() == 6 => {
            let num = |i: usize| args[i].parse().unwrap_or(0);
            report("mkdevs", mkdevs(&args[2], &args[3], num(4), num(5)))
        }
        Some("fd-client") if args.len() == 4 => report("fd-client", behaviour::fd_client(&args[2], &args[3])),
        Some("block-read") if args.len() == 4 => report("block-read", behaviour::block_read(&args[2], &args[3])),
        Some("userns") if args.len() == 5 => report("userns", hardening::userns(&args[2], &args[3], &args[4])),
        Some("ns-roundtrip") if args.len() == 4 => report("ns-roundtrip", hardening::ns_roundtrip(&args[2], &args[3])),
        Some("ns-traffic") if args.len() == 4 => {
            report("ns-traffic", hardening::ns_traffic(&args[2], args[3].parse().unwrap_or(2)))
        }
        _ => {
            eprintln!(
                "usage: rtun test [FILTER] | rtun list [FILTER] | rtun tap-drain NODE NAME | rtun attach NODE NAME\n       \
                 rtun bench-write NODE NAME FLOWS PACKETS | rtun stress NODE SEED SECS\n       \
                 rtun fuzz NODE SEED ITERS PROCS | rtun fuzz-diff SEED ITERS\n       \
                 rtun mkdevs NODE PREFIX COUNT QUEUES | rtun fd-client recv|fd ARG\n       \
                 rtun block-read NODE NAME | rtun userns NODE MODE NAME\n       \
                 rtun ns-roundtrip NODE NAME | rtun ns-traffic NODE SECS"
            );
            2
        }
    };
    std::process::exit(code);
}
