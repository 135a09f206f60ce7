// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin for scripts/profile.sh: counts how often each guest
 * kernel instruction runs. Every time the guest executes the instruction at
 * `trigger=ADDR` (a kernel function's entry, e.g. ksys_sync's: the guest
 * runs `sync`), the counts since the previous trigger are written to
 * `out=PREFIX`.N (lines "address count") and reset.
 * Under -icount guest time is instructions, so these are exact per
 * instruction and repeat run to run.
 *
 * QEMU's plugin API (include/qemu/qemu-plugin.h, version 1 in QEMU 7.2) is
 * declared here, the few calls this uses, so nothing but a C compiler is
 * needed to build it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn, enum qemu_plugin_op op,
						void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define SLOTS (1u << 22)
struct slot { uint64_t vaddr, count; };
static struct slot *table;
static uint64_t trigger;
static const char *out = "insn-count";
static int dumps;

static struct slot *lookup(uint64_t vaddr)
{
	uint64_t h = (vaddr * 0x9e3779b97f4a7c15ull) >> 42;

	for (;; h = (h + 1) & (SLOTS - 1)) {
		struct slot *s = &table[h & (SLOTS - 1)];
		if (s->vaddr == vaddr)
			return s;
		if (!s->vaddr) {
			s->vaddr = vaddr;
			return s;
		}
	}
}

static void dump(unsigned int vcpu, void *udata)
{
	char name[4096];
	FILE *f;

	snprintf(name, sizeof(name), "%s.%d", out, dumps++);
	f = fopen(name, "w");
	for (uint32_t i = 0; i < SLOTS; i++) {
		if (table[i].count) {
			if (f)
				fprintf(f, "%llx %llu\n", (unsigned long long)table[i].vaddr,
					(unsigned long long)table[i].count);
			table[i].count = 0;
		}
	}
	if (f)
		fclose(f);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);

		if (va == trigger)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, dump, QEMU_PLUGIN_CB_NO_REGS, NULL);
		qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
							   &lookup(va)->count, 1);
	}
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "trigger=", 8))
			trigger = strtoull(argv[i] + 8, NULL, 16);
		else if (!strncmp(argv[i], "out=", 4))
			out = argv[i] + 4;
	}
	table = calloc(SLOTS, sizeof(*table));
	if (!table || !trigger)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
