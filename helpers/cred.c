// SPDX-License-Identifier: GPL-2.0

#include <linux/cred.h>
#include <linux/uidgid.h>

__rtun_helper struct user_namespace *rtun_helper_current_user_ns(void)
{
	return current_user_ns();
}

__rtun_helper kuid_t rtun_helper_current_euid(void)
{
	return current_euid();
}

__rtun_helper kuid_t rtun_helper_current_fsuid(void)
{
	return current_fsuid();
}

__rtun_helper kuid_t rtun_helper_make_kuid(struct user_namespace *from, uid_t uid)
{
	return make_kuid(from, uid);
}

__rtun_helper kgid_t rtun_helper_make_kgid(struct user_namespace *from, gid_t gid)
{
	return make_kgid(from, gid);
}

__rtun_helper bool rtun_helper_uid_valid(kuid_t uid)
{
	return uid_valid(uid);
}

__rtun_helper bool rtun_helper_gid_valid(kgid_t gid)
{
	return gid_valid(gid);
}

__rtun_helper bool rtun_helper_uid_eq(kuid_t left, kuid_t right)
{
	return uid_eq(left, right);
}

__rtun_helper uid_t rtun_helper_from_kuid_munged(struct user_namespace *to, kuid_t kuid)
{
	return from_kuid_munged(to, kuid);
}

__rtun_helper gid_t rtun_helper_from_kgid_munged(struct user_namespace *to, kgid_t kgid)
{
	return from_kgid_munged(to, kgid);
}
