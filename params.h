/* SPDX-License-Identifier: GPL-2.0 */
/* The module's parameters (params.c), for bindgen and params.c. */
#ifndef RUST_TUN_PARAMS_H
#define RUST_TUN_PARAMS_H

#include <linux/types.h>

bool rtun_param_unguarded(void);
bool rtun_param_dropin(void);
unsigned long rtun_param_flow_ageing(void);

#endif /* RUST_TUN_PARAMS_H */
