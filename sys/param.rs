// SPDX-License-Identifier: GPL-2.0

//! A driver's module parameters. 6.12's `module!` has no parameters, so a
//! driver declares each with `module_param()` in a C file of its own
//! (`tun_params.c`, `dummy_params.c`) together with an accessor
//! `rtun_param_<name>()`, declared in `params.h`; [`module_params!`] gives
//! the driver a safe Rust function for each. The parameters themselves,
//! their names, types and ranges are the driver's; this layer only knows
//! the accessors' naming rule.

/// `module_params! { fn NAME() -> TYPE; ... }`: for each, a function
/// `NAME()` of the caller's module that returns the parameter through its
/// accessor `rtun_param_NAME()` (a `TYPE` other than the accessor's does
/// not compile).
///
/// Every `rtun_param_*` function is such an accessor (`params.h`, and
/// `Kbuild` binds no other function of that name): it takes no
/// arguments, has no preconditions and reads its parameter with
/// `READ_ONCE()`, so calling it is safe in any context.
macro_rules! module_params {
    ($($(#[$meta:meta])* $vis:vis fn $name:ident() -> $ty:ty;)*) => {
        $(
            $(#[$meta])*
            $vis fn $name() -> $ty {
                ::kernel::macros::paste! {
                    // The driver denies `unsafe_code`: this `unsafe` is sys/'s.
                    #[allow(unsafe_code)]
                    // SAFETY: A parameter accessor: no arguments, no
                    // preconditions, a READ_ONCE() (the rule above).
                    unsafe { $crate::bindings::[<rtun_param_ $name>]() }
                }
            }
        )*
    };
}
pub(crate) use module_params;
