// SPDX-License-Identifier: GPL-2.0

//! Locking, RCU, rtnl, wait queues and timers: `SpinLockBh`,
//! `RcuArc`, `Rtnl`, `WaitQueue`, `Timer`.
//!
//! One file per concept: [`lock`] (spinlocks, bottom halves), [`rtnl`],
//! [`publish`] (pointers published to lockless readers), [`wait`] (wait
//! queues, poll), [`time`] (jiffies, timers, RCU grace-period cookies).

pub(super) mod lock;
pub(super) mod publish;
pub(super) mod rtnl;
pub(super) mod time;
pub(super) mod wait;
