// SPDX-License-Identifier: GPL-2.0

#include <linux/mm.h>

__rtun_helper struct page *rtun_helper_virt_to_head_page(const void *x)
{
	return virt_to_head_page(x);
}

__rtun_helper void *rtun_helper_page_address(const struct page *page)
{
	return page_address(page);
}

__rtun_helper void rtun_helper_put_page(struct page *page)
{
	put_page(page);
}

__rtun_helper void rtun_helper_get_page(struct page *page)
{
	get_page(page);
}
