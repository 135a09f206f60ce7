// SPDX-License-Identifier: GPL-2.0

//! XDP in a driver (`include/net/xdp.h`, `include/linux/filter.h`):
//! [`XdpProg`], a reference on a device's XDP program (what `ndo_bpf`'s
//! `XDP_SETUP_PROG` hands over); [`XdpFrame`], an `xdp_frame` owned
//! (redirected to the device, `ndo_xdp_xmit`, or made from a buffer for
//! `XDP_TX`); [`with_xdp_ctx`], the section programs run in; [`XdpRxq`],
//! the receive queue a program sees; and [`OwnedXdpBuff`], a packet in a
//! page fragment of the driver's, with room for a program, and every
//! fate a program's verdict gives it: an skb, a frame, a redirect, or
//! freed.

use super::netdev::device::NetDevice;
use super::rcu;
use super::skb::{IovIterSource, SkBuff};
use super::sync::lock::BhDisabled;
use crate::bindings;
use core::cell::Cell;
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::prelude::*;
use kernel::types::Opaque;

mod rxq;
pub(crate) use rxq::{QueueXdpRxq, XdpRxq};

/// `enum xdp_action`: a program's verdicts.
pub(crate) const XDP_ABORTED: u32 = bindings::RTUN_XDP_ABORTED;
pub(crate) const XDP_DROP: u32 = bindings::RTUN_XDP_DROP;
pub(crate) const XDP_PASS: u32 = bindings::RTUN_XDP_PASS;
pub(crate) const XDP_TX: u32 = bindings::RTUN_XDP_TX;
pub(crate) const XDP_REDIRECT: u32 = bindings::RTUN_XDP_REDIRECT;

/// `NETDEV_XDP_ACT_*`: what a device's XDP offers (`dev->xdp_features`).
pub(crate) const NETDEV_XDP_ACT_BASIC: u32 = bindings::RTUN_NETDEV_XDP_ACT_BASIC;
pub(crate) const NETDEV_XDP_ACT_REDIRECT: u32 = bindings::RTUN_NETDEV_XDP_ACT_REDIRECT;
pub(crate) const NETDEV_XDP_ACT_NDO_XMIT: u32 = bindings::RTUN_NETDEV_XDP_ACT_NDO_XMIT;

/// `XDP_PACKET_HEADROOM`: the headroom a program may grow the packet into.
pub(crate) const XDP_PACKET_HEADROOM: usize = bindings::RTUN_XDP_PACKET_HEADROOM as usize;

/// A counted reference on a loaded XDP program.
///
/// # Invariants
///
/// The pointer is a live `struct bpf_prog` of type `BPF_PROG_TYPE_XDP` on
/// which this value owns one reference.
pub(crate) struct XdpProg(NonNull<bindings::bpf_prog>);

// SAFETY: A program reference may be put from any thread (`bpf_prog_put()`
// defers the free to a work item where it must).
unsafe impl Send for XdpProg {}
// SAFETY: Running a program reads the program only; any number of CPUs
// run one at once, as every attach point does.
unsafe impl Sync for XdpProg {}

impl XdpProg {
    /// A reference of our own (`bpf_prog_inc()`) on `prog`.
    ///
    /// # Safety
    ///
    /// `prog` is a live XDP program the caller holds a reference on for
    /// the call (`ndo_bpf`'s `XDP_SETUP_PROG`).
    pub(super) unsafe fn get(prog: NonNull<bindings::bpf_prog>) -> Self {
        // SAFETY: A live program (the caller).
        unsafe { bindings::bpf_prog_inc(prog.as_ptr()) };
        // INVARIANT: The reference just taken.
        Self(prog)
    }

    /// The program.
    fn as_ptr(&self) -> *mut bindings::bpf_prog {
        self.0.as_ptr()
    }
}

impl Drop for XdpProg {
    fn drop(&mut self) {
        // SAFETY: Our reference, given back once.
        unsafe { bindings::bpf_prog_put(self.as_ptr()) };
    }
}

/// An `xdp_frame` we own: freed (`xdp_return_frame()`) on drop.
///
/// # Invariants
///
/// A live `xdp_frame` owned by this value.
pub(crate) struct XdpFrame(NonNull<bindings::xdp_frame>);

// SAFETY: A frame may be returned from any context.
unsafe impl Send for XdpFrame {}

impl XdpFrame {
    /// # Safety
    ///
    /// `p` is a live `xdp_frame` whose ownership the caller gives up.
    pub(crate) unsafe fn from_raw(p: NonNull<bindings::xdp_frame>) -> Self {
        // INVARIANT: As the caller guarantees.
        Self(p)
    }

    /// Gives up ownership of the frame.
    pub(crate) fn into_raw(self) -> NonNull<bindings::xdp_frame> {
        let p = self.0;
        core::mem::forget(self);
        p
    }

    /// The frame's bytes (`data`, `len`).
    #[inline]
    pub(crate) fn data(&self) -> &[u8] {
        // SAFETY: A live frame (type invariants) whose `len` bytes at
        // `data` are its packet, ours while we own it.
        unsafe {
            let f = &*self.0.as_ptr();
            core::slice::from_raw_parts(f.data.cast::<u8>(), f.len as usize)
        }
    }
}

impl Drop for XdpFrame {
    fn drop(&mut self) {
        // SAFETY: Ours (type invariants), returned once.
        unsafe { bindings::xdp_return_frame(self.0.as_ptr()) };
    }
}

/// The frames `ndo_xdp_xmit` is given (`frames[0..n]`): each taken as an
/// [`XdpFrame`] by the driver; those it does not take stay the caller's
/// (the core frees them: the count the op returns says how many it took).
///
/// # Invariants
///
/// `frames[taken..]` are live frames the caller still owns.
pub(crate) struct XdpXmitFrames<'a> {
    frames: &'a [*mut bindings::xdp_frame],
    taken: usize,
}

impl<'a> XdpXmitFrames<'a> {
    /// # Safety
    ///
    /// `frames` points to `n` live `xdp_frame` pointers for `'a`, each of
    /// which may be taken over (`ndo_xdp_xmit`'s contract).
    pub(super) unsafe fn new(frames: *mut *mut bindings::xdp_frame, n: usize) -> Self {
        let frames = if frames.is_null() || n == 0 {
            &[][..]
        } else {
            // SAFETY: As the caller guarantees.
            unsafe { core::slice::from_raw_parts(frames, n) }
        };
        // INVARIANT: None taken yet.
        Self { frames, taken: 0 }
    }

    /// Hands the frames to `f` in order until it gives one back (`Err`):
    /// that one, and those after it, stay the caller's.
    #[inline]
    pub(crate) fn take_while(
        &mut self,
        mut f: impl FnMut(XdpFrame) -> core::result::Result<(), XdpFrame>,
    ) {
        while let Some(&p) = self.frames.get(self.taken) {
            let Some(p) = NonNull::new(p) else {
                return;
            };
            // SAFETY: A live frame of the caller's, handed over (type
            // invariants).
            let frame = unsafe { XdpFrame::from_raw(p) };
            match f(frame) {
                Ok(()) => self.taken += 1,
                Err(back) if back.0 == p => {
                    // Given back: the caller's again.
                    core::mem::forget(back);
                    return;
                }
                Err(other) => {
                    // Another frame of `f`'s: ours to free; the one it was
                    // given stays taken.
                    drop(other);
                    self.taken += 1;
                    return;
                }
            }
        }
    }

    /// How many frames were taken (what `ndo_xdp_xmit` returns).
    pub(crate) fn taken(&self) -> usize {
        self.taken
    }
}

/// The section a program runs in: bottom halves off, an RCU read section
/// and the task's `bpf_net_context` (where `bpf_redirect()` leaves its
/// target for `xdp_do_redirect()`, and the redirect's flush lists live).
///
/// # Invariants
///
/// A `bpf_net_context` is set for the task for `'a`; `redirected` says a
/// redirect may have queued frames that [`with_xdp_ctx`] must flush.
pub(crate) struct XdpCtx<'a> {
    rcu: &'a rcu::Guard,
    redirected: Cell<bool>,
}

/// Runs `f` in an XDP section (`bpf_net_ctx_set()` ... `bpf_net_ctx_clear()`,
/// as `tun_build_skb()` and `tun_sendmsg()` set it up, with bottom halves
/// off and RCU held by the caller's tokens). Frames a redirect in it
/// queued are flushed before the section ends (`xdp_do_flush()`).
#[inline]
pub(crate) fn with_xdp_ctx<R>(
    _bh: &BhDisabled,
    rcu: &rcu::Guard,
    f: impl FnOnce(&XdpCtx<'_>) -> R,
) -> R {
    let ctx = Opaque::<bindings::bpf_net_context>::uninit();
    // SAFETY: The context lives on this frame until cleared below, with
    // bottom halves off (`_bh`) so nothing preempts the task meanwhile;
    // `bpf_net_ctx_set()` initialises it (or, nested, leaves the outer
    // one and returns NULL, which the clear then ignores).
    let set = unsafe { bindings::bpf_net_ctx_set(ctx.get()) };
    // INVARIANT: Set just above, until the clear below.
    let x = XdpCtx {
        rcu,
        redirected: Cell::new(false),
    };
    let ret = f(&x);
    if x.redirected.get() {
        // SAFETY: In the section; flushes the redirect's lists.
        unsafe { bindings::xdp_do_flush() };
    }
    // SAFETY: Clears what `bpf_net_ctx_set()` set (nothing if nested).
    unsafe { bindings::bpf_net_ctx_clear(set) };
    ret
}

/// Room on the caller's stack for the `xdp_buff` of a written packet
/// ([`OwnedXdpBuff::from_iter`]): the buffer's description stays where it
/// is while the packet is passed around, as tun.c's does.
pub(crate) struct XdpSlot(core::mem::MaybeUninit<bindings::xdp_buff>);

impl XdpSlot {
    /// An empty slot.
    #[inline(always)]
    pub(crate) const fn new() -> Self {
        Self(core::mem::MaybeUninit::uninit())
    }
}

/// A packet in memory a driver owns, described by an `xdp_buff` (in an
/// [`XdpSlot`] of the caller's, or vhost-net's own) whose queue is an
/// [`XdpRxq`] of the caller's: what a program runs on, then
/// becomes an skb ([`OwnedXdpBuff::build_skb`]), a frame
/// ([`OwnedXdpBuff::into_frame`]), is redirected
/// ([`OwnedXdpBuff::redirect`]) or is freed (on drop).
///
/// Two kinds of memory, as tun.c's two paths have them: a buffer of
/// vhost-net's, on whose page this value owns a reference (put on drop);
/// or a region of the writer's task fragment (`current->task_frag`) not
/// yet taken from it (`frag`): it takes a page reference and moves the
/// fragment's offset past the region only when the packet leaves as an
/// skb or a frame (tun.c's `get_page(); alloc_frag->offset += buflen`), so
/// a dropped packet costs the fragment nothing and the next write reuses
/// the region.
///
/// # Invariants
///
/// `xdp` is ours for `'r` and describes a buffer in one page (head page
/// of `data`): `data_hard_start` up to `frame_sz` bytes, room for
/// `struct skb_shared_info` at the end, `data_meta <= data <= data_end`
/// inside it; `xdp.rxq` is valid for `'r`. Without `frag`, this value owns a
/// reference on the page. With `frag`, the region is `frag->page` from
/// `frag->offset` to `frag_end`, past the fragment's offset: nothing else
/// uses the task's fragment for `'r` (the write call's iterator is
/// borrowed for as long, and nothing the buffer's users run in the task
/// -- a program, a redirect, the driver's own queueing -- takes from it).
pub(crate) struct OwnedXdpBuff<'r> {
    xdp: &'r mut bindings::xdp_buff,
    /// `xdp.frame_sz`, kept beside it (a field of an anonymous union in
    /// some kernels' `struct xdp_buff`).
    frame_sz: u32,
    /// The task fragment the region is still part of, if it is.
    frag: Option<NonNull<bindings::page_frag>>,
    /// Where the fragment's offset goes when the region is taken.
    frag_end: u32,
    _rxq: PhantomData<&'r XdpRxq<'r>>,
}

impl<'r> OwnedXdpBuff<'r> {
    /// A written packet in a page fragment of the writer's task
    /// (`current->task_frag`), as tun.c's `tun_build_skb()` lays it out:
    /// `headroom` bytes, the `len` bytes copied from `from`, room for the
    /// skb's shared info, the whole cache-line aligned; described in
    /// `slot`. `ENOMEM` if no page can be had, `EFAULT` if the copy falls
    /// short. Process context; may sleep.
    pub(crate) fn from_iter(
        slot: &'r mut XdpSlot,
        headroom: usize,
        len: usize,
        from: &'r mut IovIterSource<'_>,
        rxq: &'r XdpRxq<'_>,
    ) -> Result<Self> {
        let shinfo = bindings::RTUN_SKB_SHINFO_SIZE as usize;
        let buflen = shinfo + skb_data_align(len + headroom);
        if buflen > bindings::RTUN_PAGE_SIZE as usize {
            return Err(EINVAL);
        }
        // SAFETY: The task's own fragment, used by this task alone and in
        // process context; for `'r` nothing else takes from it (the type
        // invariants: `from`, the write's iterator, stays borrowed).
        let (frag, page, offset) = unsafe {
            let frag = &mut (*bindings::get_current()).task_frag;
            frag.offset = skb_data_align(frag.offset as usize) as u32;
            if !bindings::skb_page_frag_refill(buflen as u32, frag, bindings::RTUN_GFP_KERNEL) {
                return Err(ENOMEM);
            }
            (NonNull::from(&mut *frag), frag.page, frag.offset as usize)
        };
        // SAFETY: A page of the fragment, mapped (a lowmem page).
        let buf = unsafe { bindings::page_address(page) }
            .cast::<u8>()
            .wrapping_add(offset);
        let xdp = slot.0.write(bindings::xdp_buff::default());
        // SAFETY: `buflen` bytes at `buf` are the fragment's free region,
        // `headroom + len + shinfo` of them; `rxq` outlives the buffer's
        // uses (`'r`).
        unsafe {
            bindings::xdp_init_buff(xdp, buflen as u32, rxq.0.get());
            bindings::xdp_prepare_buff(xdp, buf, headroom as i32, len as i32, true);
        }
        // SAFETY: `len` bytes at `headroom` into the region.
        let copied =
            unsafe { bindings::copy_page_from_iter(page, offset + headroom, len, from.as_raw()) };
        if copied != len {
            return Err(EFAULT);
        }
        // INVARIANT: The fragment's free region, not taken yet.
        Ok(Self {
            xdp,
            frame_sz: buflen as u32,
            frag: Some(frag),
            frag_end: (offset + buflen) as u32,
            _rxq: PhantomData,
        })
    }

    /// Takes the region from the task's fragment if it is still part of
    /// it: a page reference of our own, the fragment's offset past it.
    /// From here on this value owns a page reference either way.
    #[inline(always)]
    fn take_region(&mut self) {
        if let Some(frag) = self.frag.take() {
            // SAFETY: The fragment the region is part of (type invariants):
            // live, and ours for `'r`.
            unsafe {
                let frag = &mut *frag.as_ptr();
                bindings::get_page(frag.page);
                frag.offset = self.frag_end;
            }
        }
    }

    /// A buffer of vhost-net's `TUN_MSG_PTR` batch, `frame_sz` long,
    /// described in `slot` with its queue set to `rxq` for a program
    /// (tun.c's `xdp_init_buff(xdp, buflen, &tfile->xdp_rxq)` in
    /// `tun_xdp_one()`).
    ///
    /// # Safety
    ///
    /// `xdp` is a buffer as the type invariants describe (vhost-net's
    /// layout), whose page reference the caller gives up.
    pub(super) unsafe fn from_vhost(
        slot: &'r mut XdpSlot,
        xdp: &bindings::xdp_buff,
        frame_sz: u32,
        rxq: &'r XdpRxq<'_>,
    ) -> Self {
        // Its packet and headroom; `xdp_init_buff()` sets the rest (as on
        // vhost-net's own, none of whose other fields matter here).
        let xdp = slot.0.write(bindings::xdp_buff {
            data: xdp.data,
            data_end: xdp.data_end,
            data_meta: xdp.data_meta,
            data_hard_start: xdp.data_hard_start,
            ..Default::default()
        });
        // SAFETY: Our copy of the buffer's description.
        unsafe { bindings::xdp_init_buff(xdp, frame_sz, rxq.0.get()) };
        // INVARIANT: As the caller guarantees; the queue lives for `'r`.
        Self {
            xdp,
            frame_sz,
            frag: None,
            frag_end: 0,
            _rxq: PhantomData,
        }
    }

    /// The packet's length (`data_end - data`).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        // `data <= data_end` (type invariants): never wraps, so no
        // overflow check (a branch on every packet that none takes).
        (self.xdp.data_end as usize).wrapping_sub(self.xdp.data as usize)
    }

    /// `bpf_prog_run_xdp()`: the program's verdict on the packet, which it
    /// may change (move its start and end within the buffer, write it).
    #[inline(always)]
    pub(crate) fn run(&mut self, prog: &XdpProg, _ctx: &XdpCtx<'_>) -> u32 {
        // SAFETY: A live XDP program on a buffer we own (type invariants),
        // in an XDP section (`_ctx`: bottom halves off, RCU).
        unsafe { bindings::bpf_prog_run_xdp(prog.as_ptr(), self.xdp) }
    }

    /// `xdp_do_redirect()`: the packet goes where the program's
    /// `bpf_redirect*()` said, flushed when the section ends. An error
    /// leaves it ours (freed here).
    #[inline(always)]
    pub(crate) fn redirect<P>(
        mut self,
        dev: &NetDevice<P>,
        prog: &XdpProg,
        ctx: &XdpCtx<'_>,
    ) -> Result {
        self.take_region();
        // SAFETY: A buffer we own, redirected in the section its program
        // ran in (`ctx`); on success the target owns the page reference.
        let err = unsafe { bindings::xdp_do_redirect(dev.as_ptr(), self.xdp, prog.as_ptr()) };
        if err != 0 {
            return Err(Error::from_errno(err));
        }
        ctx.redirected.set(true);
        core::mem::forget(self);
        Ok(())
    }

    /// `xdp_convert_buff_to_frame()`: the packet as a frame (its header in
    /// the headroom); `None` if the headroom is too small for it (tun.c's
    /// `EOVERFLOW`; the buffer is freed).
    #[inline(always)]
    pub(crate) fn into_frame(mut self) -> Option<XdpFrame> {
        // SAFETY: A buffer we own, its headroom ours to write the frame in.
        let f = unsafe { bindings::xdp_convert_buff_to_frame(self.xdp) };
        let f = NonNull::new(f)?;
        // The frame takes the page reference.
        self.take_region();
        core::mem::forget(self);
        // SAFETY: A new frame owning our page reference.
        Some(unsafe { XdpFrame::from_raw(f) })
    }

    /// `build_skb()` around the buffer, as the program left it: the
    /// headroom up to `data`, the packet, its metadata (tun.c's
    /// `__tun_build_skb()`, `tun_xdp_one()`). `ENOMEM` if no skb can be
    /// had (the buffer is freed).
    #[inline(always)]
    pub(crate) fn build_skb(mut self) -> Result<SkBuff> {
        self.take_region();
        // The page reference goes to the skb, or back in `build_skb_raw`.
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: A buffer as the type invariants say, given up.
        unsafe { build_skb_raw(this.xdp, this.frame_sz) }
    }
}

impl Drop for OwnedXdpBuff<'_> {
    fn drop(&mut self) {
        // A region still in the task's fragment stays there, to be reused.
        if self.frag.is_none() {
            // SAFETY: The page reference we own (type invariants).
            unsafe { bindings::put_page(bindings::virt_to_head_page(self.xdp.data)) };
        }
    }
}

/// `build_skb()` around `xdp` (`frame_sz` bytes from `data_hard_start`):
/// headroom up to `data`, the packet, its metadata; the skb owns the page
/// reference. `ENOMEM` (the page given back) if no skb can be had.
///
/// # Safety
///
/// `xdp` describes a buffer as [`OwnedXdpBuff`]'s invariants say, `frame_sz`
/// long, whose page reference the caller gives up.
#[inline(always)]
pub(super) unsafe fn build_skb_raw(xdp: &bindings::xdp_buff, frame_sz: u32) -> Result<SkBuff> {
    // SAFETY: The buffer and its size, with room for `skb_shared_info` at
    // the end (the caller); on success the skb owns the page reference.
    let skb = unsafe { bindings::build_skb(xdp.data_hard_start, frame_sz) };
    let Some(skb) = NonNull::new(skb) else {
        // SAFETY: The reference the caller gave up, not taken.
        unsafe { bindings::put_page(bindings::virt_to_head_page(xdp.data)) };
        return Err(ENOMEM);
    };
    // `data_hard_start <= data <= data_end` (the caller): neither wraps.
    let headroom = (xdp.data as usize).wrapping_sub(xdp.data_hard_start as usize);
    let len = (xdp.data_end as usize).wrapping_sub(xdp.data as usize);
    // An `xdp_buff` without metadata support has `data_meta` one past
    // `data`: a size of -1, no metadata (tun.c's `metasize > 0`).
    let metasize = (xdp.data as isize).wrapping_sub(xdp.data_meta as isize);
    // SAFETY: A fresh skb over the buffer: `headroom + len` lies within it
    // and the metadata right before `data` (the caller).
    unsafe {
        bindings::skb_reserve(skb.as_ptr(), headroom as i32);
        bindings::skb_put(skb.as_ptr(), len as u32);
        if metasize > 0 {
            bindings::skb_metadata_set(skb.as_ptr(), metasize as u8);
        }
        Ok(SkBuff::from_raw(skb.as_ptr()))
    }
}

/// A verdict the driver does not act on: `bpf_warn_invalid_xdp_action()`
/// for an unknown one, then `trace_xdp_exception()` (and for `XDP_ABORTED`
/// the trace alone), as tun.c's `tun_xdp_act()` falls through them.
#[cold]
pub(crate) fn xdp_exception<P>(dev: &NetDevice<P>, prog: &XdpProg, act: u32) {
    // SAFETY: A live device and program; both calls only report.
    unsafe {
        if act != XDP_ABORTED {
            bindings::bpf_warn_invalid_xdp_action(dev.as_ptr(), prog.as_ptr(), act);
        }
        bindings::trace_xdp_exception(dev.as_ptr(), prog.as_ptr(), act);
    }
}

/// `SKB_DATA_ALIGN()`: `x` rounded up to a cache line.
#[inline(always)]
pub(crate) fn skb_data_align(x: usize) -> usize {
    // SAFETY: Arithmetic only.
    unsafe { bindings::skb_data_align(x as u32) as usize }
}

/// `do_xdp_generic()`: generic XDP on a packet the stack would receive
/// (the core sets up its own XDP section); `Some` with it back for
/// `XDP_PASS`, `None` if the program consumed it (dropped, sent back out,
/// redirected).
#[inline]
pub(crate) fn do_xdp_generic(
    prog: &XdpProg,
    skb: SkBuff,
    _bh: &BhDisabled,
    _rcu: &rcu::Guard,
) -> Option<SkBuff> {
    let mut p = skb.into_raw();
    // SAFETY: A live program on an skb we own, with bottom halves off and
    // under RCU as the call requires; it consumes the skb unless it says
    // `XDP_PASS`, and may replace it (copied for the program's headroom)
    // in `p`.
    let ret = unsafe { bindings::do_xdp_generic(prog.as_ptr(), &mut p) };
    if ret != XDP_PASS as i32 {
        return None;
    }
    // SAFETY: `XDP_PASS`: `p` is a live skb of ours.
    Some(unsafe { SkBuff::from_raw(p) })
}
