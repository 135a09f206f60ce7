//! A tun client: the `/dev/net/tun` ABI (ioctl numbers, `struct ifreq`,
//! `struct tun_pi`) as user space sees it. The same code drives the C `tun`
//! and `rust_tun`, which is how the tests show the two ABIs agree.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::time::Duration;

pub const IFF_TUN: u16 = 0x0001;
pub const IFF_TAP: u16 = 0x0002;
pub const IFF_NO_CARRIER: u16 = 0x0040;
pub const IFF_NO_PI: u16 = 0x1000;
pub const IFF_ONE_QUEUE: u16 = 0x2000;
pub const IFF_TUN_EXCL: u16 = 0x8000;
pub const IFF_MULTI_QUEUE: u16 = 0x0100;
pub const IFF_PERSIST: u16 = 0x0800;
pub const IFF_ATTACH_QUEUE: u16 = 0x0200;
pub const IFF_DETACH_QUEUE: u16 = 0x0400;
pub const IFF_VNET_HDR: u16 = 0x4000;
pub const IFF_NAPI: u16 = 0x0010;
pub const IFF_NAPI_FRAGS: u16 = 0x0020;
/// 7.3's `IFF_BACKPRESSURE` (6.12's tun.c ignores the bit).
pub const IFF_BACKPRESSURE: u16 = 0x0080;

/// Whether the running kernel's tun.c has `IFF_BACKPRESSURE`: 7.3, as
/// `run-guest.sh` wrote the kernel series to `/etc/rtun-kernel`.
pub fn kernel_has_backpressure() -> bool {
    kernel_is_7_3()
}

/// Whether the guest runs the 7.3 kernel (`run-guest.sh` wrote the series
/// to `/etc/rtun-kernel`); 6.12 otherwise.
pub fn kernel_is_7_3() -> bool {
    std::fs::read_to_string("/etc/rtun-kernel").is_ok_and(|k| k.trim() == "7.3")
}
pub const TUN_PKT_STRIP: u16 = 0x0001;

const fn ioc(dir: u64, nr: u64, size: u64) -> u64 {
    (dir << 30) | (size << 16) | ((b'T' as u64) << 8) | nr
}
const IOC_W: u64 = 1;
const IOC_R: u64 = 2;
pub const TUNSETIFF: u64 = ioc(IOC_W, 202, 4);
pub const TUNSETPERSIST: u64 = ioc(IOC_W, 203, 4);
pub const TUNSETOWNER: u64 = ioc(IOC_W, 204, 4);
pub const TUNSETGROUP: u64 = ioc(IOC_W, 206, 4);
pub const TUNSETQUEUE: u64 = ioc(IOC_W, 217, 4);
pub const TUNGETFEATURES: u64 = ioc(IOC_R, 207, 4);
pub const TUNGETIFF: u64 = ioc(IOC_R, 210, 4);
pub const TUNGETVNETHDRSZ: u64 = ioc(IOC_R, 215, 4);

/// `struct ifreq` as tun copies it: the name and `ifr_flags`, padded to 40.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct IfReq {
    pub name: [u8; 16],
    pub flags: u16,
    pub pad: [u8; 22],
}

/// `struct ifreq` with `ifr_hwaddr`: the name, a `struct sockaddr`
/// (family, 14 bytes of `sa_data`), padded to 40.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct IfReqAddr {
    pub name: [u8; 16],
    pub family: u16,
    pub data: [u8; 14],
    pub pad: [u8; 8],
}

impl IfReq {
    /// A request for `name` with `flags`. In the NAPI run (`RTUN_NAPI=1`)
    /// every `TUNSETIFF` that names a device type asks for `IFF_NAPI` too
    /// (unless it says `IFF_NAPI_FRAGS`, whose checks tests look at), so
    /// the whole suite runs on NAPI queues.
    pub fn new(name: &str, flags: u16) -> Self {
        let flags = if napi_run() && flags & (IFF_TUN | IFF_TAP) != 0 && flags & IFF_NAPI_FRAGS == 0 {
            flags | IFF_NAPI
        } else {
            flags
        };
        let mut r = IfReq { name: [0; 16], flags, pad: [0; 22] };
        let n = name.len().min(16);
        r.name[..n].copy_from_slice(&name.as_bytes()[..n]);
        r
    }

    pub fn name(&self) -> String {
        let end = self.name.iter().position(|&c| c == 0).unwrap_or(16);
        String::from_utf8_lossy(&self.name[..end]).into_owned()
    }
}

/// Whether this is the NAPI run (`RTUN_NAPI=1`).
pub fn napi_run() -> bool {
    static NAPI: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *NAPI.get_or_init(|| std::env::var("RTUN_NAPI").is_ok_and(|v| v == "1"))
}

/// `IFF_NAPI` in the NAPI run, else 0: what every device created there has
/// beyond what its test asked for.
pub fn napi_bit() -> u16 {
    if napi_run() {
        IFF_NAPI
    } else {
        0
    }
}

/// The last OS error as an errno number.
pub fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Runs an ioctl whose argument is a pointer; returns the errno on failure.
pub fn ioctl_ptr<T>(fd: RawFd, cmd: u64, arg: *mut T) -> Result<i32, i32> {
    // SAFETY: The caller passes a command whose argument type is `T`, or an
    // invalid pointer on purpose (the kernel must then fail with EFAULT).
    let r = unsafe { libc::ioctl(fd, cmd as _, arg) };
    if r < 0 { Err(errno()) } else { Ok(r) }
}

/// Runs an ioctl whose argument is a plain integer.
pub fn ioctl_val(fd: RawFd, cmd: u64, arg: libc::c_ulong) -> Result<i32, i32> {
    // SAFETY: Integer argument; no memory is passed.
    let r = unsafe { libc::ioctl(fd, cmd as _, arg) };
    if r < 0 { Err(errno()) } else { Ok(r) }
}

/// An open queue file of a tun device.
pub struct Tun {
    pub file: File,
    pub name: String,
}

impl Tun {
    /// Opens `node` without attaching.
    pub fn open_node(node: &str) -> io::Result<File> {
        OpenOptions::new().read(true).write(true).open(node)
    }

    /// Opens `node` and attaches with TUNSETIFF; returns the errno on failure.
    pub fn create(node: &str, name: &str, flags: u16) -> Result<Tun, i32> {
        let file = Self::open_node(node).map_err(|e| e.raw_os_error().unwrap_or(0))?;
        let mut ifr = IfReq::new(name, flags);
        ioctl_ptr(file.as_raw_fd(), TUNSETIFF, &mut ifr)?;
        Ok(Tun { file, name: ifr.name() })
    }

    /// Opens `node` non-blocking and attaches.
    pub fn create_nonblock(node: &str, name: &str, flags: u16) -> Result<Tun, i32> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(node)
            .map_err(|e| e.raw_os_error().unwrap_or(0))?;
        let mut ifr = IfReq::new(name, flags);
        ioctl_ptr(file.as_raw_fd(), TUNSETIFF, &mut ifr)?;
        Ok(Tun { file, name: ifr.name() })
    }

    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// `write(2)` of one packet; the errno on failure.
    pub fn write(&self, buf: &[u8]) -> Result<usize, i32> {
        fd_write(self.fd(), buf)
    }

    /// `read(2)` of one packet into `buf`; the errno on failure.
    pub fn read(&self, buf: &mut [u8]) -> Result<usize, i32> {
        fd_read(self.fd(), buf)
    }

    /// Waits up to `timeout` for a packet, then reads it.
    pub fn read_timeout(&self, buf: &mut [u8], timeout: Duration) -> Result<usize, i32> {
        let ev = poll_fd(self.fd(), libc::POLLIN, timeout)?;
        if ev & libc::POLLIN == 0 {
            return Err(libc::ETIMEDOUT);
        }
        self.read(buf)
    }

    /// TUNGETIFF: (name, flags).
    pub fn getiff(&self) -> Result<(String, u16), i32> {
        let mut ifr = IfReq::new("", 0);
        ioctl_ptr(self.fd(), TUNGETIFF, &mut ifr)?;
        Ok((ifr.name(), ifr.flags))
    }
}

pub fn fd_write(fd: RawFd, buf: &[u8]) -> Result<usize, i32> {
    // SAFETY: `buf` is valid for reads of its length.
    let r = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    if r < 0 { Err(errno()) } else { Ok(r as usize) }
}

/// `write(2)` from a raw pointer, for handing the kernel bad addresses.
pub fn fd_write_raw(fd: RawFd, ptr: *const u8, len: usize) -> Result<usize, i32> {
    // SAFETY: The kernel validates `ptr`; user space never dereferences it.
    let r = unsafe { libc::write(fd, ptr.cast(), len) };
    if r < 0 { Err(errno()) } else { Ok(r as usize) }
}

pub fn fd_read(fd: RawFd, buf: &mut [u8]) -> Result<usize, i32> {
    // SAFETY: `buf` is valid for writes of its length.
    let r = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if r < 0 { Err(errno()) } else { Ok(r as usize) }
}

/// poll(2) one fd; returns `revents`.
pub fn poll_fd(fd: RawFd, events: i16, timeout: Duration) -> Result<i16, i32> {
    let mut p = libc::pollfd { fd, events, revents: 0 };
    // SAFETY: One valid pollfd.
    let r = unsafe { libc::poll(&mut p, 1, timeout.as_millis() as i32) };
    if r < 0 { Err(errno()) } else { Ok(p.revents) }
}

/// `struct ethtool_drvinfo` (include/uapi/linux/ethtool.h).
#[repr(C)]
pub struct EthtoolDrvinfo {
    pub cmd: u32,
    pub driver: [u8; 32],
    pub version: [u8; 32],
    pub fw_version: [u8; 32],
    pub bus_info: [u8; 32],
    pub erom_version: [u8; 32],
    pub reserved2: [u8; 12],
    pub n_priv_flags: u32,
    pub n_stats: u32,
    pub testinfo_len: u32,
    pub eedump_len: u32,
    pub regdump_len: u32,
}

#[repr(C)]
struct IfReqData {
    name: [u8; 16],
    data: *mut libc::c_void,
    pad: [u8; 16],
}

/// ETHTOOL_GDRVINFO / ETHTOOL_GLINK through SIOCETHTOOL: (driver, link).
pub fn ethtool_info(ifname: &str) -> Result<(String, u32), i32> {
    // SAFETY: Plain socket call.
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    if s < 0 {
        return Err(errno());
    }
    let mut info: EthtoolDrvinfo = unsafe { std::mem::zeroed() };
    info.cmd = 0x3; // ETHTOOL_GDRVINFO
    let mut name = [0u8; 16];
    name[..ifname.len().min(15)].copy_from_slice(&ifname.as_bytes()[..ifname.len().min(15)]);
    let mut ifr = IfReqData { name, data: (&mut info as *mut EthtoolDrvinfo).cast(), pad: [0; 16] };
    let r = ioctl_ptr(s, libc::SIOCETHTOOL, &mut ifr);
    let mut link = [0x0000000au32, 0]; // ETHTOOL_GLINK, data
    let r2 = r.and_then(|_| {
        ifr.data = link.as_mut_ptr().cast();
        ioctl_ptr(s, libc::SIOCETHTOOL, &mut ifr)
    });
    // SAFETY: Closing our socket.
    unsafe { libc::close(s) };
    r2?;
    let end = info.driver.iter().position(|&c| c == 0).unwrap_or(32);
    Ok((String::from_utf8_lossy(&info.driver[..end]).into_owned(), link[1]))
}

/// Whether a network interface exists.
pub fn link_exists(name: &str) -> bool {
    std::path::Path::new(&format!("/sys/class/net/{name}")).exists()
}

/// Reads /sys/class/net/NAME/ATTR (trimmed).
pub fn sysfs(name: &str, attr: &str) -> String {
    std::fs::read_to_string(format!("/sys/class/net/{name}/{attr}"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// A counter from /sys/class/net/NAME/statistics.
pub fn stat(name: &str, counter: &str) -> Result<u64, String> {
    let v = sysfs(name, &format!("statistics/{counter}"));
    v.parse().map_err(|_| format!("{name} statistics/{counter}: {v:?}"))
}

/// A device's packet counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub rx_dropped: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub tx_dropped: u64,
}

/// The counters of device `name`.
pub fn counters(name: &str) -> Result<Counters, String> {
    Ok(Counters {
        rx_packets: stat(name, "rx_packets")?,
        rx_bytes: stat(name, "rx_bytes")?,
        rx_dropped: stat(name, "rx_dropped")?,
        tx_packets: stat(name, "tx_packets")?,
        tx_bytes: stat(name, "tx_bytes")?,
        tx_dropped: stat(name, "tx_dropped")?,
    })
}

// The rest of the control ABI (include/uapi/linux/if_tun.h, sockios.h).
pub const TUNSETNOCSUM: u64 = ioc(IOC_W, 200, 4);
pub const TUNSETDEBUG: u64 = ioc(IOC_W, 201, 4);
pub const TUNSETLINK: u64 = ioc(IOC_W, 205, 4);
pub const TUNSETOFFLOAD: u64 = ioc(IOC_W, 208, 4);
pub const TUNSETTXFILTER: u64 = ioc(IOC_W, 209, 4);
pub const TUNGETSNDBUF: u64 = ioc(IOC_R, 211, 4);
pub const TUNSETSNDBUF: u64 = ioc(IOC_W, 212, 4);
pub const TUNATTACHFILTER: u64 = ioc(IOC_W, 213, 16);
pub const TUNDETACHFILTER: u64 = ioc(IOC_W, 214, 16);
pub const TUNSETVNETHDRSZ: u64 = ioc(IOC_W, 216, 4);
pub const TUNSETIFINDEX: u64 = ioc(IOC_W, 218, 4);
pub const TUNGETFILTER: u64 = ioc(IOC_R, 219, 16);
pub const TUNSETVNETLE: u64 = ioc(IOC_W, 220, 4);
pub const TUNGETVNETLE: u64 = ioc(IOC_R, 221, 4);
pub const TUNSETVNETBE: u64 = ioc(IOC_W, 222, 4);
pub const TUNGETVNETBE: u64 = ioc(IOC_R, 223, 4);
pub const TUNSETSTEERINGEBPF: u64 = ioc(IOC_R, 224, 4);
pub const TUNSETFILTEREBPF: u64 = ioc(IOC_R, 225, 4);
pub const TUNSETCARRIER: u64 = ioc(IOC_W, 226, 4);
pub const TUNGETDEVNETNS: u64 = ioc(0, 227, 0);
pub const SIOCGIFHWADDR: u64 = 0x8927;
pub const SIOCSIFHWADDR: u64 = 0x8924;
pub const SIOCGSKNS: u64 = 0x894c;
/// Read-only `TUNGETIFF` flag (the same bit as `IFF_NO_PI`): no filter.
pub const IFF_NOFILTER: u16 = 0x1000;
pub const TUN_FLT_ALLMULTI: u16 = 0x0001;

/// `struct sock_filter`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SockFilter {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

/// `struct sock_fprog`.
#[repr(C)]
pub struct SockFprog {
    pub len: u16,
    pub filter: *const SockFilter,
}

/// `BPF_RET | BPF_K`: a program of one instruction returning `k` (0:
/// drop, else the bytes to keep).
pub fn bpf_ret(k: u32) -> SockFilter {
    SockFilter { code: 0x06, jt: 0, jf: 0, k }
}

/// ETHTOOL_GDRVINFO: (driver, version, bus_info).
pub fn ethtool_drvinfo(ifname: &str) -> Result<(String, String, String), i32> {
    let mut info: EthtoolDrvinfo = unsafe { std::mem::zeroed() };
    info.cmd = 0x3;
    ethtool_cmd(ifname, (&mut info as *mut EthtoolDrvinfo).cast())?;
    let s = |b: &[u8; 32]| {
        let end = b.iter().position(|&c| c == 0).unwrap_or(32);
        String::from_utf8_lossy(&b[..end]).into_owned()
    };
    Ok((s(&info.driver), s(&info.version), s(&info.bus_info)))
}

/// ETHTOOL_GMSGLVL.
pub fn ethtool_msglvl(ifname: &str) -> Result<u32, i32> {
    let mut v = [0x7u32, 0];
    ethtool_cmd(ifname, v.as_mut_ptr().cast())?;
    Ok(v[1])
}

/// One `SIOCETHTOOL` command on `ifname` (`data` starts with the command).
pub fn ethtool_cmd(ifname: &str, data: *mut libc::c_void) -> Result<(), i32> {
    // SAFETY: Plain socket call.
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    if s < 0 {
        return Err(errno());
    }
    let mut name = [0u8; 16];
    name[..ifname.len().min(15)].copy_from_slice(&ifname.as_bytes()[..ifname.len().min(15)]);
    let mut ifr = IfReqData { name, data, pad: [0; 16] };
    let r = ioctl_ptr(s, libc::SIOCETHTOOL, &mut ifr);
    // SAFETY: Closing our socket.
    unsafe { libc::close(s) };
    r.map(|_| ())
}
