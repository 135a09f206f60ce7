// SPDX-License-Identifier: GPL-2.0

//! rtnl link ops: the [`RtnlLinkOps`] a driver implements, [`RtnlLinkVTable`] (its
//! `struct rtnl_link_ops`, built at compile time), [`RtnlLinkRegistration`],
//! and the netlink pieces its ops see ([`NlMsg`], [`LinkAttrs`]).

use super::builder::{register_raw, DevSetup};
use super::device::NetDevice;
use crate::bindings;
use crate::sys::errno::{EMSGSIZE, EOPNOTSUPP};
use crate::sys::zeroed;
use core::ffi::c_int;
use core::marker::PhantomData;
use core::ptr;
use kernel::build_error;
use kernel::error::{from_result, to_result, VTABLE_DEFAULT_ERROR};
use kernel::prelude::*;
use kernel::types::Opaque;

/// The rtnl link ops of a net device driver (`struct rtnl_link_ops`), whose
/// devices' private areas hold a `Priv`: [`RtnlLinkVTable::new`] builds the C table
/// at compile time. An optional op the driver does not implement stays
/// `NULL` there (`#[vtable]`'s `HAS_*`), so the core's default applies.
#[vtable]
pub(crate) trait RtnlLinkOps: 'static {
    /// The private area.
    type Priv: Sync + 'static;

    /// `rtnl_link_ops.kind`: the link kind (`ip link add ... type KIND`,
    /// `ip -d link`'s name for the driver), as phy's `Driver::NAME`.
    const KIND: &'static CStr;

    /// `rtnl_link_ops.setup`, also `alloc_netdev()`'s: fills in a fresh
    /// device, before its private area exists (it is not reachable from a
    /// [`DevSetup`]). The layer has set `needs_free_netdev` and per-CPU
    /// counters (`NETDEV_PCPU_STAT_TSTATS`, see [`NetDevice::tstats`]).
    fn setup(dev: &mut DevSetup<Self::Priv>);

    /// `rtnl_link_ops.validate`: checks the attributes of an `ip link add
    /// ... type KIND` request before a device is allocated. Without it,
    /// every request goes on to [`RtnlLinkOps::newlink`].
    fn validate(_attrs: &LinkAttrs<'_>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `rtnl_link_ops.newlink`: the private area of a device that `ip link
    /// add ... type KIND` creates (allocated and set up by the core with
    /// [`RtnlLinkOps::setup`], the request's attributes applied); the layer
    /// then registers it. Without it, creating a device through rtnetlink
    /// fails with `EOPNOTSUPP`: the layer cannot make a `Priv` from nothing.
    fn newlink(_attrs: &LinkAttrs<'_>) -> Result<Self::Priv> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `rtnl_link_ops.get_size`: the most [`RtnlLinkOps::fill_info`] puts.
    fn get_size(_dev: &NetDevice<Self::Priv>) -> usize {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `rtnl_link_ops.fill_info`: the driver's `IFLA_INFO_DATA` attributes.
    fn fill_info(_dev: &NetDevice<Self::Priv>, _msg: &mut NlMsg) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// `nla_total_size()`: an attribute's size with header and padding.
pub(crate) const fn nla_total_size(payload: usize) -> usize {
    (4 + payload + 3) & !3
}

/// The message `rtnl_link_ops.fill_info` adds attributes to.
pub(crate) struct NlMsg(*mut bindings::sk_buff);

impl NlMsg {
    /// `nla_put_u8()`; `EMSGSIZE` when the message is full.
    pub(crate) fn put_u8(&mut self, attr: u32, v: u8) -> Result {
        // SAFETY: The message skb of the fill_info call.
        to_result(unsafe { bindings::nla_put_u8(self.0, attr as c_int, v) }).map_err(|_| EMSGSIZE)
    }

    /// `nla_put_u32()`; `EMSGSIZE` when the message is full.
    pub(crate) fn put_u32(&mut self, attr: u32, v: u32) -> Result {
        // SAFETY: The message skb of the fill_info call.
        to_result(unsafe { bindings::nla_put_u32(self.0, attr as c_int, v) }).map_err(|_| EMSGSIZE)
    }
}

/// The attributes of an `RTM_NEWLINK` request (`validate`'s and
/// `newlink`'s `tb[]`, indexed by `IFLA_*`), borrowed for the call.
///
/// # Invariants
///
/// `tb` has `IFLA_MAX + 1` entries, each null or a valid attribute, alive
/// for `'a`.
pub(crate) struct LinkAttrs<'a> {
    tb: *mut *mut bindings::nlattr,
    _call: PhantomData<&'a bindings::nlattr>,
}

impl LinkAttrs<'_> {
    /// `tb[IFLA_ADDRESS]`'s payload (`nla_data()`, `nla_len()` bytes): the
    /// hardware address asked for, if any.
    pub(crate) fn address(&self) -> Option<&[u8]> {
        // SAFETY: `tb` has `IFLA_MAX + 1` entries (type invariants).
        let nla = unsafe { *self.tb.add(bindings::IFLA_ADDRESS as usize) };
        if nla.is_null() {
            return None;
        }
        // SAFETY: A valid attribute, alive for the call: `nla_len()` bytes
        // at `nla_data()` (rtnetlink checked them against the message).
        Some(unsafe {
            let len = bindings::nla_len(nla);
            core::slice::from_raw_parts(bindings::nla_data(nla).cast::<u8>(), len.max(0) as usize)
        })
    }
}

/// `is_valid_ether_addr()`: neither multicast nor all zeroes.
pub(crate) fn is_valid_ether_addr(addr: &[u8; ETH_ALEN]) -> bool {
    // SAFETY: `addr` is `ETH_ALEN` readable bytes, as the C function reads.
    unsafe { bindings::is_valid_ether_addr(addr.as_ptr()) }
}

/// `ETH_ALEN`.
pub(crate) const ETH_ALEN: usize = bindings::ETH_ALEN as usize;

/// The `rtnl_link_ops` of a driver (`kind`, set-up, private size, the
/// optional ops of its [`RtnlLinkOps`]), built at compile time: a `static`
/// of the driver's. Beside it, the set-up function, which
/// [`NetDeviceBuilder::alloc`](super::builder::NetDeviceBuilder::alloc) gives
/// `alloc_netdev_mqs()` (the kernel writes the C table's list head, so
/// Rust does not read the table).
pub(crate) struct RtnlLinkVTable<P>(
    Opaque<bindings::rtnl_link_ops>,
    pub(super) unsafe extern "C" fn(*mut bindings::net_device),
    PhantomData<P>,
);

// SAFETY: `RtnlLinkVTable` has no method that writes the `rtnl_link_ops`
// (`owns` reads `dev->rtnl_link_ops`, not the table): its address goes to
// `rtnl_link_(un)register`, and the kernel serialises its writes to the
// table (its list head) under rtnl. The set-up function is a plain
// function pointer; `P` is only a type tag.
unsafe impl<P> Sync for RtnlLinkVTable<P> {}

impl<P> RtnlLinkVTable<P> {
    /// The link ops of driver `D`, of kind `D::KIND`.
    pub(crate) const fn new<D: RtnlLinkOps<Priv = P>>() -> Self {
        Self(
            Opaque::new(bindings::rtnl_link_ops {
                kind: crate::sys::compat::cstr_ptr(D::KIND).cast(),
                priv_size: core::mem::size_of::<P>(),
                setup: Some(setup::<D>),
                validate: if D::HAS_VALIDATE {
                    Some(link_validate::<D>)
                } else {
                    None
                },
                // Always the layer's: it initialises the private area (or
                // refuses), which C's default, a plain
                // `register_netdevice()`, would leave zeroed.
                newlink: Some(link_newlink::<D>),
                get_size: if D::HAS_GET_SIZE {
                    Some(link_get_size::<D>)
                } else {
                    None
                },
                fill_info: if D::HAS_FILL_INFO {
                    Some(link_fill_info::<D>)
                } else {
                    None
                },
                ..zeroed()
            }),
            setup::<D>,
            PhantomData,
        )
    }

    pub(super) fn as_ptr(&self) -> *mut bindings::rtnl_link_ops {
        self.0.get()
    }

    /// Whether `dev` is one of these ops' devices (its `rtnl_link_ops`).
    pub(super) fn owns(&self, dev: *mut bindings::net_device) -> bool {
        // SAFETY: A live device; reading a pointer field written before
        // registration.
        ptr::eq(unsafe { (*dev).rtnl_link_ops }, self.as_ptr())
    }
}

/// `setup` of a driver's devices: the layer's part, then the driver's.
///
/// # Safety
///
/// Called by `alloc_netdev_mqs` (from [`NetDeviceBuilder::alloc`] or
/// rtnetlink) with a fresh, unregistered device.
unsafe extern "C" fn setup<D: RtnlLinkOps>(dev: *mut bindings::net_device) {
    // SAFETY: A fresh device, ours to set up.
    unsafe {
        // The layer's memory model: the core frees an unregistered device
        // after its last reference (`priv_destructor` first drops the
        // private area), see `NetDevice::unregister`.
        (*dev).needs_free_netdev = true;
        // Per-CPU packet and byte counters (`dev->tstats`), which the core
        // allocates at registration and frees after the last reference:
        // every device of this layer has them (`NetDevice::tstats`).
        (*dev).set_pcpu_stat_type(bindings::netdev_stat_type_NETDEV_PCPU_STAT_TSTATS);
        D::setup(DevSetup::from_raw(dev));
    }
}

/// `rtnl_link_ops.validate`.
///
/// # Safety
///
/// Called by rtnetlink with the request's `tb[]` (`IFLA_MAX + 1` entries).
unsafe extern "C" fn link_validate<D: RtnlLinkOps>(
    tb: *mut *mut bindings::nlattr,
    _data: *mut *mut bindings::nlattr,
    _extack: *mut bindings::netlink_ext_ack,
) -> c_int {
    // INVARIANT: rtnetlink's parsed attributes, alive for the call.
    let attrs = LinkAttrs {
        tb,
        _call: PhantomData,
    };
    from_result(|| D::validate(&attrs).map(|()| 0))
}

crate::sys::compat::define_newlink!(link_newlink, link_newlink_common);

/// `rtnl_link_ops.newlink`: the driver's private area in the device
/// rtnetlink allocated, then its registration.
///
/// # Safety
///
/// Called by rtnetlink, under rtnl, with a fresh unregistered device of
/// these ops (`priv_size` bytes of private area, set up by `setup::<D>`)
/// and the request's `tb[]`.
unsafe fn link_newlink_common<D: RtnlLinkOps>(
    dev: *mut bindings::net_device,
    tb: *mut *mut bindings::nlattr,
) -> c_int {
    const { assert!(core::mem::align_of::<D::Priv>() <= bindings::RTUN_NETDEV_ALIGN as usize) };
    if !D::HAS_NEWLINK {
        return EOPNOTSUPP.to_errno();
    }
    // INVARIANT: rtnetlink's parsed attributes, alive for the call.
    let attrs = LinkAttrs {
        tb,
        _call: PhantomData,
    };
    from_result(|| {
        let p = D::newlink(&attrs)?;
        // SAFETY: The private area is `size_of::<D::Priv>()` bytes, aligned
        // to `NETDEV_ALIGN` (checked above), unused: the `P` goes there.
        // From here it holds a `P`, which `register_raw` drops (or leaves
        // to the device's destructor) if registration fails (rtnetlink
        // then frees the device).
        unsafe {
            bindings::netdev_priv(dev).cast::<D::Priv>().write(p);
            register_raw::<D::Priv>(dev)?;
        }
        Ok(0)
    })
}

/// `rtnl_link_ops.get_size`.
///
/// # Safety
///
/// Called by rtnetlink, under rtnl, on a device of `D`'s (its link ops).
unsafe extern "C" fn link_get_size<D: RtnlLinkOps>(dev: *const bindings::net_device) -> usize {
    // SAFETY: A registered device of `D`'s.
    D::get_size(unsafe { NetDevice::from_raw(dev.cast_mut()) })
}

/// `rtnl_link_ops.fill_info`.
///
/// # Safety
///
/// Called by rtnetlink, under rtnl, on a device of `D`'s with the message
/// being built.
unsafe extern "C" fn link_fill_info<D: RtnlLinkOps>(
    skb: *mut bindings::sk_buff,
    dev: *const bindings::net_device,
) -> c_int {
    // SAFETY: A registered device of `D`'s; `skb` is the message.
    let dev = unsafe { NetDevice::from_raw(dev.cast_mut()) };
    from_result(|| D::fill_info(dev, &mut NlMsg(skb)).map(|()| 0))
}

/// Registration of link ops, undone on drop.
pub(crate) struct RtnlLinkRegistration<P: 'static>(&'static RtnlLinkVTable<P>);

impl<P> RtnlLinkRegistration<P> {
    /// `rtnl_link_register()`.
    pub(crate) fn register(ops: &'static RtnlLinkVTable<P>) -> Result<Self> {
        // SAFETY: Static ops, registered once.
        to_result(unsafe { bindings::rtnl_link_register(ops.as_ptr()) })?;
        Ok(Self(ops))
    }
}

impl<P> Drop for RtnlLinkRegistration<P> {
    fn drop(&mut self) {
        // SAFETY: Registered in `register`; this also unregisters every
        // device of these ops left.
        unsafe { bindings::rtnl_link_unregister(self.0.as_ptr()) }
    }
}
