//! `rtun`: the guest-side programs of rust-tun.
//!
//! - `rtun test [FILTER]`: the guest test suite, KTAP output.
//! - `rtun list [FILTER]`: the names `rtun test` would run, one a line.
//! - `rtun tap-drain NODE NAME`: create a TAP device on NODE named NAME,
//!   bring it up and read (drain) it until killed; for pktgen runs.
//! - `rtun steer-drain NODE NAME QUEUES PROG`: the same with a multi-queue
//!   TAP of QUEUES queues, steered by an eBPF program (PROG `bpf`) or by the
//!   flow table (`none`); prints each queue's frame count when killed.
//!
//! It runs as PID 1's child in the test initramfs, as root, with busybox for
//! `insmod`, `rmmod`, `ip` and `ping`.

mod bpf;
mod pkt;
mod stress;
mod tun;

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};
use tun::*;

macro_rules! check {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!("{}:{}: {}", file!(), line!(), format!($($fmt)+)));
        }
    };
}

macro_rules! expect_errno {
    ($res:expr, $errno:expr, $what:expr) => {
        match $res {
            Err(e) if e == $errno => {}
            Err(e) => {
                return Err(format!(
                    "{}:{}: {}: errno {} ({}), expected {} ({})",
                    file!(), line!(), $what, e, errname(e), $errno, errname($errno)
                ))
            }
            Ok(_) => {
                return Err(format!(
                    "{}:{}: {}: succeeded, expected {} ({})",
                    file!(), line!(), $what, $errno, errname($errno)
                ))
            }
        }
    };
}

/// Ends a test as skipped (KTAP `# SKIP`), with the reason.
macro_rules! skip {
    ($($fmt:tt)+) => {
        return Err(format!("SKIP: {}", format!($($fmt)+)))
    };
}

// The harness: the runner, its test table, the helpers the tests share.
mod harness;
mod knobs;
mod runner;
mod suite;

use harness::*;
use knobs::*;

// The tests, by concept.
mod abi;
mod backpressure;
mod badinput;
mod basics;
mod behaviour;
mod clients;
mod dummy;
mod ethtool;
mod faults;
mod fileops;
mod flows;
mod fuzz;
mod guards;
mod hardening;
mod long;
mod lsm;
mod nl;
mod queues;
mod vhost;
mod vnet;

// The other subcommands.
mod cmds;

/// Prints a subcommand's summary line or error; its exit status.
fn report(what: &str, r: Result<String, String>) -> i32 {
    match r {
        Ok(line) => {
            println!("{line}");
            0
        }
        Err(e) => {
            eprintln!("rtun: {what}: {e}");
            1
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let code = match args.get(1).map(String::as_str) {
        Some("test") => runner::run_tests(args.get(2).map(String::as_str)),
        Some("list") => runner::list_tests(args.get(2).map(String::as_str)),
        Some("tap-drain") if args.len() == 4 => cmds::tap_drain(&args[2], &args[3]),
        Some("steer-drain") if args.len() == 6 => cmds::steer_drain(&args[2], &args[3], &args[4], &args[5]),
        Some("attach") if args.len() == 4 => cmds::attach(&args[2], &args[3]),
        Some("stress") if args.len() == 5 => report(
            "stress",
            stress::stress(&args[2], args[3].parse().unwrap_or(1), args[4].parse().unwrap_or(10)),
        ),
        Some("fuzz") if args.len() == 6 => {
            let num = |i: usize| args[i].parse().unwrap_or(1);
            report("fuzz", fuzz::fuzz(&args[2], num(3), num(4), num(5)))
        }
        Some("fuzz-diff") if args.len() == 4 => {
            let num = |i: usize| args[i].parse().unwrap_or(1);
            report("fuzz-diff", fuzz::diff::fuzz_diff(num(2), num(3)))
        }
        Some("bench-write") if args.len() == 6 => {
            let num = |i: usize| args[i].parse().unwrap_or(0);
            report("bench-write", cmds::bench_write(&args[2], &args[3], num(4), num(5)))
        }
        Some("bench-xdp") if args.len() == 5 => {
            let num = |i: usize| args[i].parse().unwrap_or(0);
            report("bench-xdp", cmds::bench_xdp(&args[2], &args[3], num(4)))
        }
        Some("bench-gso") if args.len() == 5 => {
            let num = |i: usize| args[i].parse().unwrap_or(0);
            report("bench-gso", vnet::gso::bench_gso(&args[2], num(3), num(4)))
        }
        Some("bench-vhost") if args.len() == 5 => {
            let num = |i: usize| args[i].parse().unwrap_or(0);
            report("bench-vhost", vhost::bench_vhost(&args[2], &args[3], num(4)))
        }
        Some("mkdevs") if args.len() == 6 => {
            let num = |i: usize| args[i].parse().unwrap_or(0);
            report("mkdevs", cmds::mkdevs(&args[2], &args[3], num(4), num(5)))
        }
        Some("fd-client") if args.len() == 4 => report("fd-client", behaviour::fdpass::fd_client(&args[2], &args[3])),
        Some("block-read") if args.len() == 4 => report("block-read", behaviour::fdpass::block_read(&args[2], &args[3])),
        Some("userns") if args.len() == 5 => report("userns", hardening::netns::userns(&args[2], &args[3], &args[4])),
        Some("ns-roundtrip") if args.len() == 4 => report("ns-roundtrip", hardening::netns::ns_roundtrip(&args[2], &args[3])),
        Some("ns-traffic") if args.len() == 4 => {
            report("ns-traffic", hardening::netns::ns_traffic(&args[2], args[3].parse().unwrap_or(2)))
        }
        _ => {
            eprintln!(
                "usage: rtun test [FILTER] | rtun list [FILTER] | rtun tap-drain NODE NAME | rtun attach NODE NAME\n       \
                 rtun steer-drain NODE NAME QUEUES bpf|none\n       \
                 rtun bench-write NODE NAME FLOWS PACKETS | rtun bench-vhost NODE tx|rx|tx-xdp COUNT\n       \
                 rtun bench-xdp NODE drop|tx|redirect COUNT\n       \
                 rtun stress NODE SEED SECS\n       \
                 rtun fuzz NODE SEED ITERS PROCS | rtun fuzz-diff SEED ITERS\n       \
                 rtun mkdevs NODE PREFIX COUNT QUEUES | rtun fd-client recv|fd ARG\n       \
                 rtun block-read NODE NAME | rtun userns NODE MODE NAME\n       \
                 rtun ns-roundtrip NODE NAME | rtun ns-traffic NODE SECS"
            );
            2
        }
    };
    std::process::exit(code);
}
