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
//!
//! Issue 40 (the correctness review's finding 2 and what goes with it):
//! vhost-net's transmit into the TAP against tun.c, on both of its paths
//! (a batch of `TUN_MSG_PTR` buffers, and a `sendmsg` per buffer): a
//! batch on an `IFF_NAPI` queue whose last buffer fails, the counters,
//! checksum offload and GSO, UDP-tunnel GSO.

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
/// 7.3's `VHOST_GET_FEATURES_ARRAY`/`VHOST_SET_FEATURES_ARRAY`: a count of
/// 64-bit words, then the words (`struct vhost_features_array`).
const VHOST_GET_FEATURES_ARRAY: u64 = vioc(2, 0x83, 8);
const VHOST_SET_FEATURES_ARRAY: u64 = vioc(1, 0x83, 8);
/// The feature words the tests negotiate at most.
const FEATURE_WORDS: usize = 2;

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
/// avail_event), each on pages of its own, and its kick eventfd. Buffer
/// `i` is descriptor `i % NUM`; buffers come back in the order given.
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
    /// queue) with one update of the available index, then kicks once: a
    /// device that looks at the ring in between sees none or all of them.
    fn add_many(&mut self, bufs: &[(*mut u8, usize)], writable: bool) -> TestResult {
        for &(addr, len) in bufs {
            self.put(addr, len, writable);
        }
        std::sync::atomic::fence(Ordering::Release);
        // SAFETY: avail->idx, published after the entries (the fence).
        unsafe { std::ptr::write_volatile(self.avail.at(2).cast::<u16>(), self.avail_idx) };
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

    /// Writes one descriptor and its available ring entry, and counts it
    /// in `avail_idx`; the device sees it once the caller writes
    /// `avail->idx` (no kick).
    fn put(&mut self, addr: *mut u8, len: usize, writable: bool) {
        let slot = usize::from(self.avail_idx) % NUM;
        let d = Desc { addr: addr as u64, len: len as u32, flags: if writable { VRING_DESC_F_WRITE } else { 0 }, next: 0 };
        // SAFETY: `slot < NUM` descriptors of the table; the device reads
        // it only once it is published below.
        unsafe { std::ptr::write_volatile(self.desc.at(slot * 16).cast::<Desc>(), d) };
        // SAFETY: avail->ring[slot], in the avail page.
        unsafe { std::ptr::write_volatile(self.avail.at(4 + slot * 2).cast::<u16>(), slot as u16) };
        self.avail_idx = self.avail_idx.wrapping_add(1);
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
        Vhost::with_features(pages, &[VIRTIO_F_VERSION_1])
    }

    /// As [`Vhost::with_pages`], negotiating `features` (64 bits a word;
    /// beyond the first word through 7.3's `VHOST_SET_FEATURES_ARRAY`).
    fn with_features(pages: usize, features: &[u64]) -> Result<Vhost, String> {
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
        if features.len() > 1 {
            let mut arr = [0u64; 1 + FEATURE_WORDS];
            check!(features.len() <= FEATURE_WORDS, "{} feature words", features.len());
            arr[0] = features.len() as u64;
            arr[1..=features.len()].copy_from_slice(features);
            ioctl_ptr(fd, VHOST_SET_FEATURES_ARRAY, arr.as_mut_ptr()).map_err(|e| format!("VHOST_SET_FEATURES_ARRAY {features:#x?}: errno {e}"))?;
        } else {
            let mut f = features.first().copied().unwrap_or(0);
            ioctl_ptr(fd, VHOST_SET_FEATURES, &mut f).map_err(|e| format!("VHOST_SET_FEATURES: errno {e}"))?;
        }
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
    check!(dir == "tx" || dir == "rx" || dir == "tx-xdp", "DIR is tx, rx or tx-xdp");
    check!(count >= BATCH, "COUNT below {BATCH}");
    let name = "bvh0";
    let t = Tun::create(node, name, IFF_TAP | IFF_NO_PI | IFF_VNET_HDR).map_err(|e| format!("TUNSETIFF: errno {e}"))?;
    let mut hl: libc::c_int = HDR_LEN as i32;
    ioctl_ptr(t.fd(), TUNSETVNETHDRSZ, &mut hl).map_err(|e| format!("TUNSETVNETHDRSZ: errno {e}"))?;
    sh(&format!("ip link set {name} up"))?;
    // tx-xdp: vhost-net's transmit batches through an XDP_PASS program
    // (attached before the backend, so SOCK_XDP gives vhost-net's buffers
    // XDP's headroom from the first batch).
    let _prog = if dir == "tx-xdp" {
        let p = abi::xdp::ret_prog(abi::xdp::XDP_PASS)?;
        let nl = nl::Nl::open(0).map_err(|e| e.to_string())?;
        abi::xdp::attach(&nl, name, &p)?;
        Some(p)
    } else {
        None
    };
    let row = dir;
    let dir = if dir == "tx-xdp" { "tx" } else { dir };
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
    Ok(format!("BENCH vhost dir={row} packets={packets} ns={ns:.0} pps={:.0} ns_per_packet={:.1}", packets * 1e9 / ns, ns / packets))
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

/// The transmit tests' buffers: one slot of `TX_SLOT` bytes per
/// descriptor of a kick, from the buffer pages' start (the receive
/// buffers, where a test has any, follow them).
const TX_SLOT: usize = 2 * PAGE;
/// Descriptors a transmit test puts in one kick at most.
const TX_SLOTS: usize = 8;

/// The sizes below which vhost-net batches a transmit buffer
/// (`vhost_net_build_xdp()`: the buffer, `NET_SKB_PAD` and the header
/// aligned, and `skb_shared_info`, within a page; else `ENOSPC` and a
/// `sendmsg` of its own): well below for the frames meant for the batch,
/// above for those meant for the single path.
const XDP_MAX: usize = 3500;
const SINGLE_MIN: usize = 3800;

/// Puts `bufs` (each the virtio-net header and a frame) on the transmit
/// queue as one kick, one slot each, and waits for vhost-net to give them
/// all back.
fn tx_kick(vh: &mut Vhost, bufs: &[Vec<u8>]) -> TestResult {
    check!(bufs.len() <= TX_SLOTS, "{} buffers in one kick", bufs.len());
    let mut descs = Vec::new();
    for (k, b) in bufs.iter().enumerate() {
        check!(b.len() <= TX_SLOT, "buffer {k}: {} bytes", b.len());
        let at = vh.buf.at(k * TX_SLOT);
        // SAFETY: Slot `k` of our buffer pages, not in flight (the last
        // kick's buffers all came back).
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), at, b.len()) };
        descs.push((at, b.len()));
    }
    vh.tx.add_many(&descs, false)?;
    for k in 0..bufs.len() {
        vh.tx.wait_used(Duration::from_secs(5)).map_err(|e| format!("buffer {k} of {}: {e}", bufs.len()))?;
    }
    Ok(())
}

/// A zero virtio-net header of `HDR_LEN` bytes, then `frame`.
fn hdr0(frame: &[u8]) -> Vec<u8> {
    let mut b = vec![0u8; HDR_LEN];
    b.extend_from_slice(frame);
    b
}

/// `h`, padded to `HDR_LEN`, then `frame`.
fn hdr(h: &vnet::Vnet, frame: &[u8]) -> Vec<u8> {
    let mut b = h.bytes().to_vec();
    b.resize(HDR_LEN, 0);
    b.extend_from_slice(frame);
    b
}

/// A `len`-byte `ETH_P_TEST` frame to and from `mac` whose payload carries
/// `tag`.
fn test_frame(mac: [u8; 6], tag: u8, len: usize) -> Vec<u8> {
    pkt::eth(mac, mac, ETH_P_TEST, &(14..len).map(|j| (j as u8) ^ tag).collect::<Vec<u8>>())
}

/// Waits up to `timeout` for a frame on `sock`.
fn recv_within(sock: &OwnedFd, buf: &mut [u8], timeout: Duration) -> Option<usize> {
    let mut p = libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: One valid pollfd.
    if unsafe { libc::poll(&mut p, 1, timeout.as_millis() as i32) } != 1 {
        return None;
    }
    // SAFETY: `buf` is valid for writes of its length.
    let r = unsafe { libc::recv(sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
    usize::try_from(r).ok()
}

/// Sets the TAP's `TUNSETVNETHDRSZ`.
fn set_vnet_hdr_sz(t: &Tun, sz: usize) -> TestResult {
    let mut hl = sz as libc::c_int;
    ioctl_ptr(t.fd(), TUNSETVNETHDRSZ, &mut hl).map_err(|e| format!("TUNSETVNETHDRSZ {sz}: errno {e}"))?;
    Ok(())
}

/// Sets the queue sockets' `sk_sndbuf` (`TUNSETSNDBUF`): vhost-net
/// batches only at `i32::MAX`, the default (`handle_tx_copy()`'s
/// `sock_can_batch`), and sends each buffer with a `sendmsg` of its own
/// below. `handle_tx_copy()` reads it once per pass, and a pass takes the
/// buffers that arrive while it runs: the last kick's pass may still be
/// looking for more after it gave its buffers back. So the worker must be
/// idle first, or the next kick's buffers join the old pass in the old
/// mode (seen once on a loaded host: a "sendmsg each" round batched).
fn set_sndbuf(t: &Tun, v: i32) -> TestResult {
    vhost_workers_idle()?;
    let mut v = v;
    ioctl_ptr(t.fd(), TUNSETSNDBUF, &mut v).map_err(|e| format!("TUNSETSNDBUF {v}: errno {e}"))?;
    Ok(())
}

/// Waits until every vhost worker of this process sleeps in its loop,
/// between passes: the `vhost-PID` threads vhost makes in its owner (a
/// `vhost_task`, as 6.12 and 7.3 do by default), or its kernel threads of
/// that name where 7.3 is set to use those.
fn vhost_workers_idle() -> TestResult {
    let name = format!("vhost-{}", std::process::id());
    let mut found = 0;
    for dir in ["/proc/self/task", "/proc"] {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{dir}: {e}"))?;
        for e in entries.flatten() {
            let Some(id) = e.file_name().to_str().and_then(|t| t.parse::<i32>().ok()) else { continue };
            if std::fs::read_to_string(e.path().join("comm")).unwrap_or_default().trim_end() != name {
                continue;
            }
            found += 1;
            wait_sleeping(&format!("{dir}/{id}/stat"), &format!("{name} (pid {id})"))?;
        }
        if found > 0 {
            return Ok(());
        }
    }
    Err(format!("no {name} thread: vhost-net's worker was not found"))
}

/// What makes vhost-net batch a kick's buffers into one `TUN_MSG_PTR`
/// `sendmsg` (7.3 and 6.12 `drivers/vhost/net.c`, `handle_tx_copy()`):
/// the socket's `sk_sndbuf` at `INT_MAX` and copy mode (no
/// `experimental_zcopytx`, whose `handle_tx_zerocopy()` never batches);
/// the buffer sizes are the caller's.
fn check_batching(t: &Tun) -> TestResult {
    let mut sndbuf: libc::c_int = 0;
    ioctl_ptr(t.fd(), TUNGETSNDBUF, &mut sndbuf).map_err(|e| format!("TUNGETSNDBUF: errno {e}"))?;
    check!(sndbuf == i32::MAX, "sndbuf {sndbuf}, not INT_MAX: vhost-net would not batch");
    let z = std::fs::read_to_string("/sys/module/vhost_net/parameters/experimental_zcopytx").unwrap_or_default();
    check!(z.trim() == "0", "vhost_net experimental_zcopytx {:?}: vhost-net would not batch", z.trim());
    Ok(())
}

/// A TAP of `n`'s driver named `name` for vhost-net: `flags` and
/// `IFF_VNET_HDR`, `vnet_hdr_sz`, no IPv6 (nothing of the stack's own
/// goes out of it), up.
fn vhost_tap(n: Node, name: &str, flags: u16, vnet_hdr_sz: usize) -> Result<Tun, String> {
    let t = Tun::create(n.path, name, flags | IFF_VNET_HDR).map_err(|e| format!("TUNSETIFF {name}: errno {e}"))?;
    set_vnet_hdr_sz(&t, vnet_hdr_sz)?;
    vnet::tnl::no_ipv6(name);
    sh(&format!("ip link set {name} up"))?;
    Ok(t)
}

/// Issue 40 (correctness review, finding 2): a vhost-net batch on an
/// `IFF_NAPI` queue whose last buffer fails must still have the frames
/// queued before it polled. tun.c's `tun_sendmsg()` schedules the NAPI
/// context once after the batch whenever a buffer was queued (7.3
/// tun.c:2687-2701, 6.12 the same); scheduling only from the batch's last
/// buffer leaves the frames before it on the socket's queue until some
/// later packet schedules the context.
///
/// The TAP (`IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_NAPI`, header 12,
/// up) has an `AF_PACKET` socket for the test ethertype; each round puts
/// two buffers on the transmit queue in one kick: A, a zero header and a
/// 60-byte frame, then B, the tail. vhost-net batches both into one
/// `TUN_MSG_PTR` `sendmsg` (the default sndbuf of `INT_MAX`, copy mode,
/// both far below a page: checked). A must reach the socket within 1 s
/// for each tail: a valid frame (the control: it must arrive too), a runt
/// (8 bytes after the header: `EINVAL` in `tun_xdp_one()`, below
/// `ETH_HLEN`), a refused virtio-net header (a valid frame with the
/// unknown `gso_type` 7: `EINVAL` and a frame error). Where A did not
/// come, a third frame is sent alone and the report says whether A came
/// with it (the stall) or never (a loss).
///
/// The control proves that vhost-net batched: unbatched (sndbuf below
/// `INT_MAX`), A goes in a `sendmsg` of its own with `MSG_MORE` (B still
/// waiting), which tun.c's `tun_get_user()` queues without scheduling; on
/// tun.ko A must then be held back, so A polled at once in the rounds
/// above means they were one batch. (rust_tun ignores `MSG_MORE`, a
/// deliberate difference: the control is only printed there.)
pub fn t_vhost_net_napi_batch_tail_fails(n: Node) -> TestResult {
    with_vhost_net(n, napi_batch_tail_on)
}

fn napi_batch_tail_on(n: Node) -> TestResult {
    let name = format!("{}vnt0", n.tap_prefix);
    let t = vhost_tap(n, &name, IFF_TAP | IFF_NO_PI | IFF_NAPI, HDR_LEN)?;
    let (_, flags) = t.getiff().map_err(|e| format!("TUNGETIFF: errno {e}"))?;
    check!(flags & IFF_NAPI != 0, "TUNGETIFF flags {flags:#x}: no IFF_NAPI");
    check_batching(&t)?;
    let mac = hwaddr(&name)?;
    let rsock = packet_socket(nl::ifindex(&name), true)?;
    let mut vh = Vhost::with_pages(TX_SLOTS * TX_SLOT / PAGE)?;
    vh.set_backend(t.fd()).map_err(|e| format!("VHOST_NET_SET_BACKEND: errno {e} ({})", errname(e)))?;
    let refused = vnet::Vnet { gso_type: 7, hdr_len: 14, gso_size: 100, ..Default::default() };
    let tails: [(&str, Vec<u8>, bool); 3] = [
        ("a valid frame", hdr0(&test_frame(mac, 0xb0, 60)), true),
        ("a runt (8 bytes)", hdr0(&[0x5a; 8]), false),
        ("a refused header (gso_type 7)", hdr(&refused, &test_frame(mac, 0xb2, 60)), false),
    ];
    let mut rb = [0u8; 2048];
    let mut failed = Vec::new();
    for (k, (what, tail, valid)) in tails.iter().enumerate() {
        let a = test_frame(mac, 0xa0 + k as u8, 60);
        tx_kick(&mut vh, &[hdr0(&a), tail.clone()]).map_err(|e| format!("tail {what}: {e}"))?;
        match recv_within(&rsock, &mut rb, Duration::from_secs(1)) {
            Some(m) if rb[..m] == a[..] => {
                if *valid {
                    let m = recv_within(&rsock, &mut rb, Duration::from_secs(1));
                    check!(m.is_some_and(|m| rb[..m] == tail[HDR_LEN..]), "tail {what}: A came, the tail did not ({m:?})");
                }
                println!("# tail {what}: A polled at once");
            }
            Some(m) => return Err(format!("tail {what}: a frame of {m} bytes that is not A")),
            None => {
                // A third frame alone: its batch's last buffer schedules.
                let c = test_frame(mac, 0xc0 + k as u8, 60);
                tx_kick(&mut vh, &[hdr0(&c)])?;
                let mut late = Vec::new();
                while let Some(m) = recv_within(&rsock, &mut rb, Duration::from_secs(1)) {
                    late.push(if rb[..m] == a[..] { "A" } else if rb[..m] == c[..] { "C" } else { "?" });
                }
                failed.push(format!("tail {what}: A not delivered within 1 s of the kick (then after a third frame C: {late:?})"));
            }
        }
    }
    // The control: unbatched (sndbuf below INT_MAX), A goes alone with
    // MSG_MORE, as B is still on the ring; tun.c's `tun_get_user()` queues
    // it without scheduling and the runt fails before its queue: A held
    // back on tun.ko shows that the rounds above were batched. rust_tun
    // takes no notice of MSG_MORE (chr/sock.rs: a deliberate difference)
    // and polls A at once.
    set_sndbuf(&t, 4 << 20)?;
    let a = test_frame(mac, 0xaf, 60);
    tx_kick(&mut vh, &[hdr0(&a), hdr0(&[0x5a; 8])]).map_err(|e| format!("unbatched: {e}"))?;
    let at_once = recv_within(&rsock, &mut rb, Duration::from_secs(1)).is_some_and(|m| rb[..m] == a[..]);
    println!("# unbatched, tail a runt: A {}", if at_once { "polled at once" } else { "held back (MSG_MORE)" });
    if !at_once {
        tx_kick(&mut vh, &[hdr0(&test_frame(mac, 0xcf, 60))])?;
    }
    if n.module == "tun" {
        check!(!at_once, "tun.ko polled A of an unbatched pair at once: was the batched case batched at all?");
    }
    vh.set_backend(-1).map_err(|e| format!("VHOST_NET_SET_BACKEND -1: errno {e}"))?;
    check!(failed.is_empty(), "{}", failed.join("; "));
    Ok(())
}

/// The counters of device `name` that the transmit tests compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct TxStats {
    rx_packets: u64,
    rx_bytes: u64,
    rx_dropped: u64,
    rx_errors: u64,
    rx_frame_errors: u64,
    rx_length_errors: u64,
    tx_packets: u64,
    tx_bytes: u64,
    tx_dropped: u64,
}

impl TxStats {
    fn of(name: &str) -> Result<TxStats, String> {
        Ok(TxStats {
            rx_packets: stat(name, "rx_packets")?,
            rx_bytes: stat(name, "rx_bytes")?,
            rx_dropped: stat(name, "rx_dropped")?,
            rx_errors: stat(name, "rx_errors")?,
            rx_frame_errors: stat(name, "rx_frame_errors")?,
            rx_length_errors: stat(name, "rx_length_errors")?,
            tx_packets: stat(name, "tx_packets")?,
            tx_bytes: stat(name, "tx_bytes")?,
            tx_dropped: stat(name, "tx_dropped")?,
        })
    }

    /// What moved from `before` to `self`.
    fn since(&self, before: &TxStats) -> TxStats {
        TxStats {
            rx_packets: self.rx_packets.wrapping_sub(before.rx_packets),
            rx_bytes: self.rx_bytes.wrapping_sub(before.rx_bytes),
            rx_dropped: self.rx_dropped.wrapping_sub(before.rx_dropped),
            rx_errors: self.rx_errors.wrapping_sub(before.rx_errors),
            rx_frame_errors: self.rx_frame_errors.wrapping_sub(before.rx_frame_errors),
            rx_length_errors: self.rx_length_errors.wrapping_sub(before.rx_length_errors),
            tx_packets: self.tx_packets.wrapping_sub(before.tx_packets),
            tx_bytes: self.tx_bytes.wrapping_sub(before.tx_bytes),
            tx_dropped: self.tx_dropped.wrapping_sub(before.tx_dropped),
        }
    }
}

/// One kind of buffer of the statistics test.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum TxKind {
    /// A valid frame of this many bytes.
    Valid(usize),
    /// 8 bytes after the header: below `ETH_HLEN`.
    Runt,
    /// A valid 60-byte frame behind an unknown `gso_type`.
    Refused,
}

/// The statistics test's kick: buffers of each kind, the last a valid
/// frame (so that on `IFF_NAPI` queues, the NAPI run, the batch ends
/// with a queued buffer: issue 40 is [`t_vhost_net_napi_batch_tail_fails`]'s),
/// one of them past a page (vhost-net's single path even when it
/// batches).
const TX_MIX: [TxKind; 6] =
    [TxKind::Valid(60), TxKind::Runt, TxKind::Refused, TxKind::Valid(1000), TxKind::Valid(SINGLE_MIN + 200), TxKind::Valid(200)];

/// Frames through vhost-net are counted as tun.c counts them, on both
/// paths of vhost-net's transmit (batched `TUN_MSG_PTR` buffers through
/// `tun_xdp_one()`, at the default sndbuf; and a `sendmsg` per buffer
/// through `tun_get_user()`, with `TUNSETSNDBUF` below `INT_MAX` and for
/// any buffer past a page): a valid frame is one `rx_packets` and its
/// length without the header in `rx_bytes`; a runt counts nothing (both
/// paths return `EINVAL` before any counter); a header
/// `virtio_net_hdr_to_skb()` refuses is a frame error, which a TAP of
/// tun.ko does not show (its `tap_netdev_ops` have no `ndo_get_stats64`
/// to add `tun->rx_frame_errors`; rust_tun shows it: a deliberate
/// difference, as [`crate::vnet::t_vnet_malformed_tap`]) and nothing
/// else; no drop. With the link down, `tun_get_user()` refuses each
/// frame (`EIO`) and counts it in `rx_dropped`, while `tun_xdp_one()`
/// checks no `IFF_UP` and counts the batch's frames as received (and the
/// stack, finding no handler on a down device, as dropped). The
/// valid frames reach an `AF_PACKET` socket on the TAP in order, intact.
/// The other way, frames the stack sends out of the TAP into vhost-net's
/// receive buffers are `tx_packets` and `tx_bytes`, no `tx_dropped`.
pub fn t_vhost_net_tx_stats(n: Node) -> TestResult {
    with_vhost_net(n, tx_stats_on)
}

fn tx_stats_on(n: Node) -> TestResult {
    let name = format!("{}vst0", n.tap_prefix);
    let t = vhost_tap(n, &name, IFF_TAP | IFF_NO_PI, HDR_LEN)?;
    check_batching(&t)?;
    let mac = hwaddr(&name)?;
    let rsock = packet_socket(nl::ifindex(&name), true)?;
    // Transmit slots, then the receive buffers.
    const RX_BUFS: usize = 4;
    let rx_at = TX_SLOTS * TX_SLOT;
    let mut vh = Vhost::with_pages((rx_at + RX_BUFS * 2048) / PAGE)?;
    vh.set_backend(t.fd()).map_err(|e| format!("VHOST_NET_SET_BACKEND: errno {e} ({})", errname(e)))?;
    let frame_errors_shown = n.module == "rust_tun";
    let refused = vnet::Vnet { gso_type: 7, hdr_len: 14, gso_size: 100, ..Default::default() };
    let mut rb = vec![0u8; 8192];
    let mut tag = 0u8;
    for (path, sndbuf) in [("batched", i32::MAX), ("a sendmsg each", 4 << 20)] {
        set_sndbuf(&t, sndbuf)?;
        let mut bufs = Vec::new();
        let mut sent = Vec::new();
        for kind in TX_MIX {
            tag = tag.wrapping_add(1);
            bufs.push(match kind {
                TxKind::Valid(len) => {
                    let f = test_frame(mac, tag, len);
                    sent.push(f.clone());
                    hdr0(&f)
                }
                TxKind::Runt => hdr0(&[tag; 8]),
                TxKind::Refused => hdr(&refused, &test_frame(mac, tag, 60)),
            });
        }
        let before = TxStats::of(&name)?;
        tx_kick(&mut vh, &bufs).map_err(|e| format!("{path}: {e}"))?;
        for (i, f) in sent.iter().enumerate() {
            let m = recv_within(&rsock, &mut rb, Duration::from_secs(3));
            check!(m.is_some_and(|m| rb[..m] == f[..]), "{path}: valid frame {i} ({} bytes): got {m:?} bytes, not the frame", f.len());
        }
        let d = TxStats::of(&name)?.since(&before);
        let want = TxStats {
            rx_packets: sent.len() as u64,
            rx_bytes: sent.iter().map(|f| f.len() as u64).sum(),
            rx_frame_errors: u64::from(frame_errors_shown),
            ..Default::default()
        };
        check!(d == want, "{path}: {:?} moved the counters by {d:?}, tun.c's count: {want:?}", TX_MIX);
        println!("# {path}: {d:?}");
    }

    // The link down.
    sh(&format!("ip link set {name} down"))?;
    for (path, sndbuf, received) in [("batched", i32::MAX, true), ("a sendmsg each", 4 << 20, false)] {
        set_sndbuf(&t, sndbuf)?;
        let frames: Vec<Vec<u8>> = [60, 200].iter().map(|&l| test_frame(mac, 0xd0, l)).collect();
        let before = TxStats::of(&name)?;
        tx_kick(&mut vh, &frames.iter().map(|f| hdr0(f)).collect::<Vec<_>>()).map_err(|e| format!("link down, {path}: {e}"))?;
        let d = TxStats::of(&name)?.since(&before);
        // Received frames of a down device reach no handler (af_packet
        // unhooks its sockets on NETDEV_DOWN): the stack counts them in
        // rx_dropped (`__netif_receive_skb_core()`), on either driver.
        let want = if received {
            TxStats { rx_packets: 2, rx_bytes: 260, rx_dropped: 2, ..Default::default() }
        } else {
            TxStats { rx_dropped: 2, ..Default::default() }
        };
        check!(d == want, "link down, {path}: two frames moved the counters by {d:?}, tun.c's count: {want:?}");
    }
    set_sndbuf(&t, i32::MAX)?;
    sh(&format!("ip link set {name} up"))?;
    while recv_within(&rsock, &mut rb, Duration::from_millis(100)).is_some() {}

    // The other way: frames sent out of the TAP into receive buffers.
    let bufs: Vec<(*mut u8, usize)> = (0..RX_BUFS).map(|k| (vh.buf.at(rx_at + k * 2048), 2048)).collect();
    vh.rx.add_many(&bufs, true)?;
    let ssock = packet_socket(nl::ifindex(&name), false)?;
    // SAFETY: An all-zero sockaddr_ll is valid.
    let mut to: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    to.sll_family = libc::AF_PACKET as u16;
    to.sll_protocol = ETH_P_TEST.to_be();
    to.sll_ifindex = nl::ifindex(&name);
    to.sll_halen = 6;
    let before = TxStats::of(&name)?;
    let mut bytes = 0;
    for k in 0..RX_BUFS {
        let f = test_frame(mac, 0xe0 + k as u8, 60 + 300 * k);
        // SAFETY: `f` and `to` are valid for the lengths given.
        let r = unsafe { libc::sendto(ssock.as_raw_fd(), f.as_ptr().cast(), f.len(), 0, (&to as *const libc::sockaddr_ll).cast(), std::mem::size_of::<libc::sockaddr_ll>() as u32) };
        check!(r == f.len() as isize, "receive {k}: sendto: {r}, errno {}", errno());
        let len = vh.rx.wait_used(Duration::from_secs(5)).map_err(|e| format!("receive {k}: {e}"))?;
        check!(len as usize == HDR_LEN + f.len(), "receive {k}: used length {len}, want {}", HDR_LEN + f.len());
        bytes += f.len() as u64;
    }
    let d = TxStats::of(&name)?.since(&before);
    let want = TxStats { tx_packets: RX_BUFS as u64, tx_bytes: bytes, ..Default::default() };
    check!(d == want, "{RX_BUFS} frames into vhost-net's receive buffers moved the counters by {d:?}, tun.c's count: {want:?}");
    vh.set_backend(-1).map_err(|e| format!("VHOST_NET_SET_BACKEND -1: errno {e}"))?;
    Ok(())
}

/// `SOL_PACKET`, `PACKET_VNET_HDR`.
const SOL_PACKET: i32 = 263;
const PACKET_VNET_HDR: i32 = 15;

/// An `AF_PACKET` socket on device `ifindex` for IPv4 frames that reads
/// each with the virtio-net header of its skb (`PACKET_VNET_HDR`:
/// `virtio_net_hdr_from_skb()`, the checksum state and GSO fields the
/// driver gave the skb).
fn packet_socket_vnet(ifindex: i32) -> Result<OwnedFd, String> {
    let proto = pkt::ETH_P_IP.to_be();
    // SAFETY: socket(2) with no memory argument.
    let s = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, i32::from(proto)) };
    check!(s >= 0, "socket(AF_PACKET): errno {}", errno());
    // SAFETY: `s` is a new descriptor of ours.
    let s = unsafe { OwnedFd::from_raw_fd(s) };
    hardening::setsockopt_int(s.as_raw_fd(), SOL_PACKET, PACKET_VNET_HDR, 1)?;
    // SAFETY: An all-zero sockaddr_ll is valid.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = proto;
    sll.sll_ifindex = ifindex;
    // SAFETY: `sll` is a sockaddr_ll of the size given.
    let r = unsafe { libc::bind(s.as_raw_fd(), (&sll as *const libc::sockaddr_ll).cast(), std::mem::size_of::<libc::sockaddr_ll>() as u32) };
    check!(r == 0, "bind(AF_PACKET): errno {}", errno());
    Ok(s)
}

/// The virtio-net header `sock` ([`packet_socket_vnet`]) reads with
/// `frame`, waiting up to 3 s; other frames are skipped.
fn vnet_of(sock: &OwnedFd, frame: &[u8], what: &str) -> Result<vnet::Vnet, String> {
    const VNET_HDR_LEN: usize = 10;
    let mut buf = vec![0u8; 70000];
    let end = Instant::now() + Duration::from_secs(3);
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let Some(m) = recv_within(sock, &mut buf, left) else {
            return Err(format!("{what}: the frame did not reach the AF_PACKET socket within 3 s"));
        };
        if m >= VNET_HDR_LEN && buf[VNET_HDR_LEN..m] == frame[..] {
            return Ok(vnet::Vnet::parse(&buf[..VNET_HDR_LEN]));
        }
    }
}

/// Whether the TCP segment `tcp` has a right checksum over IPv4 `src`,
/// `dst`.
fn tcp_csum_ok(src: [u8; 4], dst: [u8; 4], tcp: &[u8]) -> bool {
    let mut b = Vec::with_capacity(12 + tcp.len());
    b.extend_from_slice(&src);
    b.extend_from_slice(&dst);
    b.extend_from_slice(&[0, 6]);
    b.extend_from_slice(&(tcp.len() as u16).to_be_bytes());
    b.extend_from_slice(tcp);
    pkt::csum(&b) == 0
}

/// The TCP segments of `data` forwarded out of `f` (a TUN without
/// offloads: the stack segments and checksums in software), `mss` bytes
/// each: right IPv4 and TCP checksums, consecutive sequence numbers from
/// `seq`, the payload intact and in order. Other packets are skipped.
fn tcp_segments_forwarded(f: &Tun, src: [u8; 4], dst: [u8; 4], seq: u32, data: &[u8], mss: usize, what: &str) -> TestResult {
    let want = data.len().div_ceil(mss);
    let mut got = Vec::new();
    let mut buf = vec![0u8; 70000];
    let t0 = Instant::now();
    let mut seen = 0;
    while seen < want {
        check!(t0.elapsed() < Duration::from_secs(5), "{what}: {seen} of {want} forwarded segments within 5 s");
        let Ok(m) = f.read_timeout(&mut buf, Duration::from_millis(500)) else { continue };
        let Some(ip) = pkt::parse_ipv4(&buf[..m]) else { continue };
        if ip.proto != 6 || ip.src != src || ip.dst != dst {
            continue;
        }
        let tcp = ip.payload;
        check!(tcp.len() >= 20, "{what}: segment {seen}: {} bytes of TCP", tcp.len());
        check!(tcp_csum_ok(src, dst, tcp), "{what}: segment {seen}: TCP checksum {:#06x} wrong", u16::from_be_bytes([tcp[16], tcp[17]]));
        let s = u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]);
        let off = usize::from(tcp[12] >> 4) * 4;
        let payload = &tcp[off..];
        check!(s == seq.wrapping_add(got.len() as u32), "{what}: segment {seen}: sequence {s}, want {}", seq.wrapping_add(got.len() as u32));
        check!(payload.len() == mss.min(data.len() - got.len()), "{what}: segment {seen}: {} bytes of payload", payload.len());
        got.extend_from_slice(payload);
        seen += 1;
    }
    check!(got == data, "{what}: the forwarded segments are not the payload");
    Ok(())
}

/// Checksum offload and GSO from vhost-net's transmit queue, the same
/// expectations on both drivers (tun.c's `virtio_net_hdr_to_skb()` on
/// either path, `tun_xdp_one()` for batched buffers, `tun_get_user()` for
/// a `sendmsg` each), each case alone in a kick, on both paths (sndbuf
/// `INT_MAX` and below; GSO frames past a page take the single path even
/// when vhost-net batches). Through a TAP with an address (header 12)
/// and forwarding to a TUN without offloads:
///
/// * UDP with `NEEDS_CSUM` (the checksum field holds the pseudo-header
///   sum): the skb is `CHECKSUM_PARTIAL` at 34/6 (an `AF_PACKET` socket
///   with `PACKET_VNET_HDR` reads `NEEDS_CSUM` 34/6), and a local socket
///   gets the datagram;
/// * UDP with a wrong checksum, without flags and with `DATA_VALID`
///   (which tun.c ignores: `virtio_net_hdr_to_skb()` does not read it,
///   only virtio_net's own receive trusts it): no flags read back
///   (`CHECKSUM_NONE`), not delivered (the next datagram the socket gets
///   is a good one sent after them);
/// * TCPv4 GSO (`gso_size` 1000, `NEEDS_CSUM` 34/16) of 3000 and 6000
///   bytes to a peer behind the TUN: read back as `GSO_TCPV4` 1000 with
///   `NEEDS_CSUM` 34/16, and forwarded as 3 and 6 segments with right
///   checksums, consecutive sequence numbers, the payload intact.
///
/// Each case is one `rx_packets` and its frame's length in `rx_bytes`,
/// no drop, no frame error. UDP-tunnel GSO: [`t_vhost_net_tx_tnl_offloads`].
pub fn t_vhost_net_tx_offloads(n: Node) -> TestResult {
    with_vhost_net(n, tx_offloads_on)
}

fn tx_offloads_on(n: Node) -> TestResult {
    use vnet::{Vnet, F_DATA_VALID, F_NEEDS_CSUM, GSO_TCPV4};
    let name = format!("{}vof0", n.tap_prefix);
    let fwd = format!("{}vof1", n.tun_prefix);
    let t = Tun::create(n.path, &name, IFF_TAP | IFF_NO_PI | IFF_VNET_HDR).map_err(|e| format!("TUNSETIFF {name}: errno {e}"))?;
    set_vnet_hdr_sz(&t, HDR_LEN)?;
    vnet::tnl::no_ipv6(&name);
    sh(&format!("ip addr add 10.96.1.1/24 dev {name} && ip link set {name} up"))?;
    write_file(&format!("/proc/sys/net/ipv4/conf/{name}/forwarding"), "1")?;
    let f = Tun::create(n.path, &fwd, IFF_TUN | IFF_NO_PI).map_err(|e| format!("TUNSETIFF {fwd}: errno {e}"))?;
    vnet::tnl::no_ipv6(&fwd);
    ptp_up(&fwd, "10.96.2.1", "10.96.2.2")?;
    let mac = hwaddr(&name)?;
    let (peer, me, far) = ([10, 96, 1, 2], [10, 96, 1, 1], [10, 96, 2, 2]);
    let peer_mac = [2, 0, 0, 0, 0x96, 2];
    let udp = std::net::UdpSocket::bind("10.96.1.1:9000").map_err(|e| e.to_string())?;
    udp.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;
    let psock = packet_socket_vnet(nl::ifindex(&name))?;
    let mut vh = Vhost::with_pages(TX_SLOTS * TX_SLOT / PAGE)?;
    vh.set_backend(t.fd()).map_err(|e| format!("VHOST_NET_SET_BACKEND: errno {e} ({})", errname(e)))?;
    let mut ubuf = vec![0u8; 4096];
    // Sends `h` + `frame` alone in a kick; the skb's header as read back
    // and the counters' moves checked.
    let send = |vh: &mut Vhost, what: &str, h: Vnet, frame: &[u8]| -> Result<Vnet, String> {
        let before = TxStats::of(&name)?;
        tx_kick(vh, &[hdr(&h, frame)]).map_err(|e| format!("{what}: {e}"))?;
        let got = vnet_of(&psock, frame, what)?;
        let d = TxStats::of(&name)?.since(&before);
        let want = TxStats { rx_packets: 1, rx_bytes: frame.len() as u64, ..Default::default() };
        check!(d == want, "{what}: the counters moved by {d:?}, tun.c's count: {want:?}");
        Ok(got)
    };
    let mut seq = 1u32;
    for (path, sndbuf) in [("batched", i32::MAX), ("a sendmsg each", 4 << 20)] {
        set_sndbuf(&t, sndbuf)?;
        // UDP, NEEDS_CSUM.
        let what = format!("{path}: UDP with NEEDS_CSUM");
        let data: Vec<u8> = (0..1200u32).map(|i| (i * 13) as u8 ^ seq as u8).collect();
        let frame = pkt::eth(mac, peer_mac, pkt::ETH_P_IP, &vnet::udp_partial(peer, me, 5555, 9000, &data));
        let h = Vnet { flags: F_NEEDS_CSUM, csum_start: 34, csum_offset: 6, ..Default::default() };
        let got = send(&mut vh, &what, h, &frame)?;
        check!(got == Vnet { hdr_len: got.hdr_len, ..h }, "{what}: the skb's header {got:?}, want {h:?}");
        let (m, _) = udp.recv_from(&mut ubuf).map_err(|e| format!("{what}: datagram: {e}"))?;
        check!(ubuf[..m] == data[..], "{what}: a datagram of {m} bytes, not the one sent");

        // UDP with a wrong checksum, without flags and with DATA_VALID
        // (which tun.c ignores: only virtio_net's receive trusts it): the
        // skb is CHECKSUM_NONE and UDP drops it; then a good one.
        let what = format!("{path}: UDP with a wrong checksum");
        for flags in [0, F_DATA_VALID] {
            let bad: Vec<u8> = vec![0xbd ^ flags; 100];
            let mut ip = pkt::ipv4(peer, me, pkt::IPPROTO_UDP, &pkt::udp(5555, 9000, &bad));
            ip[26] ^= 0x5a;
            let frame = pkt::eth(mac, peer_mac, pkt::ETH_P_IP, &ip);
            let got = send(&mut vh, &format!("{what}, flags {flags}"), Vnet { flags, ..Default::default() }, &frame)?;
            check!(got == Vnet::default(), "{what}, flags {flags}: the skb's header {got:?}, want none");
        }
        let good: Vec<u8> = (0..100u32).map(|i| 0x60 ^ i as u8).collect();
        let frame = pkt::eth(mac, peer_mac, pkt::ETH_P_IP, &pkt::ipv4(peer, me, pkt::IPPROTO_UDP, &pkt::udp(5555, 9000, &good)));
        send(&mut vh, &format!("{what}, the next"), Vnet::default(), &frame)?;
        let (m, _) = udp.recv_from(&mut ubuf).map_err(|e| format!("{what}: the next datagram: {e}"))?;
        check!(ubuf[..m] == good[..], "{what}: delivered ({m} bytes, {:02x?}...)", &ubuf[..m.min(4)]);

        // TCPv4 GSO, forwarded: once batched, once past a page.
        for len in [3000usize, 6000] {
            let what = format!("{path}: TCPv4 GSO of {len} bytes");
            let data: Vec<u8> = (0..len as u32).map(|i| (i * 31 + i / 7) as u8).collect();
            let mut ip = vnet::tcp_seg(peer, far, 5555, 80, seq, 1, 0x18, &[], &data);
            let s = vnet::pseudo_sum(peer, far, 6, 20 + data.len());
            ip[36..38].copy_from_slice(&s.to_be_bytes());
            let frame = pkt::eth(mac, peer_mac, pkt::ETH_P_IP, &ip);
            check!((HDR_LEN + frame.len() <= XDP_MAX) == (len == 3000), "{what}: {} bytes", frame.len());
            let h = Vnet { flags: F_NEEDS_CSUM, gso_type: GSO_TCPV4, hdr_len: 54, gso_size: 1000, csum_start: 34, csum_offset: 16 };
            let got = send(&mut vh, &what, h, &frame)?;
            check!(got == Vnet { hdr_len: got.hdr_len, ..h }, "{what}: the skb's header {got:?}, want {h:?}");
            tcp_segments_forwarded(&f, peer, far, seq, &data, 1000, &what)?;
            seq = seq.wrapping_add(len as u32);
        }
        println!("# {path}: checksum states and TCPv4 GSO as tun.c's");
    }
    vh.set_backend(-1).map_err(|e| format!("VHOST_NET_SET_BACKEND -1: errno {e}"))?;
    Ok(())
}

/// `VIRTIO_NET_F_HOST_UDP_TUNNEL_GSO` (7.3): bit 67, in the second word.
const VIRTIO_NET_F_HOST_UDP_TUNNEL_GSO: u64 = 1 << (67 - 64);

/// UDP-tunnel GSO from vhost-net's transmit queue (7.3): with
/// `VIRTIO_NET_F_HOST_UDP_TUNNEL_GSO` negotiated vhost-net's socket header
/// is the 24-byte `virtio_net_hdr_v1_hash_tunnel` (its `sock_hlen`), and a
/// TAP with that `TUNSETVNETHDRSZ` takes tunnel GSO from it (tun.c's
/// `tun_vnet_hdr_guest_features()`). A geneve packet over IPv4 whose inner
/// UDP payload is `GSO_UDP_L4 | GSO_UDP_TUNNEL_IPV4`, 1000-byte segments
/// (vnet/tnl.rs's frames), reaches a local socket on the geneve port as
/// one datagram a segment, each the tunnel's headers and the next 1000
/// bytes: 3000 bytes (batched: `tun_xdp_one()`, which reads the tunnel
/// fields from vhost-net's copy of the header) and 6000 (past a page:
/// `tun_get_user()`), without and with the outer checksum
/// (`F_UDP_TUNNEL_CSUM`), on both paths; each one `rx_packets`, its length
/// in `rx_bytes`, no drop, no frame error. Skipped on 6.12, which has no
/// UDP-tunnel GSO in tun.c nor in vhost-net.
pub fn t_vhost_net_tx_tnl_offloads(n: Node) -> TestResult {
    if !kernel_is_7_3() {
        skip!("6.12: no UDP-tunnel GSO in tun.c or vhost-net (VIRTIO_NET_F_HOST_UDP_TUNNEL_GSO, TUN_VNET_TNL_SIZE are 7.3's)");
    }
    with_vhost_net(n, tx_tnl_offloads_on)
}

fn tx_tnl_offloads_on(n: Node) -> TestResult {
    use vnet::tnl::{tnl_write_frame, tnl_write_hdr, Ip, GENEVE_HDR, GENEVE_PORT, TNL_INNER, TNL_SIZE};
    let name = format!("{}vtn0", n.tap_prefix);
    let t = Tun::create(n.path, &name, IFF_TAP | IFF_NO_PI | IFF_VNET_HDR).map_err(|e| format!("TUNSETIFF {name}: errno {e}"))?;
    set_vnet_hdr_sz(&t, TNL_SIZE)?;
    vnet::tnl::no_ipv6(&name);
    sh(&format!("ip addr add 10.96.3.1/24 dev {name} && ip link set {name} up"))?;
    let mac = hwaddr(&name)?;
    let sock = std::net::UdpSocket::bind(format!("10.96.3.1:{GENEVE_PORT}")).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(3))).map_err(|e| e.to_string())?;
    // What vhost-net offers, then the tunnel header negotiated.
    let control = std::fs::OpenOptions::new().read(true).write(true).open("/dev/vhost-net").map_err(|e| format!("/dev/vhost-net: {e}"))?;
    let mut have = [FEATURE_WORDS as u64, 0, 0];
    ioctl_ptr(control.as_raw_fd(), VHOST_GET_FEATURES_ARRAY, have.as_mut_ptr()).map_err(|e| format!("VHOST_GET_FEATURES_ARRAY: errno {e}"))?;
    drop(control);
    check!(have[2] & VIRTIO_NET_F_HOST_UDP_TUNNEL_GSO != 0, "7.3's vhost-net offers no VIRTIO_NET_F_HOST_UDP_TUNNEL_GSO: {:#x?}", &have[1..]);
    let mut vh = Vhost::with_features(TX_SLOTS * TX_SLOT / PAGE, &[VIRTIO_F_VERSION_1, VIRTIO_NET_F_HOST_UDP_TUNNEL_GSO])?;
    vh.set_backend(t.fd()).map_err(|e| format!("VHOST_NET_SET_BACKEND: errno {e} ({})", errname(e)))?;
    let outer = Ip::V4([10, 96, 3, 2], [10, 96, 3, 1]);
    let mut buf = vec![0u8; 65536];
    for (path, sndbuf) in [("batched", i32::MAX), ("a sendmsg each", 4 << 20)] {
        set_sndbuf(&t, sndbuf)?;
        for (len, csum) in [(3000usize, false), (3000, true), (6000, false)] {
            let what = format!("{path}: tunnel GSO of {len} bytes, outer checksum {csum}");
            let data: Vec<u8> = (0..len as u32).map(|i| (i * 11 + i / 253 + len as u32) as u8).collect();
            let w = tnl_write_frame(&tnl_write_hdr(outer, csum), mac, outer, csum, &data);
            check!((w.len() <= XDP_MAX) == (len == 3000) && w.len() <= TX_SLOT, "{what}: {} bytes", w.len());
            let before = TxStats::of(&name)?;
            tx_kick(&mut vh, &[w.clone()]).map_err(|e| format!("{what}: {e}"))?;
            let mut got = Vec::new();
            for i in 0..len / 1000 {
                let (m, _) = sock.recv_from(&mut buf).map_err(|e| format!("{what}: datagram {i}: {e}"))?;
                check!(m == TNL_INNER + 1000, "{what}: datagram {i}: {m} bytes");
                check!(buf[..8] == GENEVE_HDR, "{what}: datagram {i}: geneve header {:x?}", &buf[..8]);
                got.extend_from_slice(&buf[TNL_INNER..m]);
            }
            check!(got == data, "{what}: the datagrams are not the payload");
            let d = TxStats::of(&name)?.since(&before);
            let want = TxStats { rx_packets: 1, rx_bytes: (w.len() - TNL_SIZE) as u64, ..Default::default() };
            check!(d == want, "{what}: the counters moved by {d:?}, tun.c's count: {want:?}");
        }
    }
    vh.set_backend(-1).map_err(|e| format!("VHOST_NET_SET_BACKEND -1: errno {e}"))?;
    println!("# tunnel GSO of 3000 and 6000 bytes through a 24-byte header, both paths: segmented, delivered, counted");
    Ok(())
}

/// Where the XDP test's receive buffers start (after `tx_kick()`'s
/// slots), and how many it offers at once.
const XDP_RX_AT: usize = TX_SLOTS * TX_SLOT;
const XDP_RX_BUFS: usize = 32;

/// vhost-net on a TAP with an XDP program (native, by rtnetlink), tun.ko
/// the reference: XDP_PASS with 600 frames each way (transmit in
/// `TUN_MSG_PTR` batches through `tun_xdp_one()`); XDP_DROP of what
/// vhost-net transmits (nothing reaches the stack, one `rx_dropped`
/// each); XDP_TX of it (each frame comes back into the receive queue,
/// an xdp_frame on the ring, behind the zeroed header; `rx_*` count it
/// going in, `tx_*` with the header coming out), and with the queue the
/// program sees written into it (`rx_queue_index`, `ingress_ifindex`);
/// frames another TAP's program, and a veth's where the guest has
/// veth.ko, redirect into this one (`ndo_xdp_xmit`) read by vhost-net's
/// receive path (`vhost_net_buf_peek_len()` of an xdp_frame,
/// `tun_recvmsg()`); and the backend's device deleted under its file,
/// the file attached to a new device: the program sees the new one.
pub fn t_vhost_net_xdp(n: Node) -> TestResult {
    with_vhost_net(n, vhost_net_xdp_on)
}

/// Offers the XDP test's receive buffers, filled with 0xee.
fn xdp_rx_offer(vh: &mut Vhost, k: usize) -> TestResult {
    let bufs: Vec<(*mut u8, usize)> = (0..k).map(|i| (vh.buf.at(XDP_RX_AT + i * 2048), 2048)).collect();
    for &(b, len) in &bufs {
        // SAFETY: A receive slot of our buffer pages, not in flight.
        unsafe { std::ptr::write_bytes(b, 0xee, len) };
    }
    vh.rx.add_many(&bufs, true)
}

/// Waits for `frames` to come into the receive buffers offered by
/// `xdp_rx_offer()`, in order, each behind the zeroed header.
fn xdp_rx_check(vh: &mut Vhost, frames: &[Vec<u8>], what: &str) -> TestResult {
    // As data_both_ways(): 7.3's vhost-net writes num_buffers 1, 6.12's
    // tun and vhost-net leave the bytes.
    let num_buffers = if kernel_is_7_3() { [1, 0] } else { [0xee, 0xee] };
    for (i, f) in frames.iter().enumerate() {
        let len = vh.rx.wait_used(Duration::from_secs(5)).map_err(|e| format!("{what}: frame {i}: {e}"))?;
        if len as usize != HDR_LEN + f.len() {
            // Which frame came instead (their lengths differ), and what
            // came after it.
            let which = |len: u32| frames.iter().position(|g| g.len() + HDR_LEN == len as usize);
            let mut after = vec![which(len)];
            while let Ok(l) = vh.rx.wait_used(Duration::from_millis(300)) {
                after.push(which(l));
            }
            return Err(format!("{what}: frame {i}: used length {len}, expected {}; the frames that came, from this one: {after:?}", HDR_LEN + f.len()));
        }
        // SAFETY: The device wrote `len` bytes into receive slot `i` and
        // gave it back (buffers come back in order).
        let got = unsafe { std::slice::from_raw_parts(vh.buf.at(XDP_RX_AT + i * 2048), len as usize) };
        check!(got[..10].iter().all(|&b| b == 0) && got[10..12] == num_buffers, "{what}: frame {i}: header {:02x?}", &got[..HDR_LEN]);
        check!(got[HDR_LEN..] == f[..], "{what}: frame {i} differs");
    }
    Ok(())
}

fn vhost_net_xdp_on(n: Node) -> TestResult {
    use crate::abi::xdp::{attach, delta, detach, quiet_up, redirect_prog, ret_prog, rxq_prog, XDP_DROP, XDP_PASS, XDP_TX, ZERO};
    let name = format!("{}vx0", n.tap_prefix);
    let t = vhost_tap(n, &name, IFF_TAP | IFF_NO_PI, HDR_LEN)?;
    let nl = nl::Nl::open(0).map_err(|e| e.to_string())?;
    attach(&nl, &name, &ret_prog(XDP_PASS)?)?;
    let mut vh = Vhost::with_pages((XDP_RX_AT + XDP_RX_BUFS * 2048) / PAGE)?;
    vh.set_backend(t.fd()).map_err(|e| format!("VHOST_NET_SET_BACKEND: errno {e} ({})", errname(e)))?;
    check_batching(&t)?;
    data_both_ways(&mut vh, &name)?;

    let mac = hwaddr(&name)?;
    let rsock = packet_socket(nl::ifindex(&name), true)?;
    let frames: Vec<Vec<u8>> = (0..XDP_RX_BUFS).map(|i| test_frame(mac, i as u8, 60 + i * 13)).collect();
    let bufs: Vec<Vec<u8>> = frames.iter().map(|f| hdr0(f)).collect();
    let len_sum: u64 = frames.iter().map(|f| f.len() as u64).sum();
    let k = frames.len() as u64;

    // XDP_DROP of what vhost-net transmits.
    attach(&nl, &name, &ret_prog(XDP_DROP)?)?;
    let c0 = counters(&name)?;
    for chunk in bufs.chunks(TX_SLOTS) {
        tx_kick(&mut vh, chunk)?;
    }
    let mut rb = [0u8; 2048];
    check!(recv_within(&rsock, &mut rb, Duration::from_millis(300)).is_none(), "XDP_DROP: a frame vhost-net sent reached the stack");
    let d = delta(&c0, &counters(&name)?);
    check!(d == Counters { rx_dropped: k, ..ZERO }, "XDP_DROP of {k} transmitted frames: counters {d:?}, expected rx_dropped {k}");

    // XDP_TX: back into the receive queue.
    attach(&nl, &name, &ret_prog(XDP_TX)?)?;
    xdp_rx_offer(&mut vh, frames.len())?;
    let c0 = counters(&name)?;
    for chunk in bufs.chunks(TX_SLOTS) {
        tx_kick(&mut vh, chunk)?;
    }
    xdp_rx_check(&mut vh, &frames, "XDP_TX")?;
    check!(recv_within(&rsock, &mut rb, Duration::from_millis(100)).is_none(), "XDP_TX: a frame reached the stack");
    let d = delta(&c0, &counters(&name)?);
    let want = Counters { rx_packets: k, rx_bytes: len_sum, tx_packets: k, tx_bytes: len_sum + k * HDR_LEN as u64, ..ZERO };
    check!(d == want, "XDP_TX of {k} frames: counters {d:?}, expected {want:?}");

    // The queue a program sees (tun.c's per-file `xdp_rxq`): queue 0 of
    // this device, written into each frame, which comes back by XDP_TX.
    let with_queue = |frames: &[Vec<u8>], ifindex: i32| -> Vec<Vec<u8>> {
        frames
            .iter()
            .map(|f| {
                let mut g = f.clone();
                g[14..18].copy_from_slice(&0u32.to_ne_bytes());
                g[18..22].copy_from_slice(&ifindex.to_ne_bytes());
                g
            })
            .collect()
    };
    let rxq = rxq_prog()?;
    attach(&nl, &name, &rxq)?;
    xdp_rx_offer(&mut vh, frames.len())?;
    for chunk in bufs.chunks(TX_SLOTS) {
        tx_kick(&mut vh, chunk)?;
    }
    xdp_rx_check(&mut vh, &with_queue(&frames, nl::ifindex(&name)), "XDP_TX of the queue the program saw")?;

    // Redirected in from another TAP, read by vhost-net.
    detach(&nl, &name)?;
    let src_name = format!("{}vxs", n.tap_prefix);
    let src = Tun::create_nonblock(n.path, &src_name, IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF {src_name}: errno {e}"))?;
    quiet_up(&src_name)?;
    attach(&nl, &src_name, &redirect_prog(&name)?)?;
    xdp_rx_offer(&mut vh, frames.len())?;
    let c0 = counters(&name)?;
    for (i, f) in frames.iter().enumerate() {
        check!(src.write(f) == Ok(f.len()), "redirect: write {i} on {src_name}");
    }
    xdp_rx_check(&mut vh, &frames, "redirected")?;
    let d = delta(&c0, &counters(&name)?);
    let want = Counters { tx_packets: k, tx_bytes: len_sum + k * HDR_LEN as u64, ..ZERO };
    check!(d == want, "{k} frames redirected in: counters {d:?}, expected {want:?}");

    // And from a veth, where the guest has one.
    let veth = crate::abi::xdp::veth_pair("rt-vv0", "rt-vv1")?;
    if veth {
        let r = (|| -> TestResult {
            attach(&nl, "rt-vv1", &redirect_prog(&name)?)?;
            let sock = packet_socket(nl::ifindex("rt-vv0"), false)?;
            xdp_rx_offer(&mut vh, frames.len())?;
            let c0 = counters(&name)?;
            for (i, f) in frames.iter().enumerate() {
                // SAFETY: An all-zero sockaddr_ll is valid.
                let mut to: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
                to.sll_family = libc::AF_PACKET as u16;
                to.sll_protocol = ETH_P_TEST.to_be();
                to.sll_ifindex = nl::ifindex("rt-vv0");
                to.sll_halen = 6;
                // SAFETY: `f` and `to` are valid for the lengths given.
                let r = unsafe { libc::sendto(sock.as_raw_fd(), f.as_ptr().cast(), f.len(), 0, (&to as *const libc::sockaddr_ll).cast(), std::mem::size_of::<libc::sockaddr_ll>() as u32) };
                check!(r == f.len() as isize, "veth: frame {i}: sendto: {r}, errno {}", errno());
            }
            xdp_rx_check(&mut vh, &frames, "redirected from a veth")?;
            let d = delta(&c0, &counters(&name)?);
            let want = Counters { tx_packets: k, tx_bytes: len_sum + k * HDR_LEN as u64, ..ZERO };
            check!(d == want, "{k} frames redirected in from a veth: counters {d:?}, expected {want:?}");
            Ok(())
        })();
        let _ = sh("ip link del rt-vv0");
        r?;
    }

    // The backend's device deleted under its file, and the file attached
    // to a new device, which vhost-net then transmits on: the program
    // sees the new device.
    vh.set_backend(-1).map_err(|e| format!("VHOST_NET_SET_BACKEND -1: errno {e}"))?;
    sh(&format!("ip link del {name}"))?;
    let name2 = format!("{}vx2", n.tap_prefix);
    let mut ifr = IfReq::new(&name2, IFF_TAP | IFF_NO_PI | IFF_VNET_HDR);
    ioctl_ptr(t.fd(), TUNSETIFF, &mut ifr).map_err(|e| format!("TUNSETIFF {name2} on {name}'s file: errno {e}"))?;
    set_vnet_hdr_sz(&t, HDR_LEN)?;
    vnet::tnl::no_ipv6(&name2);
    sh(&format!("ip link set {name2} up"))?;
    attach(&nl, &name2, &rxq)?;
    vh.set_backend(t.fd()).map_err(|e| format!("VHOST_NET_SET_BACKEND on {name2}: errno {e} ({})", errname(e)))?;
    xdp_rx_offer(&mut vh, frames.len())?;
    for chunk in bufs.chunks(TX_SLOTS) {
        tx_kick(&mut vh, chunk)?;
    }
    xdp_rx_check(&mut vh, &with_queue(&frames, nl::ifindex(&name2)), "XDP_TX on the file's second device")?;
    vh.set_backend(-1).map_err(|e| format!("VHOST_NET_SET_BACKEND -1: errno {e}"))?;
    drop(vh);
    drop(src);
    drop(t);
    let from_veth = if veth { ", and from a veth" } else { " (no veth in this guest)" };
    println!("# XDP under vhost-net: PASS 600 each way, DROP and TX of {k} transmitted frames, {k} redirected in from a TAP{from_veth}");
    Ok(())
}
