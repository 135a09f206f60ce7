// SPDX-License-Identifier: GPL-2.0

//! Character devices: the [`FileOps`] a driver implements for its open
//! files, the `file_operations` built from them at compile time
//! ([`FileVTable`]), and the misc device that carries them
//! ([`MiscDevice`], [`MiscDeviceRegistration`]), whose `open` sees the
//! [`File`] being opened; the shape of newer kernels'
//! `rust/kernel/miscdevice.rs`.

use super::errno::EBADFD;
use super::skb::{IovIterDest, IovIterSource};
use super::sync::wait::PollTable;
use super::{this_module, zeroed};
use crate::bindings;
use core::ffi::{c_int, c_long, c_uint, c_ulong};
use core::marker::PhantomData;
use kernel::build_error;
use kernel::error::{from_result, to_result, VTABLE_DEFAULT_ERROR};
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};
use kernel::types::Opaque;

/// What a driver does with its open files (7.3's `MiscDevice`, with
/// per-open data): each open file holds the `Arc<Self::Data>` that `open`
/// returned in `file->private_data` until `release`. An optional op the
/// driver does not implement stays `NULL` in the `file_operations`
/// (`#[vtable]`'s `HAS_*`), so the VFS's default applies (`EINVAL` for a
/// read or write, `ENOTTY` for an ioctl, always ready for `poll`).
#[vtable]
pub(crate) trait FileOps: 'static {
    /// The state of one open file, told of its file from `open` to
    /// `release` ([`FileBound`]).
    type Data: Send + Sync + FileBound;

    /// `open`: the new file's data. `file` is the file being opened,
    /// borrowed for the call; `misc` is the misc device it was opened on
    /// (the one of `file->private_data` at open, as `misc_open()` sets it),
    /// so a driver with several devices can tell them apart
    /// (`core::ptr::eq(misc, &MY_MISCDEV)`). 7.3's `MiscDevice::open`.
    fn open(file: &File, misc: &MiscDevice) -> Result<Arc<Self::Data>>;

    /// `release`: the last use of the file; by default the data's
    /// reference is dropped.
    fn release(data: Arc<Self::Data>) {
        drop(data);
    }

    /// `read_iter`; `noblock` for `O_NONBLOCK` or `IOCB_NOWAIT`. A read of
    /// `n > 0` bytes leaves the file position at `n` (`ki_pos`), as a
    /// packet device reports it (tun.c's `tun_chr_read_iter()`).
    fn read_iter(_data: &Self::Data, _to: &mut IovIterDest<'_>, _noblock: bool) -> Result<usize> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `write_iter`.
    fn write_iter(
        _data: &Self::Data,
        _from: &mut IovIterSource<'_>,
        _noblock: bool,
    ) -> Result<usize> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `poll`: the ready mask.
    /// `'f` is how long the file's private data lives, until its release
    /// ([`PollTable`]'s brand).
    fn poll<'f>(_data: &'f Self::Data, _table: &PollTable<'f>) -> u32 {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `unlocked_ioctl`, and `compat_ioctl` for 32-bit callers with
    /// [`IoctlAbi::Compat`] (`arg` is then already a 64-bit address or the
    /// zero-extended value: on x86_64 `compat_ptr()` is that too, as 7.3's
    /// fallback `compat_ptr_ioctl` passes it on).
    fn ioctl(
        _data: ArcBorrow<'_, Self::Data>,
        _cmd: u32,
        _arg: usize,
        _abi: IoctlAbi,
    ) -> Result<isize> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `show_fdinfo`: lines added to `/proc/PID/fdinfo/FD`.
    fn show_fdinfo(_data: &Self::Data, _m: &mut SeqFile) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `fasync`: `O_ASYNC` turned on or off (`F_SETFL`, `FIOASYNC`), and
    /// with `on == false` once more when a file with it is closed.
    fn fasync(_data: &Self::Data, _req: &Fasync, _on: bool) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// What an open file's data is told of its file: at open, the file it
/// now belongs to ([`FileBound::bind_file`]), and at release, that the
/// file is going ([`FileBound::unbind_file`]). tun's data hands its socket
/// the file (`sock->file`, sys/tun's `impl_file_socket!`); data with
/// nothing to bind says so with [`impl_file_unbound!`].
///
/// # Safety
///
/// An implementation may keep the pointer `bind_file` is given only until
/// `unbind_file` is called on the same object (the file is valid until
/// then, and not after).
pub(crate) unsafe trait FileBound {
    /// `file` is being opened with this data as its private data.
    ///
    /// # Safety
    ///
    /// `file` is valid until [`FileBound::unbind_file`] is called on
    /// `self`; `bind_file` is called once per object.
    unsafe fn bind_file(&self, file: *mut bindings::file);

    /// The file `bind_file` was given is being released.
    fn unbind_file(&self);
}

/// Implements [`FileBound`] for `$ty`, whose data keeps nothing of its
/// file.
macro_rules! impl_file_unbound {
    ($ty:ty) => {
        // The driver denies `unsafe_code`: this `unsafe` is sys/'s.
        #[allow(unsafe_code)]
        // SAFETY: Keeps nothing.
        unsafe impl $crate::sys::FileBound for $ty {
            unsafe fn bind_file(&self, _file: *mut $crate::bindings::file) {}
            fn unbind_file(&self) {}
        }
    };
}
pub(crate) use impl_file_unbound;

/// A `fasync` call: the open file whose `O_ASYNC` changes, and the
/// descriptor `fasync_helper()` records for `F_SETSIG`'s `si_fd`.
pub(crate) struct Fasync {
    pub(super) fd: c_int,
    pub(super) file: *mut bindings::file,
}

impl Fasync {
    /// `file_f_owner_allocate()`: the file's owner record (where
    /// `F_SETOWN` keeps its target), made if it has none.
    pub(crate) fn owner_allocate(&self) -> Result<FileOwner<'_>> {
        // SAFETY: An open file, during its `fasync` call.
        to_result(unsafe { bindings::file_f_owner_allocate(self.file) })?;
        // INVARIANT: The record exists now, and stays with the file.
        Ok(FileOwner(self))
    }
}

/// A file's owner record, allocated ([`Fasync::owner_allocate`]).
///
/// # Invariants
///
/// The file of the `fasync` call has its owner record (`file->f_owner`).
pub(crate) struct FileOwner<'a>(&'a Fasync);

impl FileOwner<'_> {
    /// `__f_setown(file, task_pid(current), PIDTYPE_TGID, 0)`: the file's
    /// signals go to the caller's process.
    pub(crate) fn set_current_tgid(&self) {
        // SAFETY: An open file whose owner record exists (`Self`'s
        // invariant); `current`'s pid lives as long as `current`, and
        // `__f_setown` takes its own reference.
        unsafe {
            bindings::__f_setown(
                self.0.file,
                bindings::task_pid(bindings::get_current()),
                bindings::RTUN_PIDTYPE_TGID as bindings::pid_type,
                0,
            )
        }
    }
}

/// Which ABI an ioctl comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum IoctlAbi {
    /// The native 64-bit one.
    Native,
    /// A 32-bit caller (`compat_ioctl`).
    Compat,
}

/// `sizeof(struct compat_ifreq)`: what tun.c copies for a 32-bit caller.
#[cfg(CONFIG_COMPAT)]
pub(crate) const COMPAT_IFREQ_LEN: usize = bindings::RTUN_COMPAT_IFREQ_SIZE as usize;

/// A `seq_file` being written (`show_fdinfo`).
pub(crate) struct SeqFile(*mut bindings::seq_file);

impl SeqFile {
    /// `seq_write()` of raw bytes (a device name is bytes, not UTF-8).
    pub(crate) fn write_bytes(&mut self, b: &[u8]) {
        // SAFETY: The seq_file of the current `show` call; `seq_write`
        // copies what fits and marks an overflow for a retry itself.
        unsafe { bindings::seq_write(self.0, b.as_ptr().cast(), b.len()) };
    }
}

impl core::fmt::Write for SeqFile {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        // SAFETY: The seq_file of the current `show` call; `seq_write`
        // copies what fits and marks an overflow for a retry itself.
        unsafe { bindings::seq_write(self.0, s.as_ptr().cast(), s.len()) };
        Ok(())
    }
}

/// The file [`FileOps::open`] is called for, borrowed for the call: what
/// a driver may read of it, and the one change `open` may make to it.
/// It is neither `Send` nor `Sync`, and only a `&File` of `open`'s call
/// exists: it cannot be kept beyond `open` (compile-fail case
/// `file_escapes_open`) nor copied out (`file_copied_out`).
///
/// # Invariants
///
/// A file being opened by the VFS, in its `open` call: not yet installed
/// in a file table, so the thread in `open` is its only user.
#[repr(transparent)]
pub(crate) struct File(Opaque<bindings::file>);

impl File {
    /// # Safety
    ///
    /// `file` is being opened (see the type invariants), for `'a`.
    unsafe fn from_raw<'a>(file: *mut bindings::file) -> &'a Self {
        // SAFETY: `File` is transparent over the C struct; valid for `'a`
        // as the caller guarantees.
        unsafe { &*file.cast::<Self>() }
    }

    /// `file->f_flags`: the `O_*` flags it is opened with (`O_NONBLOCK`,
    /// `O_RDWR`, ...).
    pub(crate) fn flags(&self) -> u32 {
        // SAFETY: A live file (type invariants); `open` does not change
        // `f_flags`.
        unsafe { (*self.0.get()).f_flags }
    }

    /// `file->f_mode |= FMODE_NOWAIT`: the driver serves `IOCB_NOWAIT`
    /// (`RWF_NOWAIT`) I/O without blocking, which the VFS otherwise
    /// refuses (`EOPNOTSUPP`).
    pub(crate) fn set_fmode_nowait(&self) {
        // SAFETY: The file is being opened, by this thread alone (type
        // invariants): its mode is the opener's to set, as C's `open`s do.
        unsafe { (*self.0.get()).f_mode |= bindings::RTUN_FMODE_NOWAIT };
    }
}

/// The `file_operations` of a [`FileOps`], built at compile time: a
/// `static` of the driver's. Open files pin the module (`owner`).
///
/// # Invariants
///
/// Only a [`MiscDevice`] installs the table (its field is private to this
/// file): its `open` is called by `misc_open()`, with `file->private_data`
/// the `struct miscdevice` of a [`MiscDevice`].
pub(crate) struct FileVTable(bindings::file_operations);

impl FileVTable {
    /// The data of `file` if it is one of these operations' files.
    ///
    /// # Safety
    ///
    /// `file` is a live file the caller holds a reference on for `'a`,
    /// and these are `T`'s operations.
    pub(super) unsafe fn data_of<'a, T: FileOps>(
        &'static self,
        file: *mut bindings::file,
    ) -> Result<&'a T::Data> {
        // SAFETY: A live file (the caller's guarantee).
        let (fop, data) = unsafe { ((*file).f_op, (*file).private_data) };
        if !core::ptr::eq(fop, &self.0) {
            return Err(EINVAL);
        }
        if data.is_null() {
            return Err(EBADFD);
        }
        // SAFETY: One of `T`'s files: its private data is its `T::Data`
        // from open to release, and the caller's reference keeps it open.
        Ok(unsafe { &*data.cast::<T::Data>() })
    }
}

// SAFETY: Function pointers and the module pointer, read by the kernel.
unsafe impl Sync for FileVTable {}

impl FileVTable {
    pub(crate) const fn new<T: FileOps>() -> Self {
        type A<T> = FopsAdapter<T>;
        Self(bindings::file_operations {
            read_iter: if T::HAS_READ_ITER {
                Some(A::<T>::read_iter)
            } else {
                None
            },
            write_iter: if T::HAS_WRITE_ITER {
                Some(A::<T>::write_iter)
            } else {
                None
            },
            poll: if T::HAS_POLL {
                Some(A::<T>::poll)
            } else {
                None
            },
            unlocked_ioctl: if T::HAS_IOCTL {
                Some(A::<T>::ioctl)
            } else {
                None
            },
            #[cfg(CONFIG_COMPAT)]
            compat_ioctl: if T::HAS_IOCTL {
                Some(A::<T>::compat_ioctl)
            } else {
                None
            },
            show_fdinfo: if T::HAS_SHOW_FDINFO {
                Some(A::<T>::show_fdinfo)
            } else {
                None
            },
            fasync: if T::HAS_FASYNC {
                Some(A::<T>::fasync)
            } else {
                None
            },
            open: Some(A::<T>::open),
            release: Some(A::<T>::release),
            owner: this_module(),
            ..zeroed()
        })
    }
}

/// The C trampolines of a [`FileOps`].
struct FopsAdapter<T>(PhantomData<T>);

impl<T: FileOps> FopsAdapter<T> {
    /// The data behind `file->private_data`, borrowed.
    ///
    /// # Safety
    ///
    /// `file` is a file of `T`'s between `open` and `release`.
    #[inline(always)]
    unsafe fn data<'a>(file: *mut bindings::file) -> &'a T::Data {
        // SAFETY: `open` stored an `Arc<T::Data>` there, released only by
        // `release`, which runs after every other file operation;
        // `Arc::into_raw` points at the data.
        unsafe { &*(*file).private_data.cast::<T::Data>() }
    }

    /// Whether the call must not block.
    ///
    /// # Safety
    ///
    /// `iocb` is valid.
    unsafe fn noblock(iocb: *mut bindings::kiocb) -> bool {
        // SAFETY: Valid `iocb` and its file.
        unsafe {
            ((*(*iocb).ki_filp).f_flags & bindings::O_NONBLOCK) != 0
                || ((*iocb).ki_flags & bindings::RTUN_IOCB_NOWAIT) != 0
        }
    }

    /// # Safety
    ///
    /// Called by `misc_open()`, under `misc_mtx`, with a file being opened
    /// on a [`MiscDevice`] of these operations.
    unsafe extern "C" fn open(_inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
        // SAFETY: `misc_open()` set the private data to the misc device
        // the file is opened on, which is a `MiscDevice` (`FileVTable`'s
        // invariant; `MiscDevice` is transparent over the C struct), a
        // registered `static`; `file` is being opened, by this call alone.
        let (misc, f) = unsafe {
            (
                &*(*file).private_data.cast::<MiscDevice>(),
                File::from_raw(file),
            )
        };
        from_result(|| {
            let data = T::open(f, misc)?;
            // SAFETY: `file` is the file being opened, valid until its
            // `release`, which calls `unbind_file` first.
            unsafe { data.bind_file(file) };
            // SAFETY: `file` is being opened; its private data is ours to
            // set (`misc_open()` does not read it again).
            unsafe { (*file).private_data = Arc::into_raw(data).cast_mut().cast() };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the VFS once per opened file, after every other operation.
    unsafe extern "C" fn release(_inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
        // SAFETY: `open` stored the reference; this is its last use.
        let data = unsafe { Arc::from_raw((*file).private_data.cast::<T::Data>()) };
        // The data may outlive the file (tun's socket: packets in flight
        // hold it): from here on it belongs to no file.
        data.unbind_file();
        T::release(data);
        0
    }

    /// # Safety
    ///
    /// Called by the VFS with an open file of `T`'s (`setfl`, `ioctl`'s
    /// `FIOASYNC`, and `__fput` before `release`).
    unsafe extern "C" fn fasync(fd: c_int, file: *mut bindings::file, on: c_int) -> c_int {
        // SAFETY: An open file of `T`'s.
        let data = unsafe { Self::data(file) };
        match T::fasync(data, &Fasync { fd, file }, on != 0) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// # Safety
    ///
    /// Called by the VFS with a valid `iocb` of an open file of `T`'s and a
    /// valid `to`.
    unsafe extern "C" fn read_iter(
        iocb: *mut bindings::kiocb,
        to: *mut bindings::iov_iter,
    ) -> isize {
        // SAFETY: An open file of `T`'s; `to` is valid for the call.
        let (data, nb, mut to) = unsafe {
            (
                Self::data((*iocb).ki_filp),
                Self::noblock(iocb),
                IovIterDest::from_raw(to),
            )
        };
        match T::read_iter(data, &mut to, nb) {
            Ok(n) => {
                if n > 0 {
                    // SAFETY: The VFS's `iocb` for this call; it copies
                    // `ki_pos` back to `f_pos` (or drops it for `pread`).
                    unsafe { (*iocb).ki_pos = n as i64 };
                }
                n as isize
            }
            Err(e) => e.to_errno() as isize,
        }
    }

    /// # Safety
    ///
    /// Called by the VFS with a valid `iocb` of an open file of `T`'s and a
    /// valid `from`.
    unsafe extern "C" fn write_iter(
        iocb: *mut bindings::kiocb,
        from: *mut bindings::iov_iter,
    ) -> isize {
        // SAFETY: An open file of `T`'s; `from` is valid for the call.
        let (data, nb, mut from) = unsafe {
            (
                Self::data((*iocb).ki_filp),
                Self::noblock(iocb),
                IovIterSource::from_raw(from),
            )
        };
        match T::write_iter(data, &mut from, nb) {
            Ok(n) => n as isize,
            Err(e) => e.to_errno() as isize,
        }
    }

    /// # Safety
    ///
    /// Called by the VFS with an open file of `T`'s and a valid poll table.
    unsafe extern "C" fn poll(
        file: *mut bindings::file,
        table: *mut bindings::poll_table_struct,
    ) -> c_uint {
        // SAFETY: An open file of `T`'s, whose private data lives until its
        // release; `file` and `table` are valid for the call.
        let (data, table) = unsafe { (Self::data(file), PollTable::new(file, table)) };
        T::poll(data, &table)
    }

    /// # Safety
    ///
    /// Called by the VFS with an open file of `T`'s.
    unsafe extern "C" fn ioctl(file: *mut bindings::file, cmd: c_uint, arg: c_ulong) -> c_long {
        // SAFETY: `open` stored an `Arc<T::Data>`, alive until `release`.
        let data = unsafe { ArcBorrow::from_raw((*file).private_data.cast::<T::Data>()) };
        match T::ioctl(data, cmd, arg as usize, IoctlAbi::Native) {
            Ok(v) => v as c_long,
            Err(e) => c_long::from(e.to_errno()),
        }
    }

    /// # Safety
    ///
    /// Called by the VFS for a 32-bit caller with an open file of `T`'s.
    #[cfg(CONFIG_COMPAT)]
    unsafe extern "C" fn compat_ioctl(
        file: *mut bindings::file,
        cmd: c_uint,
        arg: c_ulong,
    ) -> c_long {
        // SAFETY: `open` stored an `Arc<T::Data>`, alive until `release`.
        let data = unsafe { ArcBorrow::from_raw((*file).private_data.cast::<T::Data>()) };
        // x86_64: `compat_ptr()` and `(compat_ulong_t)arg` both zero-extend
        // the low 32 bits, which is what tun.c's compat_ioctl passes on.
        #[cfg(not(target_arch = "x86_64"))]
        compile_error!("compat_ptr() is the zero-extension only on x86_64");
        match T::ioctl(data, cmd, arg as u32 as usize, IoctlAbi::Compat) {
            Ok(v) => v as c_long,
            Err(e) => c_long::from(e.to_errno()),
        }
    }

    /// # Safety
    ///
    /// Called by procfs with a seq_file and an open file of `T`'s.
    unsafe extern "C" fn show_fdinfo(m: *mut bindings::seq_file, file: *mut bindings::file) {
        // SAFETY: An open file of `T`'s.
        let data = unsafe { Self::data(file) };
        T::show_fdinfo(data, &mut SeqFile(m));
    }
}

/// What a misc device is: the fields of its `struct miscdevice` that a
/// driver chooses, named, for [`MiscDevice::new`] (mainline's
/// `MiscDeviceOptions`).
pub(crate) struct MiscDeviceOptions {
    /// `name`: the device's name (`/sys/class/misc/<name>`, and its node
    /// `/dev/<name>` unless `nodename` says otherwise).
    pub(crate) name: &'static CStr,
    /// `nodename`: the node's path under `/dev`, if not `name`.
    pub(crate) nodename: Option<&'static CStr>,
    /// `minor`: a fixed minor, or `None` for a dynamic one
    /// (`MISC_DYNAMIC_MINOR`).
    pub(crate) minor: Option<u8>,
    /// `mode`: the node's permissions (0: devtmpfs' default, 0600).
    pub(crate) mode: u16,
    /// `fops`: what its open files do.
    pub(crate) fops: &'static FileVTable,
}

/// A misc device (`struct miscdevice`): a `static` of the driver's, which
/// `misc_register` links into its list (under `misc_mtx`; Rust only reads
/// what it wrote itself, or passes the pointer). [`FileOps::open`] gets the
/// one a file is opened on.
#[repr(transparent)]
pub(crate) struct MiscDevice(Opaque<bindings::miscdevice>);

// SAFETY: `MiscDevice` has no method that writes the `miscdevice`, and
// reads only the fields Rust wrote before registering it (as mainline's
// `MiscDeviceRegistration`): its address goes to
// `misc_register`/`misc_deregister`, which serialise the kernel's accesses
// under `misc_mtx`.
unsafe impl Sync for MiscDevice {}

impl MiscDevice {
    /// The misc device `opts` describes.
    pub(crate) const fn new(opts: MiscDeviceOptions) -> Self {
        Self(Opaque::new(bindings::miscdevice {
            minor: match opts.minor {
                Some(m) => m as c_int,
                None => bindings::MISC_DYNAMIC_MINOR as c_int,
            },
            name: crate::sys::compat::cstr_ptr(opts.name).cast(),
            nodename: match opts.nodename {
                Some(n) => crate::sys::compat::cstr_ptr(n).cast(),
                None => core::ptr::null(),
            },
            mode: opts.mode,
            fops: &opts.fops.0,
            ..zeroed()
        }))
    }
}

/// Registration of a misc device, undone on drop.
pub(crate) struct MiscDeviceRegistration(&'static MiscDevice);

impl MiscDeviceRegistration {
    /// `misc_register()`.
    pub(crate) fn register(dev: &'static MiscDevice) -> Result<Self> {
        // SAFETY: A static miscdevice, registered once.
        to_result(unsafe { bindings::misc_register(dev.0.get()) })?;
        Ok(Self(dev))
    }
}

impl Drop for MiscDeviceRegistration {
    fn drop(&mut self) {
        // SAFETY: Registered in `register`.
        unsafe { bindings::misc_deregister(self.0 .0.get()) }
    }
}
