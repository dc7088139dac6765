# SPDX-License-Identifier: GPL-2.0
#
# vmak: kernel module (vmak.ko), library (libvmak), tools and tests.
# `make help` lists the targets.

KERNELRELEASE ?= $(shell uname -r)
# The running kernel's build tree, else the newest installed Debian headers,
# else the newest kernel fetched for the VM tests.
VMAK_CACHE ?= /var/cache/vmak
KERNELDIR ?= $(firstword $(wildcard /lib/modules/$(KERNELRELEASE)/build) \
	$(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -1) \
	$(shell ls -d $(VMAK_CACHE)/kernels/*/usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -1))

VERSION := $(shell cat VERSION)
GITVER := $(shell git describe --dirty --always 2>/dev/null)
VMAK_VERSION := $(VERSION)$(if $(GITVER),+g$(GITVER))
SOVERSION := 0

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man

CC ?= gcc
CFLAGS ?= -O2 -g
WFLAGS := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CPPFLAGS += -D_GNU_SOURCE -Iuapi -Ilib/include -Ilib -DVMAK_VERSION='"$(VMAK_VERSION)"'
MNL_CFLAGS := $(shell pkg-config --cflags libmnl 2>/dev/null)
MNL_LIBS := $(shell pkg-config --libs libmnl 2>/dev/null || echo -lmnl)

B := build
LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/%.o)
LIB_SO := $(B)/libvmak.so.$(VERSION)
LIB_A := $(B)/libvmak.a
VMAKCTL := $(B)/vmakctl
ST_SRCS := $(wildcard selftests/*.c)
ST_BINS := $(ST_SRCS:selftests/%.c=$(B)/selftests/%)
HELPER_SRCS := $(wildcard selftests/helpers/*.c)
HELPER_BINS := $(HELPER_SRCS:selftests/helpers/%.c=$(B)/%)
UNIT_SRCS := $(wildcard selftests/unit/*.c)
UNIT_BINS := $(UNIT_SRCS:selftests/unit/%.c=$(B)/unit/%)

.PHONY: all module lib tools selftests examples check unit vmcheck demo bench bench-bins install ynl-gen debug-kernel check-debug \
	dkms-install clean help style sparse

all: module lib tools selftests examples

help:
	@echo 'vmak targets:'
	@echo '  all          vmak.ko, libvmak.so/.a, vmakctl, selftests (default)'
	@echo '  module       vmak.ko against KERNELDIR (now: $(or $(KERNELDIR),none found))'
	@echo '  lib tools    libvmak and vmakctl only'
	@echo '  check        install deps, unit tests, VM selftests on KERNELS=$(KERNELS)'
	@echo '  unit         host unit tests only'
	@echo '  vmcheck      VM selftests only (KERNEL=6.1|6.12|6.12-rt)'
	@echo '  demo         boot a VM, load vmak, show it working'
	@echo '  install      module (modules_install + depmod), library, headers, vmakctl'
	@echo '  dkms-install register the source tree with DKMS and build it'
	@echo '  style sparse checkpatch and sparse (C=2) over the module'
	@echo '  debug-kernel build the KASAN/lockdep/kmemleak kernel once (cached)'
	@echo '  check-debug  the whole suite on the debug kernel (panic_on_warn, kmemleak scan)'
	@echo '  ynl-gen      regenerate uapi/linux/vmak_genl.h from Documentation/netlink/vmak.yaml'
	@echo '  clean        remove build products'

# ---- kernel module -------------------------------------------------------
module:
	@test -n "$(KERNELDIR)" || { echo 'no kernel headers: apt-get install linux-headers-amd64, or set KERNELDIR'; exit 1; }
	$(MAKE) -C $(KERNELDIR) M=$(CURDIR) VMAK_VERSION=$(VMAK_VERSION) W=1 modules

# Build for another kernel without disturbing the tree: KDIR=... KOUT=dir
module-for:
	@mkdir -p $(KOUT)
	@cp -r Kbuild VERSION kmod uapi $(KOUT)/
	$(MAKE) -C $(KDIR) M=$(abspath $(KOUT)) VMAK_VERSION=$(VMAK_VERSION) W=1 modules

# Regenerate the netlink uapi header from its spec (kernel's ynl-gen-c.py).
ynl-gen:
	scripts/ynl-gen.sh uapi/linux/vmak_genl.h

style:
	@test -x $(KERNELDIR)/scripts/checkpatch.pl || { echo 'checkpatch.pl: run from linux-source'; exit 1; }
	$(KERNELDIR)/scripts/checkpatch.pl --no-tree --terse -f kmod/*.c kmod/*.h uapi/linux/*.h

sparse:
	$(MAKE) -C $(KERNELDIR) M=$(CURDIR) VMAK_VERSION=$(VMAK_VERSION) C=2 modules

# ---- library ---------------------------------------------------------------
lib: $(LIB_SO) $(LIB_A)

$(B)/lib/%.o: lib/%.c $(wildcard lib/*.h lib/include/vmak/*.h uapi/linux/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(MNL_CFLAGS) $(CFLAGS) $(WFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(LIB_SO): $(LIB_OBJS) lib/libvmak.map
	$(CC) -shared -Wl,-soname,libvmak.so.$(SOVERSION) -Wl,--version-script=lib/libvmak.map \
		-Wl,--no-undefined -o $@ $(LIB_OBJS) $(MNL_LIBS)
	ln -sf $(@F) $(B)/libvmak.so.$(SOVERSION)
	ln -sf libvmak.so.$(SOVERSION) $(B)/libvmak.so

$(LIB_A): $(LIB_OBJS)
	$(AR) rcs $@ $^

$(B)/libvmak.pc: lib/libvmak.pc.in VERSION
	sed -e 's|@PREFIX@|$(PREFIX)|;s|@LIBDIR@|$(LIBDIR)|;s|@INCLUDEDIR@|$(INCLUDEDIR)|;s|@VERSION@|$(VERSION)|' $< > $@

# ---- tools -------------------------------------------------------------------
tools: $(VMAKCTL)

$(VMAKCTL): tools/vmakctl.c $(LIB_A) $(wildcard lib/include/vmak/*.h uapi/linux/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(MNL_CFLAGS) $(CFLAGS) $(WFLAGS) -o $@ $< $(LIB_A) $(MNL_LIBS)

# ---- examples ---------------------------------------------------------------
examples: $(B)/ringrx

$(B)/ringrx: examples/ringrx.c $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WFLAGS) -o $@ $< $(LIB_A) $(MNL_LIBS)

# ---- tests ---------------------------------------------------------------------
selftests: $(ST_BINS) $(HELPER_BINS)

$(B)/%: selftests/helpers/%.c $(LIB_A)
	$(CC) $(CPPFLAGS) $(MNL_CFLAGS) $(CFLAGS) $(WFLAGS) -pthread -o $@ $< $(LIB_A) $(MNL_LIBS)

$(B)/selftests/%: selftests/%.c selftests/harness.h selftests/common.h selftests/fuzz.h $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iselftests $(MNL_CFLAGS) $(CFLAGS) $(WFLAGS) -pthread -o $@ $< $(LIB_A) $(MNL_LIBS)

$(B)/unit/%: selftests/unit/%.c selftests/harness.h $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iselftests $(MNL_CFLAGS) $(CFLAGS) $(WFLAGS) -pthread -o $@ $< $(LIB_A) $(MNL_LIBS)

KERNELS ?= 6.1 6.12 6.12-rt
KERNEL ?= 6.1

check:
	scripts/check.sh $(KERNELS)

unit: $(UNIT_BINS)
	selftests/run-unit $(UNIT_BINS)

# The KASAN/lockdep/kmemleak kernel: built once (about 20 minutes on 2
# cores) into $(VMAK_CACHE)/kernels, then the whole suite runs on it.
debug-kernel:
	scripts/deps.sh --debug
	scripts/debug-kernel.sh

check-debug: debug-kernel
	scripts/check.sh debug

vmcheck: lib tools selftests
	selftests/vm/run --kernel $(KERNEL)

demo: lib tools selftests examples bench-bins
	selftests/vm/run --kernel $(KERNEL) --demo

# ---- benchmarks (reports, not tests) ---------------------------------------
XDP_LIBS := $(shell pkg-config --libs libxdp libbpf 2>/dev/null)
BENCH_XDP := $(if $(XDP_LIBS),-DHAVE_LIBXDP)
BENCH_BINS := $(B)/bench/udpgen $(B)/bench/rxbench $(B)/bench/txbench \
	      $(B)/bench/pingpong $(B)/bench/ringmem

bench-bins: $(BENCH_BINS)

$(B)/bench/udpgen: bench/udpgen.c bench/frame.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WFLAGS) -o $@ $<

$(B)/bench/rxbench: bench/rxbench.c $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(BENCH_XDP) $(CFLAGS) $(WFLAGS) -o $@ $< $(LIB_A) $(MNL_LIBS) $(XDP_LIBS)

$(B)/bench/txbench: bench/txbench.c bench/frame.h $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(BENCH_XDP) $(CFLAGS) $(WFLAGS) -o $@ $< $(LIB_A) $(MNL_LIBS) $(XDP_LIBS)

$(B)/bench/pingpong: bench/pingpong.c bench/frame.h $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(BENCH_XDP) $(CFLAGS) $(WFLAGS) -o $@ $< $(LIB_A) $(MNL_LIBS) $(XDP_LIBS)

$(B)/bench/ringmem: bench/ringmem.c $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WFLAGS) -o $@ $< $(LIB_A) $(MNL_LIBS)

bench: lib tools selftests
	scripts/deps.sh --bench
	$(MAKE) bench-bins
	selftests/vm/run --kernel $(KERNEL) --bench --timeout 7200 -- $(BENCH_ARGS)
	r=$$(ls -td build/vm/*/results | head -1); \
	if [ -s $$r/bench.csv ] && [ $$(wc -l < $$r/bench.csv) -gt 1 ]; then bench/report $$r/bench.csv bench/results rx; fi; \
	if [ -s $$r/bench-tx.csv ] && [ $$(wc -l < $$r/bench-tx.csv) -gt 1 ]; then bench/report $$r/bench-tx.csv bench/results tx; fi; \
	if [ -s $$r/bench-lat.csv ] && [ $$(wc -l < $$r/bench-lat.csv) -gt 1 ]; then bench/report $$r/bench-lat.csv bench/results lat; fi; \
	if [ -s $$r/bench-mem.txt ]; then cp $$r/bench-mem.txt bench/results/mem.txt; fi; \
	bench/plot bench/results

# ---- install -------------------------------------------------------------------
install: module lib tools $(B)/libvmak.pc
	$(MAKE) -C $(KERNELDIR) M=$(CURDIR) VMAK_VERSION=$(VMAK_VERSION) modules_install
	depmod -a $(KERNELRELEASE) || true
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/vmak $(DESTDIR)$(INCLUDEDIR)/linux $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(LIB_SO)) $(DESTDIR)$(LIBDIR)/libvmak.so.$(SOVERSION)
	ln -sf libvmak.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libvmak.so
	install -m 0644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 0644 $(B)/libvmak.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 0644 lib/include/vmak/*.h $(DESTDIR)$(INCLUDEDIR)/vmak/
	install -m 0644 uapi/linux/vmak*.h $(DESTDIR)$(INCLUDEDIR)/linux/
	install -m 0755 $(VMAKCTL) $(DESTDIR)$(BINDIR)/
	install -m 0644 Documentation/vmakctl.8 $(DESTDIR)$(MANDIR)/man8/

dkms-install:
	rm -rf /usr/src/vmak-$(VERSION)
	mkdir -p /usr/src/vmak-$(VERSION)
	cp -r Kbuild Makefile VERSION dkms.conf kmod uapi /usr/src/vmak-$(VERSION)/
	dkms add vmak/$(VERSION) && dkms build vmak/$(VERSION) && dkms install vmak/$(VERSION)

clean:
	rm -rf $(B)
	-test -z "$(KERNELDIR)" || $(MAKE) -C $(KERNELDIR) M=$(CURDIR) clean
