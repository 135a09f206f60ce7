// SPDX-License-Identifier: GPL-2.0

//! The character device `/dev/net/rust_tun`: the misc device, its
//! `file_operations` and their callbacks.

use super::*;

// ---------------------------------------------------------------------------
// The character device.

static TUN_FOPS: KernelStatic<bindings::file_operations> =
    KernelStatic::new(bindings::file_operations {
        read_iter: Some(tun_chr_read_iter),
        write_iter: Some(tun_chr_write_iter),
        poll: Some(tun_chr_poll),
        unlocked_ioctl: Some(tun_chr_ioctl),
        open: Some(tun_chr_open),
        release: Some(tun_chr_close),
        owner: this_module!(),
        ..zeroed()
    });

static TUN_MISCDEV: KernelStatic<bindings::miscdevice> = KernelStatic::new(bindings::miscdevice {
    minor: bindings::MISC_DYNAMIC_MINOR as c_int,
    name: crate::DRV_KIND.as_ptr().cast(),
    nodename: crate::DEV_NODENAME.as_ptr().cast(),
    mode: 0o666,
    fops: TUN_FOPS.0.get().cast_const(),
    ..zeroed()
});

/// Registration of the misc device `/dev/net/rust_tun`, undone on drop.
pub(crate) struct MiscRegistration(());

impl MiscRegistration {
    /// `misc_register()`.
    pub(crate) fn register() -> Result<Self> {
        // SAFETY: The miscdevice and fops are static (open files pin the
        // module through `owner`); registered once.
        to_result(unsafe { bindings::misc_register(TUN_MISCDEV.get()) })?;
        Ok(Self(()))
    }
}

impl Drop for MiscRegistration {
    fn drop(&mut self) {
        // SAFETY: Registered in `register`.
        unsafe { bindings::misc_deregister(TUN_MISCDEV.get()) }
    }
}

/// The `TunFile` behind `file->private_data`.
///
/// # Safety
///
/// `file` must be a file of our device between `open` and `release`.
unsafe fn tfile_of<'a>(file: *mut bindings::file) -> ArcBorrow<'a, crate::TunFile> {
    // SAFETY: `open` stored an `Arc<TunFile>` there, released only by
    // `release`, which runs after every other file operation.
    unsafe { ArcBorrow::from_raw((*file).private_data.cast::<crate::TunFile>()) }
}

/// The `TunFile` behind `file->private_data`, by plain reference (the data
/// path needs no new `Arc`; `ArcBorrow::from_raw` costs an out-of-line
/// layout computation per call).
///
/// # Safety
///
/// As for [`tfile_of`].
#[inline(always)]
unsafe fn tfile_ref<'a>(file: *mut bindings::file) -> &'a crate::TunFile {
    // SAFETY: See `tfile_of`; `Arc::into_raw` points at the `TunFile`.
    unsafe { &*(*file).private_data.cast::<crate::TunFile>() }
}

/// Whether the call must not block.
///
/// # Safety
///
/// `iocb` must be valid.
unsafe fn noblock(iocb: *mut bindings::kiocb) -> bool {
    // SAFETY: Valid `iocb` and its file.
    unsafe {
        ((*(*iocb).ki_filp).f_flags & bindings::O_NONBLOCK) != 0
            || ((*iocb).ki_flags & bindings::RTUN_IOCB_NOWAIT) != 0
    }
}

/// `file_operations.open`.
///
/// # Safety
///
/// Called by the VFS with a file being opened on our misc device.
unsafe extern "C" fn tun_chr_open(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    from_result(|| {
        let tfile = crate::tun_chr_open()?;
        // SAFETY: `file` is being opened; its private data and mode are
        // ours to set. `FMODE_NOWAIT`, as tun.c: `RWF_NOWAIT` (and
        // io_uring's non-blocking tries) read and write without blocking
        // (`noblock()` looks at `IOCB_NOWAIT`).
        unsafe {
            (*file).private_data = Arc::into_raw(tfile).cast_mut().cast();
            (*file).f_mode |= bindings::RTUN_FMODE_NOWAIT;
        }
        Ok(0)
    })
}

/// `file_operations.release`.
///
/// # Safety
///
/// Called by the VFS once per opened file, after every other operation.
unsafe extern "C" fn tun_chr_close(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: `open` stored the reference; this is the last use.
    let tfile = unsafe { Arc::from_raw((*file).private_data.cast::<crate::TunFile>()) };
    crate::tun_chr_close(tfile);
    0
}

/// `file_operations.read_iter`.
///
/// # Safety
///
/// Called by the VFS with a valid `iocb` of an open file of ours and a
/// valid `to`.
unsafe extern "C" fn tun_chr_read_iter(
    iocb: *mut bindings::kiocb,
    to: *mut bindings::iov_iter,
) -> isize {
    // SAFETY: Valid `iocb` of an open file of ours; `to` valid for the call.
    let (tfile, nb) = unsafe { (tfile_ref((*iocb).ki_filp), noblock(iocb)) };
    let mut to = IovIter(to);
    match crate::tun_chr_read_iter(tfile, &mut to, nb) {
        Ok(n) => n as isize,
        Err(e) => e.to_errno() as isize,
    }
}

/// `file_operations.write_iter`.
///
/// # Safety
///
/// Called by the VFS with a valid `iocb` of an open file of ours and a
/// valid `from`.
unsafe extern "C" fn tun_chr_write_iter(
    iocb: *mut bindings::kiocb,
    from: *mut bindings::iov_iter,
) -> isize {
    // SAFETY: Valid `iocb` of an open file of ours; `from` valid for the call.
    let (tfile, nb) = unsafe { (tfile_ref((*iocb).ki_filp), noblock(iocb)) };
    let mut from = IovIter(from);
    match crate::tun_chr_write_iter(tfile, &mut from, nb) {
        Ok(n) => n as isize,
        Err(e) => e.to_errno() as isize,
    }
}

/// `file_operations.poll`.
///
/// # Safety
///
/// Called by the VFS with an open file of ours and a valid poll table.
unsafe extern "C" fn tun_chr_poll(
    file: *mut bindings::file,
    table: *mut bindings::poll_table_struct,
) -> c_uint {
    // SAFETY: An open file of ours.
    let tfile = unsafe { tfile_ref(file) };
    crate::tun_chr_poll(tfile, &PollTable { file, table })
}

/// `file_operations.unlocked_ioctl`.
///
/// # Safety
///
/// Called by the VFS with an open file of ours.
unsafe extern "C" fn tun_chr_ioctl(file: *mut bindings::file, cmd: c_uint, arg: c_ulong) -> c_long {
    // SAFETY: An open file of ours.
    let tfile = unsafe { tfile_of(file) };
    match crate::tun_chr_ioctl(tfile, cmd, arg as usize) {
        Ok(v) => v as c_long,
        Err(e) => e.to_errno() as c_long,
    }
}
