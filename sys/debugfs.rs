// SPDX-License-Identifier: GPL-2.0

//! debugfs: directories, and read-only files whose text is generated at open.

use super::*;

// ---------------------------------------------------------------------------
// debugfs.

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
        let d = unsafe { bindings::debugfs_create_dir(name.as_char_ptr().cast(), parent) };
        // debugfs returns an ERR_PTR on failure.
        if d.is_null() || (d as usize) >= (-4095isize) as usize {
            return None;
        }
        NonNull::new(d).map(Dentry)
    }

    /// A read-only file whose contents `show` writes; `data` is what
    /// `show` gets back.
    ///
    /// # Safety
    ///
    /// `data` must stay valid until this directory is removed.
    unsafe fn file(&self, name: &CStr, fops: &'static DebugfsFops, data: *const c_void) {
        // SAFETY: `self` is a live directory; `fops` is static; the caller
        // keeps `data` alive until removal, which waits for readers.
        unsafe {
            bindings::debugfs_create_file(
                name.as_char_ptr().cast(),
                0o444,
                self.0.as_ptr(),
                data.cast_mut(),
                fops.0.get().cast_const(),
            )
        };
    }

    /// A module-wide file (no per-object data).
    pub(crate) fn module_file(&self, name: &CStr, fops: &'static DebugfsFops) {
        // SAFETY: No data.
        unsafe { self.file(name, fops, ptr::null()) };
    }
}

impl Drop for Dentry {
    fn drop(&mut self) {
        // SAFETY: A live directory of ours; removal waits for readers.
        unsafe { bindings::debugfs_remove(self.0.as_ptr()) };
    }
}

/// A `file_operations` for a generated-text debugfs file: the text is
/// generated once at open (so a reader sees one consistent snapshot across
/// its reads) and freed at release.
pub(crate) struct DebugfsFops(KernelStatic<bindings::file_operations>);

impl DebugfsFops {
    pub(super) const fn new(
        open: unsafe extern "C" fn(*mut bindings::inode, *mut bindings::file) -> c_int,
    ) -> Self {
        Self(KernelStatic::new(bindings::file_operations {
            open: Some(open),
            read: Some(text_read),
            release: Some(text_release),
            // An open file pins the module: debugfs' proxy calls `release`
            // whenever the file is closed, `rmmod` or not.
            owner: this_module!(),
            ..zeroed()
        }))
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

/// Generates the text with `show` and keeps it in `file->private_data`.
///
/// # Safety
///
/// `file` is a debugfs file being opened with one of our [`DebugfsFops`].
pub(super) unsafe fn open_text(
    file: *mut bindings::file,
    show: impl FnOnce(&mut TextBuf) -> Result,
) -> c_int {
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

/// `open` of `<debugfs>/rust_tun/jump_sites`.
///
/// # Safety
///
/// Called by debugfs on a file being opened.
unsafe extern "C" fn jump_sites_open(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: Forwarded.
    unsafe { open_text(file, |t| crate::rps::show_jump_sites(t).map_err(|_| ENOMEM)) }
}

/// `open` of a per-device debugfs file.
///
/// # Safety
///
/// Called by debugfs for a file created by [`DevDebugfs::create`], whose
/// data is the device.
unsafe fn dev_open(
    file: *mut bindings::file,
    show: fn(&NetDevice, &mut TextBuf) -> core::fmt::Result,
) -> c_int {
    // SAFETY: The data is a device of ours, alive until its files are
    // removed in `ndo_uninit` (removal waits for this open).
    let dev = unsafe { NetDevice::from_raw(bindings::rtun_file_inode_private(file).cast()) };
    // SAFETY: Forwarded.
    unsafe { open_text(file, |t| show(dev, t).map_err(|_| ENOMEM)) }
}

/// `open` of `<debugfs>/rust_tun/<dev>/flows`.
///
/// # Safety
///
/// See [`dev_open`].
unsafe extern "C" fn dev_flows_open(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: Forwarded.
    unsafe { dev_open(file, crate::tun_show_flows) }
}

/// `open` of `<debugfs>/rust_tun/<dev>/stats`.
///
/// # Safety
///
/// See [`dev_open`].
unsafe extern "C" fn dev_stats_open(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: Forwarded.
    unsafe { dev_open(file, crate::tun_show_stats) }
}

/// The fops of `jump_sites`.
pub(crate) static JUMP_SITES_FOPS: DebugfsFops = DebugfsFops::new(jump_sites_open);
static DEV_FLOWS_FOPS: DebugfsFops = DebugfsFops::new(dev_flows_open);
static DEV_STATS_FOPS: DebugfsFops = DebugfsFops::new(dev_stats_open);

/// The module's debugfs root, `<debugfs>/rust_tun`, for per-device dirs.
static DEBUGFS_ROOT: AtomicPtr<bindings::dentry> = AtomicPtr::new(ptr::null_mut());

/// Creates `<debugfs>/rust_tun` (kept by the module until unload).
pub(crate) fn debugfs_root_create() -> Option<Dentry> {
    let root = Dentry::dir(kernel::c_str!("rust_tun"), None)?;
    DEBUGFS_ROOT.store(root.0.as_ptr(), Ordering::Release);
    Some(root)
}

/// The per-device debugfs directory, `<debugfs>/rust_tun/<ifname>`.
pub(crate) struct DevDebugfs(AtomicPtr<bindings::dentry>);

impl DevDebugfs {
    /// No directory.
    pub(crate) const fn new() -> Self {
        Self(AtomicPtr::new(ptr::null_mut()))
    }

    /// Creates the directory and its files for `dev` (under rtnl): named
    /// after the device, with `@<netns inode>` for a device outside the
    /// initial namespace (names are per namespace). Replaces the old one.
    pub(crate) fn create(&self, dev: &NetDevice, _rtnl: &Rtnl<'_>) {
        self.remove();
        let root = DEBUGFS_ROOT.load(Ordering::Acquire);
        let Some(root) = NonNull::new(root) else {
            return;
        };
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
        let root = core::mem::ManuallyDrop::new(Dentry(root));
        let Some(dir) = Dentry::dir(name, Some(&root)) else {
            return;
        };
        let data = ptr::from_ref(dev).cast::<c_void>();
        // SAFETY: The device outlives its directory: `remove` runs at
        // `NETDEV_UNREGISTER` and in `ndo_uninit`, before the device can
        // be freed, and waits for the files' users.
        unsafe {
            dir.file(kernel::c_str!("flows"), &DEV_FLOWS_FOPS, data);
            dir.file(kernel::c_str!("stats"), &DEV_STATS_FOPS, data);
        }
        let old = self.0.swap(
            core::mem::ManuallyDrop::new(dir).0.as_ptr(),
            Ordering::AcqRel,
        );
        // INVARIANT: at most one directory is owned at a time.
        if let Some(old) = NonNull::new(old) {
            drop(Dentry(old));
        }
    }

    /// Removes the directory, waiting for readers.
    pub(crate) fn remove(&self) {
        if let Some(d) = NonNull::new(self.0.swap(ptr::null_mut(), Ordering::AcqRel)) {
            drop(Dentry(d));
        }
    }
}
