// SPDX-License-Identifier: GPL-2.0
/*
 * rtun_veto: a netdevice notifier for rust-tun's guest tests
 * (guest/src/faults.rs, faults_veto_lingering_ref). It vetoes the
 * registration of every device whose name starts with "rtunveto"
 * (NETDEV_REGISTER: -EPERM). register_netdevice() then unregisters the
 * device it had already listed; on that NETDEV_UNREGISTER this module takes
 * a reference to the device and gives it back from a delayed work 1.5 s
 * later, so that netdev_run_todo() waits for it and, after a second,
 * broadcasts NETDEV_UNREGISTER again to every notifier, the driver's
 * included: what another subsystem holding a reference makes happen.
 *
 * Read-only parameters count what happened: vetoes, holds (references
 * taken) and rebroadcasts (NETDEV_UNREGISTER seen again while held).
 */
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#define VETO_PREFIX "rtunveto"
#define HOLD_MS 1500

static int vetoes, holds, rebroadcasts;
module_param(vetoes, int, 0444);
MODULE_PARM_DESC(vetoes, "NETDEV_REGISTER events vetoed");
module_param(holds, int, 0444);
MODULE_PARM_DESC(holds, "references taken on NETDEV_UNREGISTER");
module_param(rebroadcasts, int, 0444);
MODULE_PARM_DESC(rebroadcasts, "NETDEV_UNREGISTER events seen while a reference was held");

/* One reference at a time; the fields below are written under rtnl. */
static struct {
	struct delayed_work work;
	struct net_device *dev;
	netdevice_tracker tracker;
	/* A veto happened: the next NETDEV_UNREGISTER takes the reference. */
	bool armed;
} hold;

static void hold_put(struct work_struct *work)
{
	rtnl_lock();
	netdev_put(hold.dev, &hold.tracker);
	hold.dev = NULL;
	rtnl_unlock();
}

static int veto_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);

	if (strncmp(dev->name, VETO_PREFIX, strlen(VETO_PREFIX)))
		return NOTIFY_DONE;
	switch (event) {
	case NETDEV_REGISTER:
		vetoes++;
		hold.armed = !hold.dev;
		return notifier_from_errno(-EPERM);
	case NETDEV_UNREGISTER:
		if (hold.dev == dev) {
			rebroadcasts++;
		} else if (hold.armed) {
			hold.armed = false;
			hold.dev = dev;
			netdev_hold(dev, &hold.tracker, GFP_KERNEL);
			holds++;
			schedule_delayed_work(&hold.work, msecs_to_jiffies(HOLD_MS));
		}
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block veto_notifier = {
	.notifier_call = veto_event,
};

static int __init veto_init(void)
{
	INIT_DELAYED_WORK(&hold.work, hold_put);
	return register_netdevice_notifier(&veto_notifier);
}

static void __exit veto_exit(void)
{
	unregister_netdevice_notifier(&veto_notifier);
	/* A reference still held goes now, not 1.5 s after the module. */
	flush_delayed_work(&hold.work);
}

module_init(veto_init);
module_exit(veto_exit);
MODULE_DESCRIPTION("rust-tun test: veto NETDEV_REGISTER, hold a reference on NETDEV_UNREGISTER");
MODULE_LICENSE("GPL");
