// SPDX-License-Identifier: GPL-2.0

//! debugfs: directories ([`Dentry`]), read-only files whose text a driver
//! generates at open ([`DebugfsFileOps`], [`DebugfsDevFileOps`] for a file per device,
//! [`DebugfsFileVTable`] built from them at compile time), and a device's own
//! directory that follows its name and namespace ([`DevDebugfs`]).

use super::netdev::device::NetDevice;
use super::sync::rtnl::Rtnl;
use super::{this_module, zeroed};
use crate::bindings;
use core::ffi::{c_int, c_void};
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;

/// A debugfs directory, removed (recursively) on drop.
pub(crate) struct Dentry(NonNull<bindings::dentry>);

// SAFETY: debugfs dentries may be removed from any thread.
unsafe impl Send for Dentry {}
// SAFETY: Only passed to debugfs.
unsafe impl Sync for Dentry {}

impl Dentry {
    /// `debugfs_create_dir()`; `None` if debugfs is unavailable.
    pub(crate) fn dir(name: &CStr, parent: Option<&Dentry>) -> Option<Dentry> {
        let parent = parent.map_or(ptr::null_mut(), |d| d.0.as_ptr());
        // SAFETY: `name` is NUL-terminated; `parent` is null or a live dir.
        let d = unsafe {
            bindings::debugfs_create_dir(crate::sys::compat::cstr_ptr(name).cast(), parent)
        };
        // debugfs returns an ERR_PTR on failure.
        if d.is_null() || (d as usize) >= (-4095isize) as usize {
            return None;
        }
        NonNull::new(d).map(Dentry)
    }

    /// A read-only file of `fops`; `data` is what its open gets back.
    ///
    /// # Safety
    ///
    /// `data` is what `fops` expects and stays valid until this directory is
    /// removed.
    unsafe fn file_with(&self, name: &CStr, fops: &'static DebugfsFileVTable, data: *const c_void) {
        // SAFETY: `self` is a live directory; `fops` is static; the caller
        // keeps `data` alive until removal, which waits for the files' users.
        unsafe {
            bindings::debugfs_create_file(
                crate::sys::compat::cstr_ptr(name).cast(),
                0o444,
                self.0.as_ptr(),
                data.cast_mut(),
                &fops.0,
            )
        };
    }

    /// A module-wide file of a [`DebugfsFileOps`].
    pub(crate) fn text_file(&self, name: &CStr, fops: &'static DebugfsFileVTable<()>) {
        // SAFETY: Module-wide fops take no data.
        unsafe { self.file_with(name, fops.untyped(), ptr::null()) };
    }
}

impl Drop for Dentry {
    fn drop(&mut self) {
        // SAFETY: A live directory of ours; removal waits for its files' users.
        unsafe { bindings::debugfs_remove(self.0.as_ptr()) };
    }
}

/// A text buffer for debugfs contents.
pub(crate) struct TextBuf(KVec<u8>);

impl core::fmt::Write for TextBuf {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.0
            .extend_from_slice(s.as_bytes(), GFP_KERNEL)
            .map_err(|_| core::fmt::Error)
    }
}

/// A module-wide debugfs file whose text is generated at open.
pub(crate) trait DebugfsFileOps: 'static {
    /// Writes the file's text (an error is the open's errno).
    fn show(t: &mut TextBuf) -> Result;
}

/// A per-device debugfs file whose text is generated at open from the
/// device (one holding a `Priv`).
pub(crate) trait DebugfsDevFileOps: 'static {
    /// The private area of the devices.
    type Priv: 'static;
    /// Writes the file's text.
    fn show(dev: &NetDevice<Self::Priv>, t: &mut TextBuf) -> Result;
}

/// The `file_operations` of a generated-text debugfs file: the text is
/// generated once at open (so a reader sees one consistent snapshot across
/// its reads) and freed at release. `D` is what the file's data is: `()`
/// for a module-wide file, the device's private type for a per-device one.
/// A `static` of the driver's.
pub(crate) struct DebugfsFileVTable<D = ()>(bindings::file_operations, PhantomData<D>);

// SAFETY: Function pointers and the module pointer, read by the kernel.
unsafe impl<D> Sync for DebugfsFileVTable<D> {}

impl DebugfsFileVTable<()> {
    /// The fops of a module-wide [`DebugfsFileOps`].
    pub(crate) const fn new<T: DebugfsFileOps>() -> Self {
        Self::with_open(open_text_file::<T>)
    }
}

impl<P> DebugfsFileVTable<P> {
    /// The fops of a per-device [`DebugfsDevFileOps`].
    pub(crate) const fn new_dev<T: DebugfsDevFileOps<Priv = P>>() -> Self {
        Self::with_open(open_dev_text_file::<T>)
    }

    const fn with_open(
        open: unsafe extern "C" fn(*mut bindings::inode, *mut bindings::file) -> c_int,
    ) -> Self {
        Self(
            bindings::file_operations {
                open: Some(open),
                read: Some(text_read),
                release: Some(text_release),
                // An open file pins the module: debugfs' proxy calls
                // `release` whenever the file is closed, `rmmod` or not.
                owner: this_module(),
                ..zeroed()
            },
            PhantomData,
        )
    }

    fn untyped(&'static self) -> &'static DebugfsFileVTable {
        // SAFETY: `DebugfsFileVTable<D>` differs from `DebugfsFileVTable<()>` only in a
        // zero-sized marker; the layouts are the same.
        unsafe { &*ptr::from_ref(self).cast::<DebugfsFileVTable>() }
    }
}

/// Generates the text with `show` and keeps it in `file->private_data`.
///
/// # Safety
///
/// `file` is a debugfs file being opened with a [`DebugfsFileVTable`].
unsafe fn open_text(file: *mut bindings::file, show: impl FnOnce(&mut TextBuf) -> Result) -> c_int {
    let mut text = TextBuf(KVec::new());
    if let Err(e) = show(&mut text) {
        return e.to_errno();
    }
    match KBox::new(text.0, GFP_KERNEL) {
        // SAFETY: The file is being opened; its private data is ours until
        // `text_release`.
        Ok(b) => unsafe {
            (*file).private_data = KBox::into_raw(b).cast();
            0
        },
        Err(_) => ENOMEM.to_errno(),
    }
}

/// `open` of a module-wide [`DebugfsFileOps`].
///
/// # Safety
///
/// Called by debugfs on a file being opened.
unsafe extern "C" fn open_text_file<T: DebugfsFileOps>(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: Forwarded.
    unsafe { open_text(file, T::show) }
}

/// `open` of a per-device [`DebugfsDevFileOps`].
///
/// # Safety
///
/// Called by debugfs for a file created by [`DevDebugfs::create`], whose
/// data is a device holding a `T::Priv`.
unsafe extern "C" fn open_dev_text_file<T: DebugfsDevFileOps>(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: The data is the device, alive until its files are removed
    // (`DevDebugfs::remove`, before the device can be freed), and removal
    // waits for this open.
    let dev =
        unsafe { NetDevice::<T::Priv>::from_raw((*bindings::file_inode(file)).i_private.cast()) };
    // SAFETY: Forwarded.
    unsafe { open_text(file, |t| T::show(dev, t)) }
}

/// `read` of a generated-text debugfs file (`simple_read_from_buffer()`).
///
/// # Safety
///
/// Called by the VFS on a file opened by [`open_text`].
unsafe extern "C" fn text_read(
    file: *mut bindings::file,
    buf: *mut core::ffi::c_char,
    count: usize,
    ppos: *mut bindings::loff_t,
) -> isize {
    // SAFETY: `open_text` stored the text; it lives until release.
    let text = unsafe { &*(*file).private_data.cast::<KVec<u8>>() };
    // SAFETY: The `read` arguments are valid; `text` is a kernel buffer.
    unsafe {
        bindings::simple_read_from_buffer(buf.cast(), count, ppos, text.as_ptr().cast(), text.len())
    }
}

/// `release` of a generated-text debugfs file.
///
/// # Safety
///
/// Called by the VFS once, on a file opened by [`open_text`].
unsafe extern "C" fn text_release(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: `open_text` stored a `KBox<KVec<u8>>`; this is its last use.
    drop(unsafe { KBox::from_raw((*file).private_data.cast::<KVec<u8>>()) });
    0
}

/// A driver's debugfs root directory, reachable from its callbacks: a
/// `static` of the driver's, created by [`DebugfsRoot::create`] and removed
/// when the returned registration drops.
pub(crate) struct DebugfsRoot(AtomicPtr<bindings::dentry>);

impl DebugfsRoot {
    /// No directory yet.
    pub(crate) const fn new() -> Self {
        Self(AtomicPtr::new(ptr::null_mut()))
    }

    /// Creates the directory `name` at debugfs' top; `None` without debugfs.
    pub(crate) fn create(&'static self, name: &CStr) -> Option<DebugfsRootRegistration> {
        let dir = Dentry::dir(name, None)?;
        self.0.store(dir.0.as_ptr(), Ordering::Release);
        Some(DebugfsRootRegistration(self, dir))
    }

    /// The directory, while it exists.
    fn dir(&self) -> Option<core::mem::ManuallyDrop<Dentry>> {
        NonNull::new(self.0.load(Ordering::Acquire))
            .map(|d| core::mem::ManuallyDrop::new(Dentry(d)))
    }
}

/// A [`DebugfsRoot`]'s directory, removed (with everything in it) on drop.
pub(crate) struct DebugfsRootRegistration(&'static DebugfsRoot, Dentry);

impl DebugfsRootRegistration {
    /// The directory.
    pub(crate) fn dir(&self) -> &Dentry {
        &self.1
    }
}

impl Drop for DebugfsRootRegistration {
    fn drop(&mut self) {
        // The directory itself goes with `self.1`, after this.
        self.0 .0.store(ptr::null_mut(), Ordering::Release);
    }
}

/// A device's debugfs directory, `<root>/<ifname>` (with `@<netns inode>`
/// outside the initial network namespace: names are per namespace).
///
/// While the directory exists this holds a reference on its device
/// (`dev_hold`), whose files read it: the device cannot be freed under
/// them, whatever the driver does. A driver that forgets [`DevDebugfs::remove`]
/// before unregistration completes makes it wait ("unregister_netdevice:
/// waiting for ..."): a bug, not a use-after-free.
pub(crate) struct DevDebugfs(AtomicPtr<bindings::dentry>, AtomicPtr<bindings::net_device>);

impl DevDebugfs {
    /// No directory.
    pub(crate) const fn new() -> Self {
        Self(
            AtomicPtr::new(ptr::null_mut()),
            AtomicPtr::new(ptr::null_mut()),
        )
    }

    /// Creates the directory under `root` with `files` for `dev`, replacing
    /// the old one (under rtnl: the device's name and namespace are stable).
    pub(crate) fn create<P>(
        &self,
        root: &DebugfsRoot,
        dev: &NetDevice<P>,
        files: &[(&CStr, &'static DebugfsFileVTable<P>)],
        _rtnl: &Rtnl<'_>,
    ) {
        self.remove();
        let ifname = dev.name();
        let end = ifname.iter().position(|&c| c == 0).unwrap_or(ifname.len());
        let mut name = TextBuf(KVec::new());
        let named = name.0.extend_from_slice(&ifname[..end], GFP_KERNEL).is_ok()
            && (dev.net_is_init()
                || core::fmt::Write::write_fmt(&mut name, format_args!("@{}", dev.net_inum()))
                    .is_ok())
            && name.0.push(0, GFP_KERNEL).is_ok();
        let Some(name) = named
            .then(|| CStr::from_bytes_with_nul(&name.0).ok())
            .flatten()
        else {
            return;
        };
        let Some(root) = root.dir() else {
            return;
        };
        let Some(dir) = Dentry::dir(name, Some(&root)) else {
            return;
        };
        // SAFETY: A live device (borrowed); the reference is the
        // directory's, given back by `remove` after the directory is gone.
        unsafe { bindings::dev_hold(dev.as_ptr()) };
        let data = ptr::from_ref(dev).cast::<c_void>();
        for (file, fops) in files {
            // SAFETY: The fops are per-device ones for devices holding a
            // `P`, and the device outlives its directory: the directory
            // holds a reference on it (taken above), given back only after
            // removal, which waits for the files' users.
            unsafe { dir.file_with(file, fops.untyped(), data) };
        }
        let old = self.0.swap(
            core::mem::ManuallyDrop::new(dir).0.as_ptr(),
            Ordering::AcqRel,
        );
        // INVARIANT: at most one directory is owned at a time (`remove`
        // above emptied it; rtnl serialises `create`).
        if let Some(old) = NonNull::new(old) {
            drop(Dentry(old));
        }
        self.1.store(dev.as_ptr(), Ordering::Release);
    }

    /// Removes the directory, waiting for its files' users, and gives back
    /// its reference on the device.
    pub(crate) fn remove(&self) {
        if let Some(d) = NonNull::new(self.0.swap(ptr::null_mut(), Ordering::AcqRel)) {
            drop(Dentry(d));
        }
        let dev = self.1.swap(ptr::null_mut(), Ordering::AcqRel);
        if !dev.is_null() {
            // SAFETY: The reference `create` took for the directory, which
            // is gone, with its files' users.
            unsafe { bindings::dev_put(dev) };
        }
    }
}

impl Drop for DevDebugfs {
    fn drop(&mut self) {
        self.remove();
    }
}
