// SPDX-License-Identifier: GPL-2.0

//! tun's `ifreq`-shaped device calls: `SIOCGIFHWADDR`/`SIOCSIFHWADDR` on
//! the file (tun.c's `__tun_chr_ioctl()`), which pass the bytes of the
//! caller's `ifreq` as tun.c passes its whole `ifreq` to the core.

use crate::bindings;
use crate::sys::netdev::device::NetDevice;
use crate::sys::sync::rtnl::Rtnl;
use core::ptr;
use kernel::error::to_result;
use kernel::prelude::*;

/// `sizeof(struct sockaddr)`.
pub(crate) const SOCKADDR_LEN: usize = core::mem::size_of::<bindings::sockaddr>();

/// The size of an `ifreq`'s union (`ifr_ifru`), after its name.
pub(crate) const IFRU_LEN: usize =
    core::mem::size_of::<bindings::ifreq>() - bindings::IFNAMSIZ as usize;

impl<P> NetDevice<P> {
    /// `SIOCGIFHWADDR`: `dev_get_mac_address()` into the `sockaddr` of an
    /// `ifreq` (`ifr_hwaddr`, 16 bytes after the name): the family and
    /// `addr_len` bytes of `sa_data` (all 14 zeroed without an address);
    /// the rest of `sa` keeps what it held, as the caller's `ifreq` does
    /// in tun.c.
    pub(crate) fn get_mac_address(&self, sa: &mut [u8; SOCKADDR_LEN], _rtnl: &Rtnl<'_>) -> Result {
        // SAFETY: `sockaddr` is plain data of this size; any bytes will do.
        let mut addr =
            unsafe { core::mem::transmute_copy::<[u8; SOCKADDR_LEN], bindings::sockaddr>(sa) };
        let name = self.name();
        // SAFETY: rtnl held; `addr` is writable; `name` is NUL-terminated
        // (IFNAMSIZ with its last byte 0); the device's namespace is live.
        to_result(unsafe {
            bindings::netif_get_mac_address(
                &mut addr,
                bindings::dev_net(self.as_ptr()),
                name.as_ptr().cast_mut().cast(),
            )
        })?;
        // SAFETY: `sockaddr` is plain data of this size.
        *sa = unsafe { core::mem::transmute_copy::<bindings::sockaddr, [u8; SOCKADDR_LEN]>(&addr) };
        Ok(())
    }

    /// `SIOCSIFHWADDR`: `dev_set_mac_address_user()` from an `ifreq`'s
    /// union (`ifr_ifru`: the `sockaddr` and the bytes after it, as tun.c
    /// passes `&ifr.ifr_hwaddr` inside its whole `ifreq`: the core compares
    /// `addr_len` bytes from `sa_data`, up to 2 bytes past the `sockaddr`);
    /// `EINVAL` for a device whose addresses are longer than the `sockaddr`
    /// (`TUNSETLINK` to, say, `ARPHRD_INFINIBAND`: 20 bytes), tun.c 7.3's
    /// check (6.12's tun.c has none; its copy stays inside the `ifreq`
    /// there too, as every `addr_len` tun can set is at most 16).
    pub(crate) fn set_mac_address_user(
        &self,
        ifru: &[u8; IFRU_LEN],
        _rtnl: &mut Rtnl<'_>,
    ) -> Result {
        // SAFETY: A live device; rtnl held (`addr_len` changes under it).
        if usize::from(unsafe { (*self.as_ptr()).addr_len }) > SOCKADDR_LEN {
            return Err(EINVAL);
        }
        // SAFETY: rtnl held, registered device; the helper copies the
        // `IFRU_LEN` bytes of `ifru` into a zeroed `sockaddr_storage`.
        to_result(unsafe {
            bindings::dev_set_mac_address_user(
                self.as_ptr(),
                ifru.as_ptr().cast(),
                IFRU_LEN,
                ptr::null_mut(),
            )
        })
    }
}
