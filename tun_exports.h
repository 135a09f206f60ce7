/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tun.ko's exports for vhost-net, served by rust_tun's files under names of
 * rust_tun's own (sys/vhost.rs defines them, tun_exports.c exports them),
 * and given tun.ko's names by rust_tun_vhost.ko (rust_tun_vhost.c).
 */
#ifndef RTUN_TUN_EXPORTS_H
#define RTUN_TUN_EXPORTS_H

struct file;
struct ptr_ring;
struct socket;

struct socket *rtun_get_socket(struct file *file);
struct ptr_ring *rtun_get_tx_ring(struct file *file);
void rtun_wake_queue(struct file *file, int consumed);

#endif
