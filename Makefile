# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of rust_tun.ko.
#   make KDIR=<kernel tree>           build rust_tun.ko
#   make KDIR=<kernel tree> CLIPPY=1  build with clippy lints
#   make KDIR=<kernel tree> rustfmtcheck
#   make KDIR=<kernel tree> bench     build bench/rtun_cbench.ko (C side of the micro-benchmark)
#   make KDIR=<kernel tree> testmod   build testmod/rtun_veto.ko (a notifier the guest tests load)
#   make clean
# The kernel tree comes from scripts/build-kernel.sh, which also prints it.

KDIR ?= $(shell bash $(CURDIR)/scripts/build-kernel.sh --print-kdir)
TOOLS ?= /opt/rust-tun
LLVM ?= -19
export LIBCLANG_PATH ?= /usr/lib/llvm-19/lib

# asm goto (the jump-label sites in rps.rs) is unstable on rustc 1.85: on
# 6.12 add it to the kernel's list of allowed features rather than to the
# crate; 7.3's scripts/Makefile.build allows it itself (and more:
# generic_arg_infer), so its list is left alone there.
KERNEL_RELEASE := $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)
ifneq ($(filter 6.12.%,$(KERNEL_RELEASE)),)
RUST_ALLOWED := rust_allowed_features=arbitrary_self_types,lint_reasons,used_with_arg,asm_goto
endif

# A kernel built with GCC (Debian's: scripts/debian/rust-tun-dkms.sh) is
# built against with `LLVM= CC=<its compiler> TOOLS=/usr` (that system's
# bindgen); command-line variables reach the kernel's make as they are.
KMAKE = $(MAKE) -C $(KDIR) M=$(CURDIR) LLVM=$(LLVM) ARCH=x86_64 \
	RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc \
	BINDGEN=$(TOOLS)/bin/bindgen CLIPPY_DRIVER=/usr/bin/clippy-driver \
	$(RUST_ALLOWED)

RUSTFMT ?= /usr/bin/rustfmt
RS_SRCS := $(filter-out %/bindings_generated.rs %helpers_generated.rs,$(wildcard $(CURDIR)/*.rs $(CURDIR)/chr/*.rs $(CURDIR)/sys/*.rs $(CURDIR)/sys/*/*.rs $(CURDIR)/sys/*/*/*.rs))

all: modules

# Objects and generated bindings depend on the tree's configuration, but
# Kbuild's command lines name the tree only relatively: rebuild from clean
# whenever KDIR changes.
define kdir_stamp
	@if [ "$$(cat $(1)/.kdir-stamp 2>/dev/null)" != "$(KDIR)" ]; then \
		$(KMAKE) M=$(1) clean >/dev/null; \
		rm -f $(1)/bindings_generated.rs $(1)/.bindings_generated.rs.cmd \
			$(1)/*helpers_generated.rs $(1)/.*helpers_generated.rs.cmd; \
		echo "$(KDIR)" >$(1)/.kdir-stamp; \
	fi
endef

modules:
	@test -n "$(KDIR)" || { echo "KDIR is not set and no cached kernel was found" >&2; exit 1; }
	$(call kdir_stamp,$(CURDIR))
	$(KMAKE) modules

# The C comparison module of the micro-benchmark (bench/rtun_cbench.ko).
bench:
	@test -n "$(KDIR)" || { echo "KDIR is not set and no cached kernel was found" >&2; exit 1; }
	$(call kdir_stamp,$(CURDIR)/bench)
	$(KMAKE) M=$(CURDIR)/bench modules

# The test modules the guest suites load (testmod/rtun_veto.ko).
testmod:
	@test -n "$(KDIR)" || { echo "KDIR is not set and no cached kernel was found" >&2; exit 1; }
	$(call kdir_stamp,$(CURDIR)/testmod)
	$(KMAKE) M=$(CURDIR)/testmod modules

clean:
	@if [ -n "$(KDIR)" ] && [ -d "$(KDIR)" ]; then $(KMAKE) clean; $(KMAKE) M=$(CURDIR)/bench clean; \
		$(KMAKE) M=$(CURDIR)/testmod clean; fi
	rm -f bindings_generated.rs .bindings_generated.rs.cmd *helpers_generated.rs .*helpers_generated.rs.cmd \
		*.bc helpers/*.bc helpers/.*.cmd .kdir-stamp bench/.kdir-stamp testmod/.kdir-stamp

rustfmt:
	$(RUSTFMT) --config-path $(KDIR)/.rustfmt.toml $(RS_SRCS)

rustfmtcheck:
	$(RUSTFMT) --check --config-path $(KDIR)/.rustfmt.toml $(RS_SRCS)

.PHONY: all modules bench testmod clean rustfmt rustfmtcheck
