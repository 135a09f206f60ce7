// SPDX-License-Identifier: GPL-2.0

#include <linux/fs.h>

__rtun_helper struct inode *rtun_helper_file_inode(const struct file *f)
{
	return file_inode(f);
}
