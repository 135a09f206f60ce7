// SPDX-License-Identifier: GPL-2.0

#include <linux/jump_label.h>

__rtun_helper int rtun_helper_static_key_count(struct static_key *key)
{
	return static_key_count(key);
}

#ifdef CONFIG_JUMP_LABEL
__rtun_helper unsigned long rtun_helper_jump_entry_code(const struct jump_entry *entry)
{
	return jump_entry_code(entry);
}

__rtun_helper unsigned long rtun_helper_jump_entry_target(const struct jump_entry *entry)
{
	return jump_entry_target(entry);
}

__rtun_helper struct static_key *rtun_helper_jump_entry_key(const struct jump_entry *entry)
{
	return jump_entry_key(entry);
}
#endif
