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
# Programs (tools, tests, benchmarks, examples) see the uapi and the
# library's public headers only; each library layer adds its own folder
# (see "library" below), so an include against the layering fails to build.
CPPFLAGS += -D_GNU_SOURCE -Iuapi -Ilib/include -DVMAK_VERSION='"$(VMAK_VERSION)"'
MNL_CFLAGS := $(shell pkg-config --cflags libmnl 2>/dev/null)
MNL_LIBS := $(shell pkg-config --libs libmnl 2>/dev/null || echo -lmnl)

B := build
# The library in three layers, dependencies one way only (Documentation/
# library.rst): preload/ (libc interposition) -> vma/ (libvma-compatible)
# -> native/ (ring sets, control plane) -> uapi/.
NATIVE_SRCS := $(wildcard lib/native/*.c)
VMA_SRCS := $(wildcard lib/vma/*.c)
PRELOAD_SRCS := $(wildcard lib/preload/*.c)
NATIVE_OBJS := $(NATIVE_SRCS:%.c=$(B)/%.o)
LIB_OBJS := $(NATIVE_OBJS) $(VMA_SRCS:%.c=$(B)/%.o) $(PRELOAD_SRCS:%.c=$(B)/%.o)
LIB_SO := $(B)/libvmak.so.$(VERSION)
LIB_A := $(B)/libvmak.a
# What tools, tests, benchmarks and examples link: the native layer alone,
# so no interposer ever runs inside them.
NATIVE_A := $(B)/libvmak-native.a
LIB_CFLAGS := $(CFLAGS) $(WFLAGS) -Werror=implicit-function-declaration \
	-fPIC -fvisibility=hidden
LIB_HDRS := $(wildcard uapi/linux/*.h lib/include/vmak/*.h)
VMAKCTL := $(B)/vmakctl
ST_SRCS := $(wildcard selftests/*.c)
ST_BINS := $(ST_SRCS:selftests/%.c=$(B)/selftests/%)
HELPER_SRCS := $(wildcard selftests/helpers/*.c)
HELPER_BINS := $(HELPER_SRCS:selftests/helpers/%.c=$(B)/%)
UNIT_SRCS := $(wildcard selftests/unit/*.c)
UNIT_BINS := $(UNIT_SRCS:selftests/unit/%.c=$(B)/unit/%)
ST_HDRS := $(wildcard selftests/*.h)
# The kernel's kselftest harness, from Debian's linux-source-6.1 tarball
# (scripts/deps.sh installs it), unpacked once into the build tree.
KSRC_TAR ?= $(lastword $(sort $(wildcard /usr/src/linux-source-6.1.tar.xz)))
KSFT_DIR := $(B)/ksft
KSFT_HDRS := $(KSFT_DIR)/kselftest_harness.h $(KSFT_DIR)/kselftest.h
ST_CPPFLAGS := -Iselftests -I$(KSFT_DIR)
# The kernel's harness compares with C's own conversions (EXPECT_EQ(-1, n)
# on a size_t) and declares its fixture functions without prototypes or
# unused parameters, as the kernel builds its selftests.
ST_WFLAGS := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wno-sign-compare -Wno-unused-parameter

.PHONY: all module lib tools selftests examples check unit vmcheck demo bench bench-bins install ynl-gen debug-kernel check-debug \
	dkms-install clean help style sparse check-abi check-layers htmldocs

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
	@echo '  style sparse checkpatch --strict (new findings fail) and sparse (C=2) over the module'
	@echo '  check-abi    libvmak.so exports exactly lib/libvmak.map, and the map what VMAK_API marks'
	@echo '  check-layers no library object below lib/preload/ calls a libc name libvmak interposes'
	@echo '  htmldocs     Documentation/ as HTML with Sphinx (warnings are errors)'
	@echo '  debug-kernel build the KASAN/lockdep/kmemleak kernel once (cached)'
	@echo '  check-debug  the whole suite on the debug kernel (panic_on_warn, kmemleak scan)'
	@echo '  ynl-gen      regenerate uapi/linux/vmak_genl.h from Documentation/netlink/specs/vmak.yaml'
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

# checkpatch.pl from the same linux-source-6.1 tarball as the kselftest
# harness; findings beyond scripts/checkpatch.expected fail.
CHECKPATCH := $(B)/kscripts/scripts/checkpatch.pl
$(CHECKPATCH):
	@test -f "$(KSRC_TAR)" || { echo 'checkpatch: apt-get install linux-source-6.1 (scripts/deps.sh)'; exit 1; }
	@mkdir -p $(B)/kscripts
	tar -xJf $(KSRC_TAR) -C $(B)/kscripts --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
	touch $@

style: $(CHECKPATCH)
	scripts/style.sh $(CHECKPATCH)

sparse:
	$(MAKE) -C $(KERNELDIR) M=$(CURDIR) VMAK_VERSION=$(VMAK_VERSION) C=2 modules

# ---- library ---------------------------------------------------------------
lib: $(LIB_SO) $(LIB_A) $(NATIVE_A)

$(B)/lib/native/%.o: lib/native/%.c $(wildcard lib/native/*.h) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ilib/native $(MNL_CFLAGS) $(LIB_CFLAGS) -c -o $@ $<

$(B)/lib/vma/%.o: lib/vma/%.c $(wildcard lib/vma/*.h lib/native/*.h) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ilib/native -Ilib/vma -Ilib/include/mellanox $(LIB_CFLAGS) -c -o $@ $<

$(B)/lib/preload/%.o: lib/preload/%.c $(wildcard lib/vma/*.h lib/native/*.h) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ilib/native -Ilib/vma $(LIB_CFLAGS) -c -o $@ $<

$(LIB_SO): $(LIB_OBJS) lib/libvmak.map
	$(CC) -shared -Wl,-soname,libvmak.so.$(SOVERSION) -Wl,--version-script=lib/libvmak.map \
		-Wl,--no-undefined -o $@ $(LIB_OBJS) $(MNL_LIBS)
	ln -sf $(@F) $(B)/libvmak.so.$(SOVERSION)
	ln -sf libvmak.so.$(SOVERSION) $(B)/libvmak.so

$(LIB_A): $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(NATIVE_A): $(NATIVE_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

check-abi: $(LIB_SO)
	scripts/check-abi.sh $(LIB_SO) lib/libvmak.map lib

check-layers: $(LIB_OBJS)
	scripts/check-layers.sh lib/native/sys.h "$(filter $(B)/lib/preload/%,$(LIB_OBJS))" \
		$(filter-out $(B)/lib/preload/%,$(LIB_OBJS))

$(B)/libvmak.pc: lib/libvmak.pc.in VERSION
	sed -e 's|@PREFIX@|$(PREFIX)|;s|@LIBDIR@|$(LIBDIR)|;s|@INCLUDEDIR@|$(INCLUDEDIR)|;s|@VERSION@|$(VERSION)|' $< > $@

# ---- tools -------------------------------------------------------------------
tools: $(VMAKCTL)

$(VMAKCTL): tools/vmakctl.c $(NATIVE_A) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(MNL_CFLAGS) $(CFLAGS) $(WFLAGS) -o $@ $< $(NATIVE_A) $(MNL_LIBS)

# ---- examples ---------------------------------------------------------------
examples: $(B)/ringrx

$(B)/ringrx: examples/ringrx.c $(NATIVE_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WFLAGS) -o $@ $< $(NATIVE_A) $(MNL_LIBS)

# ---- tests ---------------------------------------------------------------------
selftests: $(ST_BINS) $(HELPER_BINS) $(B)/selftests/62-linked-semantics

# The preload semantics again, with the program linked with -lvmak.
$(B)/selftests/62-linked-semantics: selftests/61-preload-semantics.c $(ST_HDRS) $(KSFT_HDRS) $(LIB_SO)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ST_CPPFLAGS) -DVMAK_LINKED $(CFLAGS) $(ST_WFLAGS) -pthread -o $@ $< \
		-L$(B) -lvmak -Wl,-rpath,'$$ORIGIN/..'

$(B)/%: selftests/helpers/%.c $(NATIVE_A)
	$(CC) $(CPPFLAGS) $(MNL_CFLAGS) $(CFLAGS) $(WFLAGS) -pthread -o $@ $< $(NATIVE_A) $(MNL_LIBS)

$(B)/selftests/%: selftests/%.c $(ST_HDRS) $(KSFT_HDRS) $(NATIVE_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ST_CPPFLAGS) $(MNL_CFLAGS) $(CFLAGS) $(ST_WFLAGS) -pthread -o $@ $< $(NATIVE_A) $(MNL_LIBS)

# White-box unit tests of library internals name the folder they test.
$(B)/unit/%: selftests/unit/%.c $(ST_HDRS) $(KSFT_HDRS) $(NATIVE_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ST_CPPFLAGS) -Ilib/native $(MNL_CFLAGS) $(CFLAGS) $(ST_WFLAGS) -pthread -o $@ $< $(NATIVE_A) $(MNL_LIBS)

# ... and those of lib/vma/ link its objects (none of them interposes).
VMA_OBJS := $(VMA_SRCS:%.c=$(B)/%.o)
$(B)/unit/vma-%: selftests/unit/vma-%.c $(ST_HDRS) $(KSFT_HDRS) $(VMA_OBJS) $(NATIVE_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ST_CPPFLAGS) -Ilib/native -Ilib/vma $(MNL_CFLAGS) $(CFLAGS) $(ST_WFLAGS) -pthread -o $@ $< $(VMA_OBJS) $(NATIVE_A) $(MNL_LIBS)

$(KSFT_HDRS) &:
	@test -f "$(KSRC_TAR)" || { echo 'kselftest harness: apt-get install linux-source-6.1 (scripts/deps.sh)'; exit 1; }
	@mkdir -p $(KSFT_DIR)
	tar -xJf $(KSRC_TAR) -C $(KSFT_DIR) --strip-components=4 \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h
	touch $(KSFT_HDRS)

KERNELS ?= 6.1 6.12 6.12-rt
KERNEL ?= 6.1

check:
	scripts/check.sh $(KERNELS)

unit: $(UNIT_BINS) $(LIB_SO)
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
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WFLAGS) -o $@ $< -lm

$(B)/bench/rxbench: bench/rxbench.c $(NATIVE_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(BENCH_XDP) $(CFLAGS) $(WFLAGS) -o $@ $< $(NATIVE_A) $(MNL_LIBS) $(XDP_LIBS)

$(B)/bench/txbench: bench/txbench.c bench/frame.h $(NATIVE_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(BENCH_XDP) $(CFLAGS) $(WFLAGS) -o $@ $< $(NATIVE_A) $(MNL_LIBS) $(XDP_LIBS)

$(B)/bench/pingpong: bench/pingpong.c bench/frame.h $(NATIVE_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(BENCH_XDP) $(CFLAGS) $(WFLAGS) -o $@ $< $(NATIVE_A) $(MNL_LIBS) $(XDP_LIBS)

$(B)/bench/ringmem: bench/ringmem.c $(NATIVE_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WFLAGS) -o $@ $< $(NATIVE_A) $(MNL_LIBS)

bench: lib tools selftests
	scripts/deps.sh --bench
	$(MAKE) bench-bins
	selftests/vm/run --kernel $(KERNEL) --bench --timeout 7200 -- $(BENCH_ARGS)
	r=$$(ls -td build/vm/*/results | head -1); \
	if [ -s $$r/bench.csv ] && [ $$(wc -l < $$r/bench.csv) -gt 1 ]; then bench/report $$r/bench.csv bench/results rx; fi; \
	if [ -s $$r/bench-tx.csv ] && [ $$(wc -l < $$r/bench-tx.csv) -gt 1 ]; then bench/report $$r/bench-tx.csv bench/results tx; fi; \
	if [ -s $$r/bench-lat.csv ] && [ $$(wc -l < $$r/bench-lat.csv) -gt 1 ]; then bench/report $$r/bench-lat.csv bench/results lat; fi; \
	if [ -s $$r/bench-preload.csv ] && [ $$(wc -l < $$r/bench-preload.csv) -gt 1 ]; then bench/report $$r/bench-preload.csv bench/results preload; fi; \
	if [ -s $$r/bench-cost.csv ] && [ $$(wc -l < $$r/bench-cost.csv) -gt 1 ]; then bench/report $$r/bench-cost.csv bench/results cost; \
	elif [ -s $$r/bench-costlat.csv ] && [ $$(wc -l < $$r/bench-costlat.csv) -gt 1 ]; then bench/report $$r/bench-costlat.csv bench/results ppsetup; fi; \
	for f in $$r/bench-strace-*.txt $$r/bench-syscalls-*.txt $$r/bench-profile-*.txt; do [ ! -s $$f ] || cp $$f bench/results/; done; \
	if [ -s $$r/bench-mem.txt ]; then cp $$r/bench-mem.txt bench/results/mem.txt; fi; \
	bench/plot bench/results

# ---- documentation ------------------------------------------------------------
htmldocs:
	sphinx-build -W --keep-going -q -b html Documentation $(B)/htmldocs

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
	cp -r Kbuild Makefile VERSION kmod uapi /usr/src/vmak-$(VERSION)/
	sed 's/^PACKAGE_VERSION=.*/PACKAGE_VERSION="$(VERSION)"/' dkms.conf > /usr/src/vmak-$(VERSION)/dkms.conf
	dkms add vmak/$(VERSION) && dkms build vmak/$(VERSION) && dkms install vmak/$(VERSION)

clean:
	rm -rf $(B)
	-test -z "$(KERNELDIR)" || $(MAKE) -C $(KERNELDIR) M=$(CURDIR) clean
