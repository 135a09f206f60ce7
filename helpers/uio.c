// SPDX-License-Identifier: GPL-2.0

#include <linux/uio.h>

__rtun_helper size_t rtun_helper_iov_iter_count(const struct iov_iter *i)
{
	return iov_iter_count(i);
}

__rtun_helper bool rtun_helper_copy_from_iter_full(void *addr, size_t bytes, struct iov_iter *i)
{
	return copy_from_iter_full(addr, bytes, i);
}

__rtun_helper size_t rtun_helper_copy_to_iter(const void *addr, size_t bytes, struct iov_iter *i)
{
	return copy_to_iter(addr, bytes, i);
}

__rtun_helper bool rtun_helper_iter_is_iovec(const struct iov_iter *i)
{
	return iter_is_iovec(i);
}

__rtun_helper bool rtun_helper_iter_is_ubuf(const struct iov_iter *i)
{
	return iter_is_ubuf(i);
}

__rtun_helper const struct iovec *rtun_helper_iter_iov(const struct iov_iter *iter)
{
	return iter_iov(iter);
}
