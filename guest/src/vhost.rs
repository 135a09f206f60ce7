//! vhost-net against a TAP (the vhost-net issue): a user-space vhost-net
//! driver, the equivalent of the kernel's `tools/virtio/vhost_net_test.c`
//! (which does not build from Debian's trees as shipped), driving
//! `/dev/vhost-net` as QEMU does for a `-netdev tap,vhost=on` NIC: owner,
//! memory table, features, two split virtqueues (0: receive, 1: transmit)
//! with kick eventfds, `VHOST_NET_SET_BACKEND` with the TAP's file. Packets
//! go both ways and are compared byte for byte: receive, a frame sent on
//! the TAP device from an `AF_PACKET` socket lands in a buffer of the
//! receive queue with its virtio-net header; transmit, a frame put on the
//! transmit queue reaches the `AF_PACKET` socket.
//!
//! vhost_net.ko finds the TAP behind a file with tun.ko's
//! `tun_get_socket()` and consumes its ring (`tun_get_tx_ring()`);
//! rust_tun serves both through rust_tun_vhost.ko, its stand-in for
//! tun.ko's exports (Documentation/rust_tun.rst, "vhost-net"). Every test
//! kernel builds `vhost_net.ko` (`VHOST_NET=m`), as Debian's does.

use super::*;

const VHOST: u64 = 0xaf;
const fn vioc(dir: u64, nr: u64, size: u64) -> u64 {
    (dir << 30) | (size << 16) | (VHOST << 8) | nr
}
const VHOST_SET_OWNER: u64 = vioc(0, 0x01, 0);
const VHOST_GET_FEATURES: u64 = vioc(2, 0x00, 8);
const VHOST_SET_FEATURES: u64 = vioc(1, 0x00, 8);
const VHOST_SET_MEM_TABLE: u64 = vioc(1, 0x03, 8);
const VHOST_SET_VRING_NUM: u64 = vioc(1, 0x10, 8);
const VHOST_SET_VRING_ADDR: u64 = vioc(1, 0x11, 40);
const VHOST_SET_VRING_BASE: u64 = vioc(1, 0x12, 8);
const VHOST_SET_VRING_KICK: u64 = vioc(1, 0x20, 8);
const VHOST_SET_VRING_CALL: u64 = vioc(1, 0x21, 8);
const VHOST_NET_SET_BACKEND: u64 = vioc(1, 0x30, 8);

const VIRTIO_F_VERSION_1: u64 = 1 << 32;
const VRING_DESC_F_WRITE: u16 = 2;
/// The virtio-net header with `VIRTIO_F_VERSION_1` (`virtio_net_hdr_mrg_rxbuf`),
/// which the TAP adds and strips (`TUNSETVNETHDRSZ`): vhost-net's `sock_hlen`.
const HDR_LEN: usize = 12;
/// Descriptors per queue (vhost_net_test's `DESC_NUM`).
const NUM: usize = 256;
/// The test frames' ethertype: IEEE 802's Local Experimental Ethertype 1,
/// which no protocol takes, so only our `AF_PACKET` socket sees these
/// frames. Not vhost_net_test's `ETH_P_LOOPBACK` (0x0060): below 0x0600
/// `eth_type_trans()` reads it as an 802.3 length, so a frame vhost-net
/// transmits arrives as `ETH_P_802_2` and a socket of 0x0060 never sees it.
const ETH_P_TEST: u16 = 0x88b5;
const FRAME_LEN: usize = 256;
/// Frames each way: past the ring's size, so its indices wrap.
const FRAMES: usize = 600;
const PAGE: usize = 4096;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Desc {
    addr: u64,
    len: u32,
    flags: u16,
    next: u16,
}

#[repr(C)]
struct VringState {
    index: u32,
    num: u32,
}

#[repr(C)]
struct VringFile {
    index: u32,
    fd: i32,
}

#[repr(C)]
struct VringAddr {
    index: u32,
    flags: u32,
    desc: u64,
    used: u64,
    avail: u64,
    log: u64,
}

#[repr(C)]
struct MemTable {
    nregions: u32,
    padding: u32,
    // One `vhost_memory_region`.
    guest_phys_addr: u64,
    memory_size: u64,
    userspace_addr: u64,
    flags_padding: u64,
}

/// An anonymous private mapping, unmapped on drop.
struct Mapping {
    addr: *mut u8,
    len: usize,
}

impl Mapping {
    fn new(len: usize) -> Result<Mapping, String> {
        // SAFETY: A fresh anonymous mapping; no memory of ours is touched.
        let addr = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE, -1, 0)
        };
        check!(addr != libc::MAP_FAILED, "mmap {len}: errno {}", errno());
        Ok(Mapping { addr: addr.cast(), len })
    }

    fn at(&self, off: usize) -> *mut u8 {
        assert!(off < self.len);
        // SAFETY: In bounds of the mapping (checked above).
        unsafe { self.addr.add(off) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: Our mapping; vhost-net has been closed before (field order
        // of `Vhost`: the control file goes first).
        unsafe { libc::munmap(self.addr.cast(), self.len) };
    }
}

/// One split virtqueue: descriptor table, available ring (flags, idx,
/// ring[NUM], used_event), used ring (flags, idx, ring[NUM] of (id, len),
/// avail_event), each on pages of its own, and its kick eventfd. One
/// buffer is in flight at a time (descriptor `avail_idx % NUM`).
struct Vq {
    index: u32,
    desc: Mapping,
    avail: Mapping,
    used: Mapping,
    kick: OwnedFd,
    /// Signalled by vhost-net when it returns buffers (blocking reads).
    call: OwnedFd,
    avail_idx: u16,
    used_idx: u16,
}

impl Vq {
    fn new(index: u32) -> Result<Vq, String> {
        // SAFETY: eventfd(2) with no memory argument.
        let kick = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK) };
        check!(kick >= 0, "eventfd: errno {}", errno());
        // SAFETY: As above.
        let call = unsafe { libc::eventfd(0, 0) };
        check!(call >= 0, "eventfd: errno {}", errno());
        Ok(Vq {
            index,
            desc: Mapping::new(PAGE * (NUM * 16).div_ceil(PAGE))?,
            avail: Mapping::new(PAGE)?,
            used: Mapping::new(PAGE * (4 + NUM * 8 + 2).div_ceil(PAGE))?,
            // SAFETY: `kick` is a new descriptor of ours.
            kick: unsafe { OwnedFd::from_raw_fd(kick) },
            // SAFETY: `call` is a new descriptor of ours.
            call: unsafe { OwnedFd::from_raw_fd(call) },
            avail_idx: 0,
            used_idx: 0,
        })
    }

    /// Gives vhost-net the queue (`VHOST_SET_VRING_*`).
    fn setup(&self, control: RawFd) -> TestResult {
        let mut st = VringState { index: self.index, num: NUM as u32 };
        ioctl_ptr(control, VHOST_SET_VRING_NUM, &mut st).map_err(|e| format!("VHOST_SET_VRING_NUM: errno {e}"))?;
        let mut st = VringState { index: self.index, num: 0 };
        ioctl_ptr(control, VHOST_SET_VRING_BASE, &mut st).map_err(|e| format!("VHOST_SET_VRING_BASE: errno {e}"))?;
        let mut addr = VringAddr {
            index: self.index,
            flags: 0,
            desc: self.desc.addr as u64,
            used: self.used.addr as u64,
            avail: self.avail.addr as u64,
            log: 0,
        };
        ioctl_ptr(control, VHOST_SET_VRING_ADDR, &mut addr).map_err(|e| format!("VHOST_SET_VRING_ADDR: errno {e}"))?;
        let mut f = VringFile { index: self.index, fd: self.kick.as_raw_fd() };
        ioctl_ptr(control, VHOST_SET_VRING_KICK, &mut f).map_err(|e| format!("VHOST_SET_VRING_KICK: errno {e}"))?;
        let mut f = VringFile { index: self.index, fd: self.call.as_raw_fd() };
        ioctl_ptr(control, VHOST_SET_VRING_CALL, &mut f).map_err(|e| format!("VHOST_SET_VRING_CALL: errno {e}"))?;
        Ok(())
    }

    /// Makes the buffer `addr`/`len` available (device-writable for the
    /// receive queue) and kicks.
    fn add(&mut self, addr: *mut u8, len: usize, writable: bool) -> TestResult {
        self.add_many(&[(addr, len)], writable)
    }

    /// Makes the buffers available (device-writable for the receive
    /// queue), then kicks once.
    fn add_many(&mut self, bufs: &[(*mut u8, usize)], writable: bool) -> TestResult {
        for &(addr, len) in bufs {
            self.publish(addr, len, writable);
        }
        std::sync::atomic::fence(Ordering::SeqCst);
        let one = 1u64.to_ne_bytes();
        fd_write(self.kick.as_raw_fd(), &one).map_err(|e| format!("kick: errno {e}"))?;
        Ok(())
    }

    /// Waits, blocking on the call eventfd, until the device has returned
    /// `n` buffers more than `used_idx` counts; takes them.
    fn wait_used_n(&mut self, n: u16) -> TestResult {
        let target = self.used_idx.wrapping_add(n);
        loop {
            // SAFETY: used->idx, in the used pages.
            let idx = unsafe { std::ptr::read_volatile(self.used.at(2).cast::<u16>()) };
            if idx.wrapping_sub(self.used_idx) >= n {
                std::sync::atomic::fence(Ordering::Acquire);
                self.used_idx = target;
                return Ok(());
            }
            let mut b = [0u8; 8];
            // SAFETY: `b` is valid for writes of 8 bytes.
            let r = unsafe { libc::read(self.call.as_raw_fd(), b.as_mut_ptr().cast(), 8) };
            check!(r == 8, "queue {}: read(call): {r}, errno {}", self.index, errno());
        }
    }

    /// Publishes one descriptor in the available ring (no kick).
    fn publish(&mut self, addr: *mut u8, len: usize, writable: bool) {
        let slot = usize::from(self.avail_idx) % NUM;
        let d = Desc { addr: addr as u64, len: len as u32, flags: if writable { VRING_DESC_F_WRITE } else { 0 }, next: 0 };
        // SAFETY: `slot < NUM` descriptors of the table; the device reads
        // it only once it is published below.
        unsafe { std::ptr::write_volatile(self.desc.at(slot * 16).cast::<Desc>(), d) };
        // SAFETY: avail->ring[slot], in the avail page.
        unsafe { std::ptr::write_volatile(self.avail.at(4 + slot * 2).cast::<u16>(), slot as u16) };
        std::sync::atomic::fence(Ordering::Release);
        self.avail_idx = self.avail_idx.wrapping_add(1);
        // SAFETY: avail->idx, published after the entry (the fence).
        unsafe { std::ptr::write_volatile(self.avail.at(2).cast::<u16>(), self.avail_idx) };
    }

    /// Waits up to `timeout` for the device to return a buffer: its used
    /// length.
    fn wait_used(&mut self, timeout: Duration) -> Result<u32, String> {
        let end = Instant::now() + timeout;
        loop {
            // SAFETY: used->idx, in the used pages.
            let idx = unsafe { std::ptr::read_volatile(self.used.at(2).cast::<u16>()) };
            if idx != self.used_idx {
                std::sync::atomic::fence(Ordering::Acquire);
                let slot = usize::from(self.used_idx) % NUM;
                // SAFETY: used->ring[slot] = (id, len), in the used pages.
                let (id, len) = unsafe {
                    (
                        std::ptr::read_volatile(self.used.at(4 + slot * 8).cast::<u32>()),
                        std::ptr::read_volatile(self.used.at(8 + slot * 8).cast::<u32>()),
                    )
                };
                check!(id as usize == slot, "queue {}: used id {id}, expected {slot}", self.index);
                self.used_idx = self.used_idx.wrapping_add(1);
                return Ok(len);
            }
            check!(Instant::now() < end, "queue {}: no buffer back from vhost-net in {timeout:?}", self.index);
            thread::sleep(Duration::from_micros(200));
        }
    }
}

/// An open `/dev/vhost-net` with its memory and queues. The control file
/// is closed first (vhost-net stops using the memory), then the mappings.
struct Vhost {
    control: std::fs::File,
    rx: Vq,
    tx: Vq,
    /// The buffers: guest-physical addresses are these user addresses (the
    /// memory table maps them one to one).
    buf: Mapping,
}

impl Vhost {
    /// Owner, memory table, `VIRTIO_F_VERSION_1` (the header of `HDR_LEN`
    /// bytes is the TAP's: no `VHOST_NET_F_VIRTIO_NET_HDR`), both queues.
    fn new() -> Result<Vhost, String> {
        Vhost::with_pages(2)
    }

    /// As [`Vhost::new`], with `pages` pages of buffers.
    fn with_pages(pages: usize) -> Result<Vhost, String> {
        let control = std::fs::OpenOptions::new().read(true).write(true).open("/dev/vhost-net").map_err(|e| format!("/dev/vhost-net: {e}"))?;
        let fd = control.as_raw_fd();
        ioctl_val(fd, VHOST_SET_OWNER, 0).map_err(|e| format!("VHOST_SET_OWNER: errno {e}"))?;
        let mut have = 0u64;
        ioctl_ptr(fd, VHOST_GET_FEATURES, &mut have).map_err(|e| format!("VHOST_GET_FEATURES: errno {e}"))?;
        check!(have & VIRTIO_F_VERSION_1 != 0, "vhost-net offers no VIRTIO_F_VERSION_1: {have:#x}");
        let buf = Mapping::new(pages * PAGE)?;
        let mut mem = MemTable {
            nregions: 1,
            padding: 0,
            guest_phys_addr: buf.addr as u64,
            memory_size: buf.len as u64,
            userspace_addr: buf.addr as u64,
            flags_padding: 0,
        };
        ioctl_ptr(fd, VHOST_SET_MEM_TABLE, &mut mem).map_err(|e| format!("VHOST_SET_MEM_TABLE: errno {e}"))?;
        let mut features = VIRTIO_F_VERSION_1;
        ioctl_ptr(fd, VHOST_SET_FEATURES, &mut features).map_err(|e| format!("VHOST_SET_FEATURES: errno {e}"))?;
        let (rx, tx) = (Vq::new(0)?, Vq::new(1)?);
        rx.setup(fd)?;
        tx.setup(fd)?;
        Ok(Vhost { control, rx, tx, buf })
    }

    /// `VHOST_NET_SET_BACKEND` of both queues to `tap` (-1: none).
    fn set_backend(&self, tap: RawFd) -> Result<(), i32> {
        for index in [0, 1] {
            let mut f = VringFile { index, fd: tap };
            ioctl_ptr(self.control.as_raw_fd(), VHOST_NET_SET_BACKEND, &mut f)?;
        }
        Ok(())
    }
}

/// A raw `AF_PACKET` socket on device `ifindex`: for `ETH_P_TEST`
/// frames (`receive`), or one that receives nothing (protocol 0: for
/// sending; a socket of the protocol would also see its own frames go out).
fn packet_socket(ifindex: i32, receive: bool) -> Result<OwnedFd, String> {
    let proto = if receive { ETH_P_TEST.to_be() } else { 0 };
    // SAFETY: socket(2) with no memory argument.
    let s = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, i32::from(proto)) };
    check!(s >= 0, "socket(AF_PACKET): errno {}", errno());
    // SAFETY: `s` is a new descriptor of ours.
    let s = unsafe { OwnedFd::from_raw_fd(s) };
    if !receive {
        return Ok(s);
    }
    // SAFETY: An all-zero sockaddr_ll is valid.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = proto;
    sll.sll_ifindex = ifindex;
    // SAFETY: `sll` is a sockaddr_ll of the size given.
    let r = unsafe { libc::bind(s.as_raw_fd(), (&sll as *const libc::sockaddr_ll).cast(), std::mem::size_of::<libc::sockaddr_ll>() as u32) };
    check!(r == 0, "bind(AF_PACKET): errno {}", errno());
    let tv = libc::timeval { tv_sec: 5, tv_usec: 0 };
    // SAFETY: SO_RCVTIMEO with a timeval.
    unsafe { libc::setsockopt(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVTIMEO, (&tv as *const libc::timeval).cast(), std::mem::size_of::<libc::timeval>() as u32) };
    Ok(s)
}

/// Frame `i`: to and from `mac`, `ETH_P_TEST`, then bytes that carry `i`.
fn frame(mac: [u8; 6], i: usize) -> Vec<u8> {
    let mut f = pkt::eth(mac, mac, ETH_P_TEST, &[]);
    f.extend((14..FRAME_LEN).map(|j| (j ^ i) as u8));
    f
}

/// `FRAMES` frames each way through vhost-net and the TAP `t`.
fn data_both_ways(vh: &mut Vhost, name: &str) -> TestResult {
    let mac = hwaddr(name)?;
    let sock = packet_socket(nl::ifindex(name), false)?;
    let rxbuf = vh.buf.at(0);
    let txbuf = vh.buf.at(PAGE);
    // Receive: a buffer on queue 0, then a frame sent on the device.
    for i in 0..FRAMES {
        // SAFETY: The first page of our buffer, which the device returned.
        unsafe { std::ptr::write_bytes(rxbuf, 0xee, HDR_LEN + 1514) };
        vh.rx.add(rxbuf, HDR_LEN + 1514, true)?;
        let f = frame(mac, i);
        // SAFETY: An all-zero sockaddr_ll is valid.
        let mut to: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        to.sll_family = libc::AF_PACKET as u16;
        to.sll_protocol = ETH_P_TEST.to_be();
        to.sll_ifindex = nl::ifindex(name);
        to.sll_halen = 6;
        // SAFETY: `f` and `to` are valid for the lengths given.
        let r = unsafe { libc::sendto(sock.as_raw_fd(), f.as_ptr().cast(), f.len(), 0, (&to as *const libc::sockaddr_ll).cast(), std::mem::size_of::<libc::sockaddr_ll>() as u32) };
        check!(r == f.len() as isize, "receive {i}: sendto: {r}, errno {}", errno());
        let len = vh.rx.wait_used(Duration::from_secs(5))?;
        check!(len as usize == HDR_LEN + FRAME_LEN, "receive {i}: used length {len}, expected {}", HDR_LEN + FRAME_LEN);
        // SAFETY: The device wrote `len` bytes there and gave the buffer back.
        let got = unsafe { std::slice::from_raw_parts(rxbuf, len as usize) };
        // No offload fields. num_buffers: 7.3's vhost-net sets it to 1
        // under VIRTIO_F_VERSION_1 too (handle_rx's set_num_buffers); on
        // 6.12 neither vhost-net (only with VIRTIO_NET_F_MRG_RXBUF) nor the
        // tap (6.12's tun skips the header's padding) writes it, and our
        // fill stays.
        let num_buffers = if kernel_is_7_3() { [1, 0] } else { [0xee, 0xee] };
        check!(
            got[..10].iter().all(|&b| b == 0) && got[10..12] == num_buffers,
            "receive {i}: virtio-net header {:02x?}, expected num_buffers {num_buffers:02x?}",
            &got[..HDR_LEN]
        );
        check!(got[HDR_LEN..] == f[..], "receive {i}: the frame differs");
    }
    // Transmit: a frame on queue 1 reaches the socket.
    let sock = packet_socket(nl::ifindex(name), true)?;
    let mut rb = [0u8; 2048];
    for i in 0..FRAMES {
        let f = frame(mac, i + FRAMES);
        // SAFETY: The second page of our buffer, not in flight.
        unsafe {
            std::ptr::write_bytes(txbuf, 0, HDR_LEN);
            std::ptr::copy_nonoverlapping(f.as_ptr(), txbuf.add(HDR_LEN), f.len());
        }
        vh.tx.add(txbuf, HDR_LEN + f.len(), false)?;
        vh.tx.wait_used(Duration::from_secs(5))?;
        // SAFETY: `rb` is valid for writes of its length.
        let n = unsafe { libc::recv(sock.as_raw_fd(), rb.as_mut_ptr().cast(), rb.len(), 0) };
        check!(n == f.len() as isize, "transmit {i}: recv {n}, errno {}", errno());
        check!(rb[..f.len()] == f[..], "transmit {i}: the frame differs");
    }
    println!("# {FRAMES} frames each way through vhost-net, intact");
    Ok(())
}

/// The modules vhost_net.ko needs, in load order, after the provider of
/// tun.ko's exports; tap.ko only where the kernel builds it.
const VHOST_MODULES: [&str; 4] = ["vhost_iotlb", "vhost", "tap", "vhost_net"];

/// vhost-net on a TAP of the driver, with the same expectations on both:
/// data both ways; the driver's module pinned while vhost-net holds the
/// file; the device deleted under vhost-net, which then sends into a
/// file without a device and lets it go cleanly.
///
/// tun.ko's exports (`tun_get_socket()`, ...) come from tun.ko for C tun
/// and from rust_tun_vhost.ko (rust_tun's stand-in for tun.ko) for
/// rust_tun: the two export the same names and cannot be loaded at once,
/// and vhost_net.ko binds to the one loaded when it loads. The test loads
/// that one, what vhost_net.ko needs and vhost_net.ko; it unloads what it
/// loaded and loads tun.ko again if it had to unload it.
pub fn t_vhost_net(n: Node) -> TestResult {
    with_vhost_net(n, vhost_net_on)
}

/// One vhost-net device per queue of a multi-queue TAP (QEMU's
/// `queues=N` with `vhost=on`), the same expectations on both drivers:
/// frames each device transmits all arrive; frames of 32 flows sent to the
/// device spread over the queues by the driver's queue selection, and each
/// arrives once, intact, at the device of its queue.
pub fn t_vhost_net_mq(n: Node) -> TestResult {
    with_vhost_net(n, vhost_net_mq_on)
}

/// Runs `f` with vhost_net.ko loaded over the provider of tun.ko's exports
/// for `n`'s driver.
fn with_vhost_net(n: Node, f: fn(Node) -> TestResult) -> TestResult {
    if !std::path::Path::new(&format!("{MODDIR}/vhost_net.ko")).exists() {
        skip!("no vhost_net.ko in this kernel");
    }
    let (provider, other) = if n.label == "tun" { ("tun", "rust_tun_vhost") } else { ("rust_tun_vhost", "tun") };
    if n.label != "tun" && !std::path::Path::new(&format!("{MODDIR}/rust_tun_vhost.ko")).exists() {
        return Err("no rust_tun_vhost.ko beside rust_tun.ko".into());
    }
    // vhost_net.ko bound to the other provider goes first, then that one.
    let mut reload = Vec::new();
    for m in ["vhost_net", other] {
        if module_loaded(m) {
            sh(&format!("rmmod {m}"))?;
            if m == "tun" {
                reload.push(m);
            }
        }
    }
    let mut loaded = Vec::new();
    for m in std::iter::once(provider).chain(VHOST_MODULES) {
        if module_loaded(m) || !std::path::Path::new(&format!("{MODDIR}/{m}.ko")).exists() {
            continue;
        }
        if let Err(e) = sh(&format!("insmod {MODDIR}/{m}.ko")) {
            let _ = unload_all(&loaded, &reload);
            return Err(format!("insmod {m}: {e}"));
        }
        loaded.push(m);
    }
    let res = f(n);
    let undo = unload_all(&loaded, &reload);
    res.and(undo)
}

/// Unloads `loaded` in reverse order and loads `reload` again.
fn unload_all(loaded: &[&str], reload: &[&str]) -> TestResult {
    let mut res = Ok(());
    for m in loaded.iter().rev() {
        if let Err(e) = sh(&format!("rmmod {m}")) {
            res = res.and(Err(format!("rmmod {m}: {e}")));
        }
    }
    for m in reload {
        res = res.and(load(m));
    }
    res
}

fn vhost_net_on(n: Node) -> TestResult {
    let name = format!("{}vh0", n.tap_prefix);
    let t = Tun::create(n.path, &name, IFF_TAP | IFF_NO_PI | IFF_VNET_HDR).map_err(|e| format!("TUNSETIFF: errno {e}"))?;
    let mut hl: libc::c_int = HDR_LEN as i32;
    ioctl_ptr(t.fd(), TUNSETVNETHDRSZ, &mut hl).map_err(|e| format!("TUNSETVNETHDRSZ: errno {e}"))?;
    sh(&format!("ip link set {name} up"))?;
    let mut vh = Vhost::new()?;
    vh.set_backend(t.fd()).map_err(|e| format!("VHOST_NET_SET_BACKEND: errno {e} ({})", errname(e)))?;
    data_both_ways(&mut vh, &name)?;

    // The driver's module is pinned while vhost-net holds the file.
    check!(sh(&format!("rmmod {}", n.module)).is_err(), "rmmod {} succeeded under vhost-net", n.module);
    check!(module_loaded(n.module), "{} is gone", n.module);

    // The device deleted under vhost-net: the file stays, without a
    // device; vhost-net's send of a packet now fails (sendmsg: EBADFD; it
    // keeps the buffer: tun.ko gives none back either), and vhost-net
    // lets the file go cleanly (KASAN watches on the debug kernel).
    sh(&format!("ip link del {name}"))?;
    check!(!std::path::Path::new(&format!("/sys/class/net/{name}")).exists(), "{name} still exists");
    let f = frame([2, 0, 0, 0, 0, 1], 7);
    let txbuf = vh.buf.at(PAGE);
    // SAFETY: The second page of our buffer, not in flight.
    unsafe {
        std::ptr::write_bytes(txbuf, 0, HDR_LEN);
        std::ptr::copy_nonoverlapping(f.as_ptr(), txbuf.add(HDR_LEN), f.len());
    }
    vh.tx.add(txbuf, HDR_LEN + f.len(), false)?;
    let _ = vh.tx.wait_used(Duration::from_millis(500));
    vh.set_backend(-1).map_err(|e| format!("VHOST_NET_SET_BACKEND -1: errno {e}"))?;
    drop(vh);
    drop(t);
    println!("# {}: pinned under vhost-net; device deleted under it; released cleanly", n.module);
    Ok(())
}

/// Queues of the multi-queue test, and the flows sent to the device.
const MQ_QUEUES: usize = 2;
const MQ_FLOWS: usize = 32;
/// A receive buffer's slot in a device's buffer pages.
const MQ_SLOT: usize = 2048;

/// Frame `i` of the multi-queue test: IPv4/UDP of flow `i` (source port
/// 1000 + i), to and from `mac`, its payload carrying `i`.
fn mq_frame(mac: [u8; 6], i: usize) -> Vec<u8> {
    let data: Vec<u8> = (0..200).map(|j| (j ^ i) as u8).collect();
    let udp = pkt::udp(1000 + i as u16, 9, &data);
    let ip = pkt::ipv4([10, 99, 0, 1], [10, 99, 0, 2], 17, &udp);
    pkt::eth(mac, mac, 0x0800, &ip)
}

fn vhost_net_mq_on(n: Node) -> TestResult {
    let name = format!("{}vm0", n.tap_prefix);
    let flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE;
    let mut taps = Vec::new();
    for q in 0..MQ_QUEUES {
        taps.push(Tun::create(n.path, &name, flags).map_err(|e| format!("TUNSETIFF queue {q}: errno {e}"))?);
    }
    let mut hl: libc::c_int = HDR_LEN as i32;
    ioctl_ptr(taps[0].fd(), TUNSETVNETHDRSZ, &mut hl).map_err(|e| format!("TUNSETVNETHDRSZ: errno {e}"))?;
    sh(&format!("ip link set {name} up"))?;
    let mac = hwaddr(&name)?;
    let pages = (MQ_FLOWS * MQ_SLOT).div_ceil(PAGE) + 1;
    let mut vhs = Vec::new();
    for (q, t) in taps.iter().enumerate() {
        let vh = Vhost::with_pages(pages)?;
        vh.set_backend(t.fd()).map_err(|e| format!("queue {q}: VHOST_NET_SET_BACKEND: errno {e} ({})", errname(e)))?;
        vhs.push(vh);
    }

    // Receive: every device offers a buffer per flow, then the flows go
    // out of the device; each frame lands at the device of its queue.
    for vh in vhs.iter_mut() {
        for k in 0..MQ_FLOWS {
            let b = vh.buf.at(k * MQ_SLOT);
            vh.rx.add(b, MQ_SLOT, true)?;
        }
    }
    let sock = packet_socket(nl::ifindex(&name), false)?;
    let sent: Vec<Vec<u8>> = (0..MQ_FLOWS).map(|i| mq_frame(mac, i)).collect();
    for (i, f) in sent.iter().enumerate() {
        // SAFETY: An all-zero sockaddr_ll is valid.
        let mut to: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        to.sll_family = libc::AF_PACKET as u16;
        to.sll_protocol = 0x0800u16.to_be();
        to.sll_ifindex = nl::ifindex(&name);
        to.sll_halen = 6;
        // SAFETY: `f` and `to` are valid for the lengths given.
        let r = unsafe { libc::sendto(sock.as_raw_fd(), f.as_ptr().cast(), f.len(), 0, (&to as *const libc::sockaddr_ll).cast(), std::mem::size_of::<libc::sockaddr_ll>() as u32) };
        check!(r == f.len() as isize, "flow {i}: sendto: {r}, errno {}", errno());
    }
    let mut seen = [false; MQ_FLOWS];
    let mut per_queue = [0usize; MQ_QUEUES];
    let end = Instant::now() + Duration::from_secs(10);
    while per_queue.iter().sum::<usize>() < MQ_FLOWS {
        check!(Instant::now() < end, "received {per_queue:?} of {MQ_FLOWS} frames in 10 s");
        for (q, vh) in vhs.iter_mut().enumerate() {
            let Ok(len) = vh.rx.wait_used(Duration::from_millis(1)) else {
                continue;
            };
            let slot = per_queue[q];
            per_queue[q] += 1;
            // SAFETY: The device wrote `len` bytes into the buffer of this
            // slot (buffers come back in order) and gave it back.
            let got = unsafe { std::slice::from_raw_parts(vh.buf.at(slot * MQ_SLOT), len as usize) };
            check!(got.len() > HDR_LEN, "queue {q}: a buffer of {len} bytes");
            let frame = &got[HDR_LEN..];
            let i = sent.iter().position(|f| f[..] == *frame).ok_or_else(|| format!("queue {q}: a frame that was not sent ({} bytes)", frame.len()))?;
            check!(!seen[i], "flow {i} arrived twice");
            seen[i] = true;
        }
    }
    check!(per_queue.iter().all(|&c| c > 0), "the flows did not spread over the queues: {per_queue:?}");

    // Transmit: each device sends frames of its own; all arrive.
    let rsock = packet_socket(nl::ifindex(&name), true)?;
    let mut rb = [0u8; 2048];
    for (q, vh) in vhs.iter_mut().enumerate() {
        for i in 0..8 {
            let f = frame(mac, 1000 * (q + 1) + i);
            let txbuf = vh.buf.at((pages - 1) * PAGE);
            // SAFETY: The last page of this device's buffers, not in flight.
            unsafe {
                std::ptr::write_bytes(txbuf, 0, HDR_LEN);
                std::ptr::copy_nonoverlapping(f.as_ptr(), txbuf.add(HDR_LEN), f.len());
            }
            vh.tx.add(txbuf, HDR_LEN + f.len(), false)?;
            vh.tx.wait_used(Duration::from_secs(5)).map_err(|e| format!("queue {q} transmit {i}: {e}"))?;
            // SAFETY: `rb` is valid for writes of its length.
            let r = unsafe { libc::recv(rsock.as_raw_fd(), rb.as_mut_ptr().cast(), rb.len(), 0) };
            check!(r == f.len() as isize && rb[..f.len()] == f[..], "queue {q} transmit {i}: recv {r}, errno {}", errno());
        }
    }
    for vh in &vhs {
        vh.set_backend(-1).map_err(|e| format!("VHOST_NET_SET_BACKEND -1: errno {e}"))?;
    }
    drop(vhs);
    drop(taps);
    println!("# {MQ_FLOWS} flows over {MQ_QUEUES} queues {per_queue:?}, each at its queue's vhost-net device once; 8 frames sent by each device");
    Ok(())
}

/// `rtun bench-vhost NODE DIR COUNT`: COUNT frames through vhost-net and a
/// TAP of the driver at NODE, in batches of 64 (vhost-net's own batch):
/// `tx`, from the transmit queue into the stack (each frame to the TAP's
/// own address, of an ethertype no one handles: freed on arrival); `rx`,
/// from an `AF_PACKET` socket on the TAP into receive buffers. Timed with
/// CLOCK_MONOTONIC (guest instructions under -icount); waits block on the
/// queue's call eventfd. Run on one CPU (bench.sh: `-smp 1`), so that the
/// vhost-net worker and this thread take turns in an order the
/// instruction count decides: on two, where each runs is the scheduler's
/// choice and the figures spread by a few per cent from boot to boot.
/// Prints one `BENCH vhost` line.
pub fn bench_vhost(node: &str, dir: &str, count: usize) -> Result<String, String> {
    const BATCH: usize = 64;
    check!(dir == "tx" || dir == "rx", "DIR is tx or rx");
    check!(count >= BATCH, "COUNT below {BATCH}");
    let name = "bvh0";
    let t = Tun::create(node, name, IFF_TAP | IFF_NO_PI | IFF_VNET_HDR).map_err(|e| format!("TUNSETIFF: errno {e}"))?;
    let mut hl: libc::c_int = HDR_LEN as i32;
    ioctl_ptr(t.fd(), TUNSETVNETHDRSZ, &mut hl).map_err(|e| format!("TUNSETVNETHDRSZ: errno {e}"))?;
    sh(&format!("ip link set {name} up"))?;
    let mac = hwaddr(name)?;
    let mut vh = Vhost::with_pages(BATCH * 2048 / PAGE)?;
    vh.set_backend(t.fd()).map_err(|e| format!("VHOST_NET_SET_BACKEND: errno {e} ({})", errname(e)))?;
    let f = frame(mac, 1);
    let bufs: Vec<(*mut u8, usize)> = (0..BATCH).map(|k| (vh.buf.at(k * 2048), 2048)).collect();
    let batches = count / BATCH;
    let sock = packet_socket(nl::ifindex(name), false)?;
    // SAFETY: An all-zero sockaddr_ll is valid.
    let mut to: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    to.sll_family = libc::AF_PACKET as u16;
    to.sll_protocol = ETH_P_TEST.to_be();
    to.sll_ifindex = nl::ifindex(name);
    to.sll_halen = 6;
    let tx: Vec<(*mut u8, usize)> = bufs.iter().map(|&(b, _)| (b, HDR_LEN + f.len())).collect();
    if dir == "tx" {
        for &(b, _) in &bufs {
            // SAFETY: A slot of our buffer pages, not in flight.
            unsafe {
                std::ptr::write_bytes(b, 0, HDR_LEN);
                std::ptr::copy_nonoverlapping(f.as_ptr(), b.add(HDR_LEN), f.len());
            }
        }
    }
    // scripts/profile.sh's marks around the measured part.
    let marks = std::env::var_os("RTUN_PROF_SYNC").is_some();
    if marks {
        // SAFETY: sync(2) takes no arguments.
        unsafe { libc::sync() };
    }
    let t0 = Instant::now();
    for _ in 0..batches {
        if dir == "tx" {
            vh.tx.add_many(&tx, false)?;
            vh.tx.wait_used_n(BATCH as u16)?;
        } else {
            vh.rx.add_many(&bufs, true)?;
            for _ in 0..BATCH {
                // SAFETY: `f` and `to` are valid for the lengths given.
                let r = unsafe { libc::sendto(sock.as_raw_fd(), f.as_ptr().cast(), f.len(), 0, (&to as *const libc::sockaddr_ll).cast(), std::mem::size_of::<libc::sockaddr_ll>() as u32) };
                check!(r == f.len() as isize, "sendto: {r}, errno {}", errno());
            }
            vh.rx.wait_used_n(BATCH as u16)?;
        }
    }
    let ns = t0.elapsed().as_nanos() as f64;
    if marks {
        // SAFETY: As above.
        unsafe { libc::sync() };
    }
    let packets = (batches * BATCH) as f64;
    vh.set_backend(-1).map_err(|e| format!("VHOST_NET_SET_BACKEND -1: errno {e}"))?;
    Ok(format!("BENCH vhost dir={dir} packets={packets} ns={ns:.0} pps={:.0} ns_per_packet={:.1}", packets * 1e9 / ns, ns / packets))
}

/// Frames of the backpressure test: a ring of `BP_RING`, then as many in
/// the qdisc (`pfifo_fast` holds `txqueuelen`).
const BP_RING: usize = 64;
const BP_FRAMES: usize = 2 * BP_RING;

/// 7.3's `IFF_BACKPRESSURE` under vhost-net, the same expectations on both
/// drivers: a full ring stops the queue, and only vhost-net's consumption
/// can wake it (`tun_wake_queue()`, which vhost-net calls through tun.ko's
/// export, under the ring's consumer lock). The frames are sent before
/// vhost-net has the file: the first `BP_RING` fill the ring and stop the
/// queue, the rest wait in the qdisc; vhost-net then takes the ring's
/// (into its batch), which must wake the queue: none is dropped, and all
/// arrive, in order, once the guest offers buffers. (With vhost-net
/// already running it would take frames into its batch as they come and
/// the queue might never stop: no test of the wake.)
pub fn t_vhost_net_backpressure(n: Node) -> TestResult {
    let _qdisc = backpressure::need_backpressure()?;
    with_vhost_net(n, vhost_net_bp_on)
}

fn vhost_net_bp_on(n: Node) -> TestResult {
    let name = format!("{}vb0", n.tap_prefix);
    let t = Tun::create(n.path, &name, IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_BACKPRESSURE).map_err(|e| format!("TUNSETIFF: errno {e}"))?;
    let mut hl: libc::c_int = HDR_LEN as i32;
    ioctl_ptr(t.fd(), TUNSETVNETHDRSZ, &mut hl).map_err(|e| format!("TUNSETVNETHDRSZ: errno {e}"))?;
    sh(&format!("ip link set {name} qlen {BP_RING}"))?;
    sh(&format!("ip link set {name} up"))?;
    let mac = hwaddr(&name)?;
    let mut vh = Vhost::with_pages(BP_RING * 2048 / PAGE)?;
    let sock = packet_socket(nl::ifindex(&name), false)?;
    // SAFETY: An all-zero sockaddr_ll is valid.
    let mut to: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    to.sll_family = libc::AF_PACKET as u16;
    to.sll_protocol = ETH_P_TEST.to_be();
    to.sll_ifindex = nl::ifindex(&name);
    to.sll_halen = 6;
    let sent: Vec<Vec<u8>> = (0..BP_FRAMES).map(|i| frame(mac, i)).collect();
    for (i, f) in sent.iter().enumerate() {
        // SAFETY: `f` and `to` are valid for the lengths given.
        let r = unsafe { libc::sendto(sock.as_raw_fd(), f.as_ptr().cast(), f.len(), 0, (&to as *const libc::sockaddr_ll).cast(), std::mem::size_of::<libc::sockaddr_ll>() as u32) };
        check!(r == f.len() as isize, "frame {i}: sendto: {r}, errno {}", errno());
    }
    vh.set_backend(t.fd()).map_err(|e| format!("VHOST_NET_SET_BACKEND: errno {e} ({})", errname(e)))?;
    thread::sleep(Duration::from_millis(200));
    // Buffers now, one back for each frame received: the k-th buffer
    // returned is the k-th offered, slot k % BP_RING.
    let bufs: Vec<(*mut u8, usize)> = (0..BP_RING).map(|k| (vh.buf.at(k * 2048), 2048)).collect();
    vh.rx.add_many(&bufs, true)?;
    for (i, f) in sent.iter().enumerate() {
        let len = vh.rx.wait_used(Duration::from_secs(5)).map_err(|e| format!("frame {i} of {BP_FRAMES}: {e} (the stopped queue was not woken?)"))?;
        let slot = i % BP_RING;
        // SAFETY: The device wrote `len` bytes into this slot's buffer and
        // gave it back.
        let got = unsafe { std::slice::from_raw_parts(vh.buf.at(slot * 2048), len as usize) };
        if len as usize != HDR_LEN + f.len() || got[HDR_LEN..] != f[..] {
            // Which frame came instead, if any: a lost, repeated or
            // reordered frame, or data no frame had (a freed buffer).
            let which = match sent.iter().position(|s| got.get(HDR_LEN..) == Some(&s[..])) {
                Some(k) => format!("frame {k} instead"),
                None => match got.get(HDR_LEN..).and_then(|g| g.iter().zip(f).position(|(a, b)| a != b)) {
                    Some(at) => format!("no frame sent: byte {at} differs from the frame's"),
                    None => "no frame sent".to_string(),
                },
            };
            let dropped = std::fs::read_to_string(format!("/sys/class/net/{name}/statistics/tx_dropped")).unwrap_or_default();
            return Err(format!("frame {i}: {len} bytes, {which} (tx_dropped {})", dropped.trim()));
        }
        vh.rx.add(bufs[slot].0, 2048, true)?;
    }
    let dropped = std::fs::read_to_string(format!("/sys/class/net/{name}/statistics/tx_dropped")).map_err(|e| e.to_string())?;
    check!(dropped.trim() == "0", "tx_dropped {}", dropped.trim());
    vh.set_backend(-1).map_err(|e| format!("VHOST_NET_SET_BACKEND -1: errno {e}"))?;
    drop(vh);
    drop(t);
    println!("# {BP_FRAMES} frames through a ring of {BP_RING} with IFF_BACKPRESSURE: the queue woken by vhost-net's reads, none dropped, in order");
    Ok(())
}
