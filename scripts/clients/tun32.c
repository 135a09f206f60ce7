// SPDX-License-Identifier: GPL-2.0
/*
 * tun32: a 32-bit client of a tun clone device, built with gcc -m32 -static
 * (scripts/build-clients.sh), so that every ioctl below goes through the
 * driver's compat_ioctl with the numbers and struct layouts a 32-bit program
 * computes: struct ifreq is 32 bytes here (40 on x86_64), struct sock_fprog
 * 8 (16), which changes the number of TUNATTACHFILTER/TUNDETACHFILTER/
 * TUNGETFILTER.
 *
 * usage: tun32 NODE NAME
 *
 * Runs a fixed sequence of steps on NODE (e.g. /dev/net/tun) and prints one
 * line per step:
 *	step=<name> ret=<n> errno=<name or 0> [values]
 * It reports and does not judge (it exits 0 unless NODE cannot be opened or
 * the usage is wrong): the test compares its output between drivers. The
 * values never include anything random (MAC addresses, ifindex).
 *
 * The last steps write a 60-byte Ethernet frame while the device is down,
 * bring it up (SIOCSIFFLAGS on a socket), write it again, and read with
 * O_NONBLOCK.
 *
 * "overrun=1" means the driver wrote past the end of the 32-bit structure
 * (the bytes after it are a canary): a driver that copies a 64-bit ifreq or
 * sock_fprog back to a 32-bit caller would show it.
 *
 * Only the kernel's uapi headers (installed from the kernel tree under test)
 * provide the linux/ definitions.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/if.h>
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>

#if !defined(__i386__)
#error "tun32 must be built with -m32: it exists to exercise the compat ioctls"
#endif

#define CANARY 0xa5

/* A 32-bit structure followed by canary bytes. */
struct ifreq_guard {
	struct ifreq ifr;
	unsigned char canary[16];
};

struct fprog_guard {
	struct sock_fprog prog;
	unsigned char canary[16];
};

static int fd = -1;

static const char *errname(int ret, int err)
{
	const char *name;

	if (ret >= 0)
		return "0";
	name = strerrorname_np(err);
	return name ? name : "?";
}

/* Print one step's line: name, result, then "cmd=0x..." and VALUES. */
static void report(const char *step, int ret, int err, const char *values)
{
	printf("step=%s ret=%d errno=%s%s%s\n", step, ret, errname(ret, err),
	       values[0] ? " " : "", values);
	fflush(stdout);
}

static int overrun(const unsigned char *canary, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (canary[i] != CANARY)
			return 1;
	return 0;
}

/* An ioctl whose argument is an integer value, not a pointer. */
static void step_value(const char *step, unsigned long cmd, unsigned long arg)
{
	char values[64];
	int ret = ioctl(fd, cmd, arg);
	int err = errno;

	snprintf(values, sizeof(values), "cmd=0x%08lx", cmd);
	report(step, ret, err, values);
}

/* An ioctl that reads or writes one int through a pointer. */
static void step_int(const char *step, unsigned long cmd, int in, int print)
{
	char values[64];
	int v = in;
	int ret = ioctl(fd, cmd, &v);
	int err = errno;

	if (print && ret >= 0)
		snprintf(values, sizeof(values), "cmd=0x%08lx value=%d", cmd, v);
	else
		snprintf(values, sizeof(values), "cmd=0x%08lx", cmd);
	report(step, ret, err, values);
}

/* An ioctl on a guarded struct ifreq; prints the flags when asked. */
static void step_ifreq(const char *step, unsigned long cmd,
		       struct ifreq_guard *g, int print_flags)
{
	char values[128];
	int ret, err;

	memset(g->canary, CANARY, sizeof(g->canary));
	ret = ioctl(fd, cmd, &g->ifr);
	err = errno;
	if (print_flags && ret >= 0)
		snprintf(values, sizeof(values),
			 "cmd=0x%08lx name=%.*s flags=0x%04x overrun=%d", cmd,
			 IFNAMSIZ, g->ifr.ifr_name,
			 (unsigned short)g->ifr.ifr_flags,
			 overrun(g->canary, sizeof(g->canary)));
	else
		snprintf(values, sizeof(values), "cmd=0x%08lx overrun=%d", cmd,
			 overrun(g->canary, sizeof(g->canary)));
	report(step, ret, err, values);
}

int main(int argc, char **argv)
{
	struct ifreq_guard g;
	struct fprog_guard fg;
	struct sock_filter accept_all = BPF_STMT(BPF_RET | BPF_K, 0xffffffff);
	union {
		struct tun_filter f;
		unsigned char bytes[sizeof(struct tun_filter) + ETH_ALEN];
	} txf;
	static const unsigned char filter_mac[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x32 };
	unsigned char frame[60], buf[2048];
	unsigned int features = 0;
	char values[128];
	int ret, err, sock;

	if (argc != 3 || strlen(argv[2]) >= IFNAMSIZ) {
		fprintf(stderr, "usage: %s NODE NAME\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		printf("step=open ret=-1 errno=%s\n", errname(-1, errno));
		return 1;
	}
	printf("step=open ret=0 errno=0 sizeof_ifreq=%zu sizeof_sock_fprog=%zu\n",
	       sizeof(struct ifreq), sizeof(struct sock_fprog));

	ret = ioctl(fd, TUNGETFEATURES, &features);
	err = errno;
	snprintf(values, sizeof(values), "cmd=0x%08lx features=0x%04x",
		 (unsigned long)TUNGETFEATURES, features);
	report("TUNGETFEATURES", ret, err, values);

	memset(&g.ifr, 0, sizeof(g.ifr));
	strcpy(g.ifr.ifr_name, argv[2]);
	g.ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	step_ifreq("TUNSETIFF", TUNSETIFF, &g, 1);

	memset(&g.ifr, 0, sizeof(g.ifr));
	step_ifreq("TUNGETIFF", TUNGETIFF, &g, 1);

	step_value("TUNSETPERSIST=1", TUNSETPERSIST, 1);
	step_value("TUNSETPERSIST=0", TUNSETPERSIST, 0);
	step_value("TUNSETOWNER=1000", TUNSETOWNER, 1000);
	step_value("TUNSETGROUP=1000", TUNSETGROUP, 1000);

	step_int("TUNGETSNDBUF", TUNGETSNDBUF, 0, 1);
	step_int("TUNSETSNDBUF=65536", TUNSETSNDBUF, 65536, 0);
	step_int("TUNGETSNDBUF", TUNGETSNDBUF, 0, 1);
	step_int("TUNSETSNDBUF=0", TUNSETSNDBUF, 0, 0);

	memset(&txf, 0, sizeof(txf));
	txf.f.count = 1;
	memcpy(txf.f.addr[0], filter_mac, ETH_ALEN);
	ret = ioctl(fd, TUNSETTXFILTER, &txf);
	err = errno;
	snprintf(values, sizeof(values), "cmd=0x%08lx count=1",
		 (unsigned long)TUNSETTXFILTER);
	report("TUNSETTXFILTER", ret, err, values);

	step_value("TUNSETOFFLOAD=0", TUNSETOFFLOAD, 0);
	step_int("TUNSETVNETHDRSZ=12", TUNSETVNETHDRSZ, 12, 0);
	step_int("TUNGETVNETHDRSZ", TUNGETVNETHDRSZ, 0, 1);
	step_int("TUNSETCARRIER=0", TUNSETCARRIER, 0, 0);
	step_int("TUNSETCARRIER=1", TUNSETCARRIER, 1, 0);

	memset(&g.ifr, 0, sizeof(g.ifr));
	memset(g.canary, CANARY, sizeof(g.canary));
	ret = ioctl(fd, SIOCGIFHWADDR, &g.ifr);
	err = errno;
	snprintf(values, sizeof(values), "cmd=0x%08lx ok=%d sa_family=%u overrun=%d",
		 (unsigned long)SIOCGIFHWADDR, ret == 0,
		 ret == 0 ? g.ifr.ifr_hwaddr.sa_family : 0,
		 overrun(g.canary, sizeof(g.canary)));
	report("SIOCGIFHWADDR", ret, err, values);

	/* The device was never brought up: the link type may change. */
	step_value("TUNSETLINK=ARPHRD_ETHER", TUNSETLINK, ARPHRD_ETHER);

	/* The 32-bit struct sock_fprog: { u16 len; u32 filter pointer }. */
	memset(&fg, CANARY, sizeof(fg));
	fg.prog.len = 1;
	fg.prog.filter = &accept_all;
	ret = ioctl(fd, TUNATTACHFILTER, &fg.prog);
	err = errno;
	snprintf(values, sizeof(values), "cmd=0x%08lx", (unsigned long)TUNATTACHFILTER);
	report("TUNATTACHFILTER", ret, err, values);

	memset(&fg, CANARY, sizeof(fg));
	fg.prog.len = 0;
	ret = ioctl(fd, TUNGETFILTER, &fg.prog);
	err = errno;
	snprintf(values, sizeof(values), "cmd=0x%08lx len=%u overrun=%d",
		 (unsigned long)TUNGETFILTER, ret == 0 ? fg.prog.len : 0,
		 overrun(fg.canary, sizeof(fg.canary)));
	report("TUNGETFILTER", ret, err, values);

	memset(&fg, 0, sizeof(fg));
	ret = ioctl(fd, TUNDETACHFILTER, &fg.prog);
	err = errno;
	snprintf(values, sizeof(values), "cmd=0x%08lx", (unsigned long)TUNDETACHFILTER);
	report("TUNDETACHFILTER", ret, err, values);

	step_value("TUNSETNOCSUM=1", TUNSETNOCSUM, 1);
	step_value("TUNSETDEBUG=0", TUNSETDEBUG, 0);

	/* A pointer into the unmapped first page must fault, not crash. */
	ret = ioctl(fd, TUNGETIFF, (void *)1);
	err = errno;
	snprintf(values, sizeof(values), "cmd=0x%08lx", (unsigned long)TUNGETIFF);
	report("TUNGETIFF(badptr)", ret, err, values);

	/* A minimal Ethernet frame: broadcast, local source, IEEE 802
	 * "local experimental" ethertype 0x88b5, zero payload.
	 */
	memset(frame, 0, sizeof(frame));
	memset(frame, 0xff, ETH_ALEN);
	memcpy(frame + ETH_ALEN, filter_mac, ETH_ALEN);
	frame[12] = 0x88;
	frame[13] = 0xb5;
	ret = write(fd, frame, sizeof(frame));
	err = errno;
	report("write60(down)", ret, err, "");

	/* Up (through a socket: the net core's own compat path), then the same
	 * frame again: it now reaches the stack, which drops it (no handler
	 * for the ethertype), and nothing comes back to read.
	 */
	sock = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&g.ifr, 0, sizeof(g.ifr));
	strcpy(g.ifr.ifr_name, argv[2]);
	ret = ioctl(sock, SIOCGIFFLAGS, &g.ifr);
	if (ret == 0) {
		g.ifr.ifr_flags |= IFF_UP;
		ret = ioctl(sock, SIOCSIFFLAGS, &g.ifr);
	}
	err = errno;
	close(sock);
	report("SIOCSIFFLAGS(up)", ret, err, "");
	ret = write(fd, frame, sizeof(frame));
	err = errno;
	report("write60(up)", ret, err, "");

	ret = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	err = errno;
	report("O_NONBLOCK", ret, err, "");
	ret = read(fd, buf, sizeof(buf));
	err = errno;
	report("read", ret, err, "");

	ret = close(fd);
	err = errno;
	report("close", ret, err, "");
	return 0;
}
