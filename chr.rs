// SPDX-License-Identifier: GPL-2.0

//! The character device's file operations (tun.c's `tun_fops`): open and
//! close, read (`tun_chr_read_iter`, `tun_ring_recv`, `tun_put_user`),
//! write (`tun_chr_write_iter`, `tun_get_user`, `tun_flow_update`), poll;
//! the ioctls are `ioctl.rs`.

mod pkt;
mod read;
mod sock;

use crate::ioctl::{self, TUN_PI_LEN};
use crate::kver;
use crate::napi::{tun_napi_enabled, tun_napi_frags_enabled, tun_napi_queue, tun_napi_schedule};
use crate::sys::errno::{EBADFD, EMSGSIZE, EOPNOTSUPP};
use crate::sys::tun::{
    BatchOffer, BatchVerdict, RecvMsg, SendMsg, Sock, SockOps, VnetHdr, XdpBuff,
};
use crate::sys::xdp::{do_xdp_generic, QueueXdpRxq};
use crate::sys::{
    self, poll, rcu, DropReason, Fasync, File, FileOps, IoctlAbi, IovIterDest, IovIterSource,
    MiscDevice, NetNs, PollTable, RcuDev, RingConsumer, Rtnl, RtnlLocked, SeqFile, SkBuff, TunPtr,
    TxRing,
};
use crate::vnet::{
    __tun_vnet_hdr_get, __tun_vnet_hdr_put, tun_vnet_hdr_guest_features, NETIF_F_GSO_UDP_TUNNEL,
    NETIF_F_GSO_UDP_TUNNEL_CSUM,
};
use crate::{
    bindings, queue, rps, xdp, DevKind, Tun, TunDev, TunFile, IFF_NO_PI, IFF_VNET_HDR, MAX_MTU,
    TUN_PROTO,
};
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU16, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};
use pkt::{Locked, Pkt};
use read::{__tun_wake_queue, tun_chr_read_iter, tun_do_read};

/// The largest write we accept: `MAX_MTU` plus an Ethernet and a VLAN
/// header. tun.c takes larger writes (with a larger linear part) and lets
/// the stack drop them; no valid frame is larger than this.
const MAX_FRAME: usize = MAX_MTU as usize + ETH_HLEN + 4;
const ETH_HLEN: usize = bindings::ETH_HLEN as usize;
/// `tun->align`: headroom of a written packet (`NET_SKB_PAD`, plus
/// `NET_IP_ALIGN` for TAP).
const TUN_ALIGN: usize = sys::NET_SKB_PAD;
/// `TUN_RX_PAD`: the headroom of a packet `tun_build_skb()` builds (before
/// XDP's).
pub(crate) const TUN_RX_PAD: usize = bindings::RTUN_NET_IP_ALIGN as usize + sys::NET_SKB_PAD;
/// `SKB_MAX_HEAD(align)`, tun.c's `good_linear`: the most a written packet
/// keeps in its linear part when it spans pages (`SKB_WITH_OVERHEAD`: less
/// the aligned `skb_shared_info`).
const fn good_linear(align: usize) -> usize {
    bindings::RTUN_PAGE_SIZE as usize - align - bindings::RTUN_SKB_SHINFO_SIZE as usize
}
/// `VLAN_HLEN`: a VLAN tag's size in a frame.
const VLAN_HLEN: usize = 4;
/// `offsetof(struct vlan_ethhdr, h_vlan_proto)`: where the tag goes.
const VLAN_OFFSET: usize = 12;
/// `TUN_PKT_STRIP`: the reader's buffer was too short for the packet.
const TUN_PKT_STRIP: u16 = bindings::TUN_PKT_STRIP as u16;
/// `ETH_P_IP`, `ETH_P_IPV6`, in network byte order.
const ETH_P_IP: u16 = (bindings::ETH_P_IP as u16).to_be();
const ETH_P_IPV6: u16 = (bindings::ETH_P_IPV6 as u16).to_be();

/// The open files of `/dev/net/rust_tun`.
pub(crate) struct TunChr;

#[vtable]
impl FileOps for TunChr {
    type Data = TunFile;

    fn open(file: &File, _misc: &MiscDevice) -> Result<Arc<TunFile>> {
        tun_chr_open(file)
    }

    fn release(tfile: Arc<TunFile>) {
        tun_chr_close(tfile)
    }

    #[inline]
    fn read_iter(tfile: &TunFile, to: &mut IovIterDest<'_>, noblock: bool) -> Result<usize> {
        tun_chr_read_iter(tfile, to, noblock)
    }

    #[inline]
    fn write_iter(tfile: &TunFile, from: &mut IovIterSource<'_>, noblock: bool) -> Result<usize> {
        tun_chr_write_iter(tfile, from, noblock)
    }

    fn poll<'f>(tfile: &'f TunFile, table: &PollTable<'f>) -> u32 {
        tun_chr_poll(tfile, table)
    }

    fn ioctl(tfile: ArcBorrow<'_, TunFile>, cmd: u32, arg: usize, abi: IoctlAbi) -> Result<isize> {
        ioctl::tun_chr_ioctl(tfile, cmd, arg, abi)
    }

    fn show_fdinfo(tfile: &TunFile, m: &mut SeqFile) {
        tun_chr_show_fdinfo(tfile, m)
    }

    fn fasync(tfile: &TunFile, req: &Fasync, on: bool) -> Result {
        tun_chr_fasync(tfile, req, on)
    }
}

/// `tun_chr_fasync()`: `O_ASYNC` on or off. On, the signals of each queued
/// packet (`SIGIO`, or `F_SETSIG`'s with `si_fd`) go to the caller's
/// process, which tun.c makes the file's owner whatever `F_SETOWN` said.
fn tun_chr_fasync(tfile: &TunFile, req: &Fasync, on: bool) -> Result {
    let owner = if on {
        Some(req.owner_allocate()?)
    } else {
        None
    };
    tfile.sock.fasync_helper(req, on)?;
    if let Some(owner) = owner {
        owner.set_current_tgid();
    }
    tfile.fasync.store(on, Ordering::Relaxed);
    Ok(())
}

/// `tun_chr_open()`: the file and its socket (which `sys/` makes the
/// file's, `socket.file`, see `FileSocket`).
fn tun_chr_open(file: &File) -> Result<Arc<TunFile>> {
    let sock = Sock::new(&TUN_PROTO)?;
    let tfile = Arc::pin_init(
        try_pin_init!(TunFile {
            ring <- TxRing::new(),
            tun: RcuDev::null(),
            detached: RcuDev::null(),
            queue_index: AtomicU16::new(0),
            xdp_rxq: QueueXdpRxq::new(),
            shutdown: AtomicBool::new(false),
            net: NetNs::current(),
            next_disabled: RtnlLocked::new(None),
            sock,
            ifindex: AtomicI32::new(0),
            fasync: AtomicBool::new(false),
        }),
        GFP_KERNEL,
    )?;
    // tun groks IOCB_NOWAIT just fine, mark it as such.
    file.set_fmode_nowait();
    Ok(tfile)
}

/// `tun_chr_show_fdinfo()`: `iff:` and the device's name (empty while
/// the file has none), which `ip -d tuntap show` reads.
fn tun_chr_show_fdinfo(tfile: &TunFile, m: &mut SeqFile) {
    let name = Rtnl::with(|rtnl| tfile.tun.get_rtnl(rtnl).map(|dev| dev.name()));
    let name = name.unwrap_or([0; bindings::IFNAMSIZ as usize]);
    let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    // The name as bytes, as C's `%s` prints it: names need not be UTF-8.
    m.write_bytes(b"iff:\t");
    m.write_bytes(&name[..end]);
    m.write_bytes(b"\n");
}

/// `tun_chr_close()`.
fn tun_chr_close(tfile: Arc<TunFile>) {
    queue::tun_detach(&tfile, true);
}

/// `tun_flow_update()`: the write path's flow bookkeeping. Refreshes or
/// creates the flow; for a known flow, runs the RFS record step -- behind
/// the `rfs_needed` static key unless the device is unguarded.
fn tun_flow_update(tun: &Tun, rxhash: u32, tfile: &TunFile) {
    let queue_index = tfile.queue_index.load(Ordering::Relaxed);
    let Some(rps_rxhash) = tun.flows.update(rxhash, queue_index) else {
        return;
    };
    let recorded = if tun.unguarded {
        Some(rps::sock_rps_record_flow_hash(
            &sys::tun::GlobalFlowTable,
            rps_rxhash,
        ))
    } else {
        rps::sock_rps_record_flow_hash_guarded(&sys::tun::GlobalFlowTable, rps_rxhash)
    };
    if recorded.is_some() {
        tun.stats.rfs_records_inc();
    }
}

/// `tun_get_user()`: builds a packet from the writer's buffer and hands it
/// to the stack. The skb is built as tun.c builds it (`tun_alloc_skb`):
/// with a sleeping allocation, linear under a page, paged above.
fn tun_get_user(
    dev: &TunDev,
    tfile: &TunFile,
    from: &mut IovIterSource<'_>,
    noblock: bool,
) -> Result<usize> {
    let tun = dev.priv_();
    let flags = tun.flags();
    let total = from.len();
    let mut len = total;
    let mut proto = ETH_P_IP;

    if flags & IFF_NO_PI == 0 {
        if len < TUN_PI_LEN {
            return Err(EINVAL);
        }
        len -= TUN_PI_LEN;
        let mut pi = [0u8; TUN_PI_LEN];
        from.copy_from_iter_full(&mut pi)?;
        proto = u16::from_ne_bytes([pi[2], pi[3]]);
    }

    // The whole header zeroed, tunnel part too (7.3's `memset`); the
    // tunnel offloads the writer may use follow from the header size.
    let mut gso = VnetHdr::default();
    let mut features = 0;
    let mut hdr_len = 0;
    if flags & IFF_VNET_HDR != 0 {
        let vnet_hdr_sz = tun.vnet_hdr_size();
        features = tun_vnet_hdr_guest_features(vnet_hdr_sz);
        hdr_len = usize::from(__tun_vnet_hdr_get(vnet_hdr_sz, features, from, &mut gso)?);
        len -= vnet_hdr_sz;
    }
    let tnl = features & NETIF_F_GSO_UDP_TUNNEL != 0;
    let tnl_csum = features & NETIF_F_GSO_UDP_TUNNEL_CSUM != 0;

    let kind = tun.kind();
    let align = match kind {
        DevKind::Tun => TUN_ALIGN,
        DevKind::Tap => TUN_ALIGN + bindings::RTUN_NET_IP_ALIGN as usize,
    };
    if kind == DevKind::Tap && (len < ETH_HLEN || (hdr_len != 0 && hdr_len < ETH_HLEN)) {
        return Err(EINVAL);
    }
    if len > MAX_FRAME {
        return Err(EMSGSIZE);
    }

    let drop = |e: Error| {
        dev.core_stats_rx_dropped_inc();
        tun.stats.write_drops_inc();
        e
    };
    // Charged to the file's send buffer: past it, wait or `EAGAIN` (which,
    // as in tun.c, is not a drop).
    // The headers the vnet header names go in the linear part.
    let linear = match hdr_len {
        0 => good_linear(align),
        h => h.min(good_linear(align)),
    };
    // With an XDP program, a TAP's small non-blocking writes are built in
    // a page fragment and run through it natively (`tun_build_skb()`);
    // a GSO packet goes the skb way and through generic XDP, as tun.c's.
    let frags = tun_napi_frags_enabled(tfile);
    let mut skb_xdp = true;
    let mut built = None;
    if kind == DevKind::Tap
        && !frags
        && gso.gso_type() == 0
        && tun.xdp_prog.is_some()
        && xdp::tun_can_build_skb(tfile, len, noblock)
    {
        match xdp::tun_build_skb(dev, tfile, from, len).map_err(drop)? {
            xdp::Built::Consumed => return Ok(total),
            xdp::Built::Pass(skb) => built = Some(skb),
        }
        skb_xdp = false;
    }
    let mut skb = if let Some(skb) = built {
        Pkt::Skb(skb)
    } else if frags {
        // `IFF_NAPI_FRAGS`: the skb is the NAPI context's, laid out as the
        // writer's buffer is (tun.c: `tun_napi_alloc_frags()`).
        let frags = tfile.sock.napi_alloc_frags(len, from).map_err(drop)?;
        Pkt::Frags(frags.copy_from_iter(from).map_err(drop)?)
    } else {
        let skb = tfile
            .sock
            .alloc_send_skb(align, len, linear, noblock)
            .map_err(|e| if e == EAGAIN { e } else { drop(e) })?;
        Pkt::Skb(skb.copy_from_iter(from).map_err(drop)?)
    };
    // Checksum offload and GSO as the writer describes them, checked as
    // the kernel checks them; a bad header is a frame error (not a drop,
    // and never a WARN). On 7.3 after the device and the network header
    // are set, as 7.3's tun.c (its `virtio_net_hdr_to_skb()` reads them);
    // on 6.12 before, as 6.12's (`kver::VNET_AFTER_NETWORK_HEADER`).
    let vnet = flags & IFF_VNET_HDR != 0;
    if vnet
        && !kver::VNET_AFTER_NETWORK_HEADER
        && skb.vnet_hdr_tnl_to_skb(&gso, tnl, tnl_csum).is_err()
    {
        tun.stats.rx_frame_errors_inc();
        return Err(EINVAL);
    }
    skb.set_dev(dev);
    match kind {
        DevKind::Tun => {
            if flags & IFF_NO_PI != 0 {
                proto = match skb.first_byte().map(|b| b >> 4) {
                    Some(4) => ETH_P_IP,
                    Some(6) => ETH_P_IPV6,
                    _ => return Err(drop(EINVAL)),
                };
            }
            // Deliberate difference (7.3): tun.c 7.3 resets only the
            // network header here, leaving the mac header unset, which
            // `skb_reset_mac_len()` warns about under DEBUG_NET; rust_tun
            // resets both, as 6.12's tun.c reset the mac header.
            skb.set_l3(proto);
        }
        DevKind::Tap => {
            if kver::VNET_AFTER_NETWORK_HEADER && !skb.set_l2_network_header() {
                skb.drop_reason(DropReason::HDR_TRUNC);
                return Err(drop(ENOMEM));
            }
        }
    }
    if vnet
        && kver::VNET_AFTER_NETWORK_HEADER
        && skb.vnet_hdr_tnl_to_skb(&gso, tnl, tnl_csum).is_err()
    {
        tun.stats.rx_frame_errors_inc();
        return Err(EINVAL);
    }
    if kind == DevKind::Tap && !skb.eth_type_trans(dev) {
        skb.drop_reason(DropReason::HDR_TRUNC);
        return Err(drop(ENOMEM));
    }
    skb.reset_network_probe_transport();

    // `IFF_NAPI_FRAGS`: the context's mutex, which may sleep, before the
    // RCU read section in which the skb goes to GRO (tun.c holds it from
    // `tun_napi_alloc_frags()` on).
    let mut pkt = match skb {
        Pkt::Frags(frags) => Locked::Frags(frags.lock()),
        Pkt::Skb(skb) => Locked::Skb(skb),
    };
    let mut rxhash = 0;
    {
        // Under RCU, as tun.c: a writer that finds the device up delivers
        // before unregistration's `synchronize_net()` returns; one that
        // comes after `dev_close()` finds it down.
        //
        // `__tun_detach` waits for a grace period between renumbering the
        // queues and shrinking `real_num_rx_queues`, so the queue recorded
        // here is one the device still has when `get_rps_cpu()` checks it
        // (it warns otherwise). A detached file's stale index is not
        // recorded. Deliberate difference: tun.c records
        // `tfile->queue_index` unchecked.
        let rcu = rcu::read_lock();
        if dev.flags() & sys::IFF_UP == 0 {
            pkt.drop_reason(DropReason::DEV_READY);
            return Err(drop(EIO));
        }
        let queue_index = tfile.queue_index.load(Ordering::Relaxed);
        if u32::from(queue_index) < tun.numqueues.load(Ordering::Acquire) {
            pkt.record_rx_queue(queue_index);
        }
        // Generic XDP on what `tun_build_skb()` did not run the program
        // on. Deliberate difference: not on an `IFF_NAPI_FRAGS` packet,
        // which is the NAPI context's skb (`do_xdp_generic()` would free
        // it under the context).
        if skb_xdp {
            if let Some(prog) = tun.xdp_prog.get(&rcu) {
                if let Locked::Skb(skb) = pkt {
                    let bh = sys::BhDisabled::new();
                    match do_xdp_generic(prog, skb, &bh, &rcu) {
                        Some(skb) => pkt = Locked::Skb(skb),
                        None => return Ok(total),
                    }
                }
            }
        }
        // Flow hashes are only worth it with several queues, and a
        // steering program picks the queues without them.
        if tun.numqueues() > 1 && !tun.steering_prog.is_some() && !tfile.detached.is_set() {
            rxhash = pkt.hash_symmetric();
        }
        match pkt {
            // `IFF_NAPI_FRAGS`: to GRO now, in the context. `EBUSY` (the
            // context is busy, disabled or deleted) is not counted as a
            // drop, as tun.c.
            Locked::Frags(frags) => {
                frags
                    .gro_frags(dev, &rcu)
                    .map_err(|e| if e == EBUSY { e } else { drop(e) })?
            }
            // `IFF_NAPI`: onto the file's NAPI queue, for GRO in the
            // context's poll. `EBUSY` (the queue is detached) is not
            // counted as a drop, as tun.c.
            Locked::Skb(skb) if tun_napi_enabled(tfile) => tun_napi_queue(tfile, skb, false)?,
            Locked::Skb(skb) => tun_rx_batched(skb),
        }
    }
    dev.sw_netstats_rx_add(len as u32);

    if rxhash != 0 {
        tun_flow_update(tun, rxhash, tfile);
    }
    Ok(total)
}

/// `tun_rx_batched()`: a written packet straight into the stack, with
/// bottom halves off, in the writer's context. tun.c holds packets back on
/// the socket's write queue (up to `tun->rx_batched`, ethtool's
/// `rx-frames`) only while its caller says more follow (`more`): only
/// `tun_sendmsg()` with `MSG_MORE` does, for vhost-net, never a `write(2)`
/// (`tun_chr_write_iter()` passes false). rust_tun's `sendmsg` ignores
/// `MSG_MORE`, so every packet goes on at once whatever `rx_batched` says,
/// as a write's does in tun.c.
fn tun_rx_batched(skb: SkBuff) {
    skb.netif_receive_skb(&sys::BhDisabled::new())
}

/// `tun_chr_write_iter()`.
#[inline]
fn tun_chr_write_iter(
    tfile: &TunFile,
    from: &mut IovIterSource<'_>,
    noblock: bool,
) -> Result<usize> {
    let dev = tfile.tun.get().ok_or(EBADFD)?;
    tun_get_user(&dev, tfile, from, noblock)
}

/// `tun_chr_poll()`.
fn tun_chr_poll<'f>(tfile: &'f TunFile, table: &PollTable<'f>) -> u32 {
    let Some(dev) = tfile.tun.get() else {
        return poll::ERR;
    };
    // One wait queue, the socket's (tun.c: `sk_sleep(sk)`), for readers,
    // writers waiting for send-buffer space and pollers alike: a poller
    // such as vhost-net has one wait entry per poll table and must be
    // queued once.
    table.wait(tfile.sock.wq());

    let mut mask = 0;
    if !tfile.ring.is_empty() {
        mask |= poll::IN;
    }
    // `tun_sock_writeable()`: up, with send-buffer space (or, having
    // flagged that we wait, with space after all).
    let writeable = || dev.flags() & sys::IFF_UP != 0 && tfile.sock.writeable();
    if writeable() || (!tfile.sock.test_and_set_nospace() && writeable()) {
        mask |= poll::OUT;
    }
    if !dev.is_registered() {
        mask = poll::ERR;
    }
    mask
}
