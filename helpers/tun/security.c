// SPDX-License-Identifier: GPL-2.0

/* Exported functions with CONFIG_SECURITY_NETWORK, empty inlines without. */

#include <linux/security.h>

__rtun_helper int rtun_helper_security_tun_dev_create(void)
{
	return security_tun_dev_create();
}

__rtun_helper int rtun_helper_security_tun_dev_alloc_security(void **security)
{
	return security_tun_dev_alloc_security(security);
}

__rtun_helper void rtun_helper_security_tun_dev_free_security(void *security)
{
	security_tun_dev_free_security(security);
}

__rtun_helper int rtun_helper_security_tun_dev_open(void *security)
{
	return security_tun_dev_open(security);
}

__rtun_helper int rtun_helper_security_tun_dev_attach(struct sock *sk, void *security)
{
	return security_tun_dev_attach(sk, security);
}

__rtun_helper int rtun_helper_security_tun_dev_attach_queue(void *security)
{
	return security_tun_dev_attach_queue(security);
}
