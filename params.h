/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The modules' parameters, for bindgen and their C files: rust_tun's
 * (tun_params.c) and rust_dummy's (dummy_params.c). Each is read through
 * an accessor rtun_param_<name>(): no arguments, no preconditions, a
 * READ_ONCE() of the parameter. Rust reads them through sys/param.rs's
 * module_params!, which relies on that rule: declare nothing else under
 * this prefix.
 */
#ifndef RUST_TUN_PARAMS_H
#define RUST_TUN_PARAMS_H

#include <linux/types.h>

bool rtun_param_unguarded(void);
bool rtun_param_dropin(void);
unsigned long rtun_param_flow_ageing(void);
unsigned int rtun_param_micro_bench_calls(void);
int rtun_param_numdummies(void);

#endif /* RUST_TUN_PARAMS_H */
