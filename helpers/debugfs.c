// SPDX-License-Identifier: GPL-2.0

#include <linux/debugfs.h>

/* A function on 6.12, a _Generic macro over the fops' type on 7.3. */
__rtun_helper struct dentry *rtun_helper_debugfs_create_file(const char *name, umode_t mode,
							     struct dentry *parent, void *data,
							     const struct file_operations *fops)
{
	return debugfs_create_file(name, mode, parent, data, fops);
}
