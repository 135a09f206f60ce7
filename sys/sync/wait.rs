// SPDX-License-Identifier: GPL-2.0

//! Wait queues ([`WaitQueue`]) and poll ([`poll`], [`PollTable`]).

use crate::bindings;
use core::marker::PhantomData;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::types::Opaque;

/// A `wait_queue_head` that readers sleep on and `poll` registers with.
#[pin_data]
#[repr(transparent)]
pub(crate) struct WaitQueue {
    #[pin]
    head: Opaque<bindings::wait_queue_head>,
}

// SAFETY: A wait queue head is designed for use from any thread.
unsafe impl Send for WaitQueue {}
// SAFETY: A wait queue head has its own lock.
unsafe impl Sync for WaitQueue {}

impl WaitQueue {
    /// Sleeps until `cond` gives a value; `ERESTARTSYS` if a signal
    /// arrives first. The loop of tun.c's `tun_ring_recv()`: the entry is
    /// added once (`add_wait_queue`, default wake function) and stays on
    /// the queue across wake-ups, so a wake-up costs no re-queueing.
    #[inline(always)]
    pub(crate) fn wait_interruptible<R>(&self, mut cond: impl FnMut() -> Option<R>) -> Result<R> {
        let entry = Opaque::<bindings::wait_queue_entry>::uninit();
        // SAFETY: `entry` is valid for writes; `head` is initialised and
        // pinned; `entry` stays on the queue only until `remove_wait_queue`
        // below, within this frame.
        unsafe {
            bindings::init_waitqueue_entry(entry.get(), bindings::get_current());
            bindings::add_wait_queue(self.head.get(), entry.get());
        }
        let ret = loop {
            // SAFETY: Always allowed; `set_current_state` orders the state
            // write before `cond`'s reads (it has a full barrier).
            unsafe { bindings::set_current_state(bindings::RTUN_TASK_INTERRUPTIBLE) };
            if let Some(v) = cond() {
                break Ok(v);
            }
            // SAFETY: Always allowed.
            if unsafe { bindings::signal_pending(bindings::get_current()) } != 0 {
                break Err(ERESTARTSYS);
            }
            // SAFETY: Process context, no spinlock held (the caller's `cond`
            // takes and releases its locks).
            unsafe { bindings::schedule() };
        };
        // SAFETY: Back to running; `entry` leaves the queue before it dies.
        unsafe {
            bindings::__set_current_state(bindings::RTUN_TASK_RUNNING);
            bindings::remove_wait_queue(self.head.get(), entry.get());
        }
        ret
    }

    /// `wake_up_interruptible_poll()`; callable from any context.
    pub(crate) fn wake_up_poll(&self, mask: u32) {
        // SAFETY: `head` is initialised.
        unsafe { bindings::wake_up_interruptible_poll(self.head.get(), mask) };
    }

    /// `wake_up_interruptible_poll()` only if someone waits or polls
    /// (`wq_has_sleeper()`), as `sock_def_readable()` does for tun.c: the
    /// common case of a busy reader costs a fence and a load, not the
    /// wait queue's lock. The caller has published what the sleeper waits
    /// for; the full fence pairs with the one in `prepare_to_wait()`.
    #[inline(always)]
    pub(crate) fn wake_up_poll_if_sleeper(&self, mask: u32) {
        core::sync::atomic::fence(Ordering::SeqCst);
        // SAFETY: `head` is initialised.
        if unsafe { bindings::waitqueue_active(self.head.get()) } != 0 {
            // SAFETY: `head` is initialised. The sync variant, as
            // `sock_def_readable()` (tun.c's `sk_data_ready`) uses.
            unsafe { bindings::wake_up_interruptible_sync_poll(self.head.get(), mask) };
        }
    }
}

/// Poll event bits.
pub(crate) mod poll {
    use crate::bindings;
    /// `EPOLLIN | EPOLLRDNORM`.
    pub(crate) const IN: u32 = bindings::RTUN_EPOLLIN | bindings::RTUN_EPOLLRDNORM;
    /// `EPOLLOUT | EPOLLWRNORM`.
    pub(crate) const OUT: u32 = bindings::RTUN_EPOLLOUT | bindings::RTUN_EPOLLWRNORM;
    /// `EPOLLERR`.
    pub(crate) const ERR: u32 = bindings::RTUN_EPOLLERR;
}

/// The `poll_table` of one `poll()` call on a file whose private data is
/// borrowed for `'f`.
///
/// `'f` is a brand: invariant, and the lifetime of the `&'f` borrow of the
/// file's private data that the `poll` callback gets, which the file keeps
/// until its release. A wait queue registered with [`PollTable::wait`] must
/// live that long, because epoll keeps its entry on the queue until the
/// polled file is released (`eventpoll_release()` in `__fput()`), not until
/// `poll()` returns: only a queue reached from the private data (or a
/// `'static` one) is `&'f`. One reached from a device, or any other object
/// borrowed for less, does not compile.
pub(crate) struct PollTable<'f> {
    file: *mut bindings::file,
    table: *mut bindings::poll_table_struct,
    _brand: PhantomData<fn(&'f ()) -> &'f ()>,
}

impl<'f> PollTable<'f> {
    /// # Safety
    ///
    /// `file` and `table` are the `poll` callback's, valid for the call;
    /// the file's private data lives for `'f`, until the file's release.
    pub(in crate::sys) unsafe fn new(
        file: *mut bindings::file,
        table: *mut bindings::poll_table_struct,
    ) -> Self {
        Self {
            file,
            table,
            _brand: PhantomData,
        }
    }

    /// `poll_wait()`: registers `wq` with the caller of `poll()`.
    pub(crate) fn wait(&self, wq: &'f WaitQueue) {
        // SAFETY: `file` and `table` are valid during the callback (`new`'s
        // contract); `wq` lives for `'f`, until the file's release, after
        // which the poll tables' entries are gone (`eventpoll_release()`;
        // `poll()`/`select()` remove theirs before they return).
        unsafe { bindings::poll_wait(self.file, wq.head.get(), self.table) };
    }
}
