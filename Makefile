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
# everything the library is made of (the sanitizer builds depend on it)
LIB_SRCS_ALL := $(NATIVE_SRCS) $(VMA_SRCS) $(PRELOAD_SRCS) $(wildcard lib/*/*.h) lib/libvmak.map
LIB_SO := $(B)/libvmak.so.$(VERSION)
LIB_A := $(B)/libvmak.a
# What tools, tests, benchmarks and examples link: the native layer alone,
# so no interposer ever runs inside them. It is installed too, as
# libvmak-native.so: a program that drives rings itself gets no
# interposition (libvmak.so means "offload my sockets").
NATIVE_A := $(B)/libvmak-native.a
NATIVE_SO := $(B)/libvmak-native.so.$(VERSION)
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

.PHONY: all module lib tools selftests examples check probe-check unit preload-host asan tsan preload-bins stress-long vmcheck demo bench bench-bins install ynl-gen debug-kernel check-debug \
	dkms-install clean help style sparse check-abi check-layers htmldocs man-check

all: module lib tools selftests examples

help:
	@echo 'vmak targets:'
	@echo '  all          vmak.ko, libvmak.so/.a, vmakctl, selftests (default)'
	@echo '  module       vmak.ko against KERNELDIR (now: $(or $(KERNELDIR),none found))'
	@echo '  lib tools    libvmak and vmakctl only'
	@echo '  check        install deps, unit tests, probe check, VM selftests on KERNELS=$(KERNELS)'
	@echo '  probe-check  build vmak.ko for each of KERNELS, check the compat probes against their table'
	@echo '  unit         host unit tests only'
	@echo '  preload-host host preload probes: each program plain and with libvmak.so preloaded'
	@echo '  asan tsan    the threaded preload probes on a libvmak built with ASan+UBSan / TSan'
	@echo '  vmcheck      VM selftests only (KERNEL=6.1|6.12|6.12-rt|unstable|unstable-rt)'
	@echo '  stress-long  70-extra-stress in the VM with STRESS_OPS=$(STRESS_OPS) operations a test'
	@echo '  demo         boot a VM, load vmak, show it working'
	@echo '  install      module (modules_install + depmod), library, headers, vmakctl, man pages'
	@echo '  dkms-install register the source tree with DKMS and build it'
	@echo '  style sparse checkpatch --strict (new findings fail) and sparse (C=2) over the module'
	@echo '  check-abi    libvmak.so exports exactly lib/libvmak.map, and the map what VMAK_API marks'
	@echo '  check-layers each library object calls only floors below its own in lib/LAYERS, and none'
	@echo '               below lib/preload/ calls a libc name libvmak interposes'
	@echo '  htmldocs     Documentation/ as HTML with Sphinx (warnings are errors)'
	@echo '  man-check    lint the man pages (Documentation/*.[0-9]): any groff warning fails'
	@echo '  debug-kernel build the KASAN/lockdep/kmemleak kernel once (cached)'
	@echo '  check-debug  the whole suite on the debug kernel (panic_on_warn, kmemleak scan)'
	@echo '  ynl-gen      regenerate uapi/linux/vmak_genl.h from Documentation/netlink/specs/vmak.yaml'
	@echo '  clean        remove build products'

# ---- kernel module -------------------------------------------------------
# In the source tree, through selftests/vm/kmake: a kernel fetched for the
# VM tests that the host's compiler cannot build for (unstable's) is built
# in the Debian unstable build root. DKMS's copy has no kmake, and needs
# none: its kernel's compiler is the system's.
KMAKE := $(wildcard selftests/vm/kmake)
module:
	@test -n "$(KERNELDIR)" || { echo 'no kernel headers: apt-get install linux-headers-amd64, or set KERNELDIR'; exit 1; }
	$(if $(KMAKE),+$(KMAKE) $(KERNELDIR) $(CURDIR),$(MAKE) -C $(KERNELDIR) M=$(CURDIR)) \
		VMAK_VERSION=$(VMAK_VERSION) W=1 modules

# Build for another kernel without disturbing the tree: KDIR=... KOUT=dir.
# With the compiler that kernel was built with: the host's, or for a newer
# kernel than Debian 12's gcc can build, a Debian unstable build root's
# (selftests/vm/kmake, selftests/vm/buildroot).
module-for:
	@mkdir -p $(KOUT)
	@cp -r Kbuild VERSION kmod uapi $(KOUT)/
	+selftests/vm/kmake $(KDIR) $(abspath $(KOUT)) VMAK_VERSION=$(VMAK_VERSION) W=1 modules

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
lib: $(LIB_SO) $(LIB_A) $(NATIVE_A) $(NATIVE_SO)

# Header dependencies, as the compiler found them.
DEPFLAGS = -MMD -MP
-include $(wildcard $(B)/lib/*/*.d)

$(B)/lib/native/%.o: lib/native/%.c $(wildcard lib/native/*.h) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ilib/native $(MNL_CFLAGS) $(LIB_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(B)/lib/vma/%.o: lib/vma/%.c $(wildcard lib/vma/*.h lib/native/*.h) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ilib/native -Ilib/vma $(LIB_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(B)/lib/preload/%.o: lib/preload/%.c $(wildcard lib/vma/*.h lib/native/*.h) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ilib/native -Ilib/vma $(LIB_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(LIB_SO): $(LIB_OBJS) lib/libvmak.map
	$(CC) -shared $(LDFLAGS) -Wl,-soname,libvmak.so.$(SOVERSION) -Wl,--version-script=lib/libvmak.map \
		-Wl,--no-undefined -o $@ $(LIB_OBJS) $(MNL_LIBS)
	ln -sf $(@F) $(B)/libvmak.so.$(SOVERSION)
	ln -sf libvmak.so.$(SOVERSION) $(B)/libvmak.so

$(LIB_A): $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(NATIVE_A): $(NATIVE_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(NATIVE_SO): $(NATIVE_OBJS) lib/libvmak.map
	$(CC) -shared -Wl,-soname,libvmak-native.so.$(SOVERSION) -Wl,--version-script=lib/libvmak.map \
		-Wl,--no-undefined -o $@ $(NATIVE_OBJS) $(MNL_LIBS)
	ln -sf $(@F) $(B)/libvmak-native.so.$(SOVERSION)
	ln -sf libvmak-native.so.$(SOVERSION) $(B)/libvmak-native.so

check-abi: $(LIB_SO) $(NATIVE_SO)
	scripts/check-abi.sh $(LIB_SO) lib/libvmak.map lib
	scripts/check-abi.sh --native $(NATIVE_SO) lib/libvmak.map lib

check-layers: $(LIB_OBJS) lib/LAYERS
	scripts/check-layers.sh lib/native/sys.h lib/LAYERS $(LIB_OBJS)

$(B)/%.pc: lib/%.pc.in VERSION
	sed -e 's|@PREFIX@|$(PREFIX)|;s|@LIBDIR@|$(LIBDIR)|;s|@INCLUDEDIR@|$(INCLUDEDIR)|;s|@VERSION@|$(VERSION)|' $< > $@

# ---- tools -------------------------------------------------------------------
tools: $(VMAKCTL)

$(VMAKCTL): tools/vmakctl.c $(NATIVE_A) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(MNL_CFLAGS) $(CFLAGS) $(WFLAGS) -o $@ $< $(NATIVE_A) $(MNL_LIBS)

# ---- examples ---------------------------------------------------------------
examples: $(B)/ringrx $(B)/vma-rx

# Built as a libvma program is: <mellanox/vma_extra.h> and the C library,
# nothing of vmak's linked (it runs with libvmak.so preloaded).
$(B)/vma-rx: examples/vma-rx.c lib/include/mellanox/vma_extra.h
	@mkdir -p $(@D)
	$(CC) -Ilib/include $(CFLAGS) $(WFLAGS) -o $@ $<

# As pkg-config --libs libvmak-native builds it: the native library alone.
$(B)/ringrx: examples/ringrx.c $(NATIVE_SO)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WFLAGS) -o $@ $< -L$(B) -lvmak-native \
		-Wl,-rpath,'$$ORIGIN'

# ---- tests ---------------------------------------------------------------------
selftests: $(ST_BINS) $(HELPER_BINS) $(B)/selftests/62-linked-semantics \
	$(B)/selftests/66-linked-extra-api $(B)/selftests/69-linked-extra-callbacks \
	$(B)/vma-rx preload-bins

# The preload semantics again, with the program linked with -lvmak.
$(B)/selftests/62-linked-semantics: selftests/61-preload-semantics.c $(ST_HDRS) $(KSFT_HDRS) $(LIB_SO)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ST_CPPFLAGS) -DVMAK_LINKED $(CFLAGS) $(ST_WFLAGS) -pthread -o $@ $< \
		-L$(B) -lvmak -Wl,-rpath,'$$ORIGIN/..'

# The extra API again, with the program linked with -lvmak.
$(B)/selftests/66-linked-extra-api: selftests/65-extra-api.c $(ST_HDRS) $(KSFT_HDRS) $(LIB_SO)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ST_CPPFLAGS) -DVMAK_LINKED $(CFLAGS) $(ST_WFLAGS) -pthread -o $@ $< \
		-L$(B) -lvmak -Wl,-rpath,'$$ORIGIN/..'

$(B)/selftests/69-linked-extra-callbacks: selftests/68-extra-callbacks.c $(ST_HDRS) $(KSFT_HDRS) $(LIB_SO)
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

# KERNEL:short runs the short set of VM selftests there (scripts/check.sh).
KERNELS ?= 6.1 unstable 6.12:short 6.12-rt:short
KERNEL ?= 6.1

check:
	scripts/check.sh $(KERNELS)

probe-check:
	selftests/vm/probe-check $(foreach k,$(KERNELS),$(firstword $(subst :, ,$(k))))

unit: $(UNIT_BINS) $(LIB_SO) $(B)/ringrx
	selftests/run-unit $(UNIT_BINS)

# Host preload probes (selftests/preload/): small programs that use only
# the C library, each run plain and with libvmak.so preloaded by
# selftests/preload/run, which builds nothing. Programs named fortified-*
# are built with _FORTIFY_SOURCE and must call the checked forms their
# comment lists after "Calls:".
PROBE_SRCS := $(wildcard selftests/preload/*.c)
PROBE_BINS := $(PROBE_SRCS:selftests/preload/%.c=$(B)/preload/%)
PROBE_HELPERS := $(B)/preload-helpers/socket-plain $(B)/preload-helpers/socket-linked
PROBE_HDRS := selftests/preload/pt.h

$(B)/preload/%: selftests/preload/%.c $(PROBE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WFLAGS) -pthread -o $@ $<

$(B)/preload/fortified-%: selftests/preload/fortified-%.c $(PROBE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -O2 -g -D_FORTIFY_SOURCE=2 $(WFLAGS) -pthread -o $@ $<
	@for f in $$(sed -n 's/^ \* Calls: //p' $<); do \
		nm -D --undefined-only $@ | grep -qw "$$f" || \
		{ echo "$@ does not call $$f"; rm -f $@; exit 1; }; done

# A socket program linked with libvmak.a, and the same without (H6).
$(B)/preload-helpers/socket-plain: selftests/preload/helpers/socket.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WFLAGS) -o $@ $<

$(B)/preload-helpers/socket-linked: selftests/preload/helpers/socket.c $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WFLAGS) -pthread -o $@ $< $(LIB_A) $(MNL_LIBS)

preload-bins: $(PROBE_BINS) $(PROBE_HELPERS)

preload-host: preload-bins $(LIB_SO)
	selftests/preload/run

# The library again with a sanitizer, in $(B)/asan/ and $(B)/tsan/ (a make
# of its own with B, CFLAGS and LDFLAGS set), and the threaded probes on
# it: closing an epoll fd or a socket while another thread waits, fork
# beside a churning thread, cancellation, calls from signal handlers.
# ASan (with UBSan) is preloaded before it into the plain probes.
SAN_PROBES := epoll-close-while-waiting close-sock-while-epoll-waiting \
	close-sock-while-recv cancel-recv-rebind fork-churn:300 signal-sendto \
	signal-close-churn
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer
ASAN_SO := $(B)/asan/libvmak.so.$(VERSION)
# GCC 12's UBSan null checks make -Wformat-truncation see a null
# destination in snprintf(name, len, ...) (lib/vma/config.c): not a bug.
SAN_CFLAGS := -O1 -g -Wno-format-truncation

$(ASAN_SO): $(LIB_SRCS_ALL)
	$(MAKE) -s B=$(B)/asan CFLAGS='$(SAN_CFLAGS) $(ASAN_FLAGS)' LDFLAGS='$(ASAN_FLAGS)' $@

asan: preload-bins $(LIB_SO) $(ASAN_SO)
	selftests/preload/run --asan $(B)/asan/libvmak.so $(SAN_PROBES)

# The extra API's stress (selftests/70-extra-stress.c) runs in the VM on
# the ASan library, preloaded after the runtime named here (as above).
ASAN_RT = $(shell $(CC) -print-file-name=libasan.so)
$(B)/selftests/70-extra-stress: private CPPFLAGS += -DVMAK_ASAN_RT='"$(ASAN_RT)"'
$(B)/selftests/70-extra-stress: | $(ASAN_SO)

# Its long run: STRESS_OPS operations for each of its two tests, on KERNEL;
# the TAP is kept in $(B)/stress-long.tap, and a "not ok" fails the target.
STRESS_OPS ?= 1000000
stress-long: lib tools selftests
	VM_APPEND="$(VM_APPEND) VMAK_STRESS_OPS=$(STRESS_OPS) VMAK_TEST_TIMEOUT=$$(( $(STRESS_OPS) / 100 + 900 ))" \
		selftests/vm/run --kernel $(KERNEL) --timeout $$(( $(STRESS_OPS) / 100 + 1800 )) \
		-- 70-extra-stress > $(B)/stress-long.tap 2>&1; rc=$$?; cat $(B)/stress-long.tap; \
		[ $$rc = 0 ] && ! grep -q '^not ok' $(B)/stress-long.tap

# TSan needs its runtime in the program: the same probes are built with
# -fsanitize=thread into $(B)/tsan/preload/, and the TSan libvmak is
# preloaded into them (not linked: see Documentation/testing.rst).
TSAN_FLAGS := -fsanitize=thread
TSAN_SO := $(B)/tsan/libvmak.so.$(VERSION)
TSAN_BINS := $(foreach p,$(SAN_PROBES),$(B)/tsan/preload/$(firstword $(subst :, ,$(p))))

$(TSAN_SO): $(LIB_SRCS_ALL)
	$(MAKE) -s B=$(B)/tsan CFLAGS='$(SAN_CFLAGS) $(TSAN_FLAGS)' LDFLAGS='$(TSAN_FLAGS)' $@

$(B)/tsan/preload/%: selftests/preload/%.c $(PROBE_HDRS) $(TSAN_SO)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(SAN_CFLAGS) $(TSAN_FLAGS) $(WFLAGS) -pthread -o $@ $<

tsan: preload-bins $(LIB_SO) $(TSAN_BINS)
	selftests/preload/run --tsan $(B)/tsan $(SAN_PROBES)

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
	      $(B)/bench/pingpong $(B)/bench/ringmem $(B)/bench/xtbench

bench-bins: $(BENCH_BINS)

# A libvma program: <mellanox/vma_extra.h> and the C library (preloaded).
$(B)/bench/xtbench: bench/xtbench.c lib/include/mellanox/vma_extra.h
	@mkdir -p $(@D)
	$(CC) -Ilib/include $(CFLAGS) $(WFLAGS) -o $@ $<

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
	if [ -s $$r/bench-extra.csv ] && [ $$(wc -l < $$r/bench-extra.csv) -gt 1 ]; then bench/report $$r/bench-extra.csv bench/results extra; fi; \
	if [ -s $$r/bench-cost.csv ] && [ $$(wc -l < $$r/bench-cost.csv) -gt 1 ]; then bench/report $$r/bench-cost.csv bench/results cost; \
	elif [ -s $$r/bench-costlat.csv ] && [ $$(wc -l < $$r/bench-costlat.csv) -gt 1 ]; then bench/report $$r/bench-costlat.csv bench/results ppsetup; fi; \
	for f in $$r/bench-strace-*.txt $$r/bench-syscalls-*.txt $$r/bench-profile-*.txt; do [ ! -s $$f ] || cp $$f bench/results/; done; \
	if [ -s $$r/bench-mem.txt ]; then cp $$r/bench-mem.txt bench/results/mem.txt; fi; \
	bench/plot bench/results

# ---- documentation ------------------------------------------------------------
htmldocs:
	sphinx-build -W --keep-going -q -b html Documentation $(B)/htmldocs

# The man pages, each installed into the section its suffix names.
MAN_PAGES := $(wildcard Documentation/*.[0-9])

# Each page formatted as man(1) formats it for an 80-column terminal, with
# every groff warning on (--warnings=w): a line on stderr fails the page,
# and so does a NAME section that mandb could not index (lexgrog).
MAN_LINT = LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings=w -E UTF-8 -l -Tutf8 -Z

man-check:
	@command -v man >/dev/null && command -v lexgrog >/dev/null || \
		{ echo 'man-check: apt-get install man-db (scripts/deps.sh)'; exit 1; }
	@fail=0; for p in $(MAN_PAGES); do \
		err=$$($(MAN_LINT) $$p 2>&1 >/dev/null) || err="$$err (exit status $$?)"; \
		if [ -n "$$err" ]; then echo "$$p:"; echo "$$err"; fail=1; fi; \
		lexgrog $$p >/dev/null 2>&1 || { echo "$$p: no NAME line whatis can read (lexgrog)"; fail=1; }; \
	done; exit $$fail

# ---- install -------------------------------------------------------------------
install: module lib tools $(B)/libvmak.pc $(B)/libvmak-native.pc
	$(MAKE) -C $(KERNELDIR) M=$(CURDIR) VMAK_VERSION=$(VMAK_VERSION) modules_install
	depmod -a $(KERNELRELEASE) || true
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/vmak $(DESTDIR)$(INCLUDEDIR)/mellanox $(DESTDIR)$(INCLUDEDIR)/linux $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(LIB_SO)) $(DESTDIR)$(LIBDIR)/libvmak.so.$(SOVERSION)
	ln -sf libvmak.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libvmak.so
	install -m 0755 $(NATIVE_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(NATIVE_SO)) $(DESTDIR)$(LIBDIR)/libvmak-native.so.$(SOVERSION)
	ln -sf libvmak-native.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libvmak-native.so
	install -m 0644 $(LIB_A) $(NATIVE_A) $(DESTDIR)$(LIBDIR)/
	install -m 0644 $(B)/libvmak.pc $(B)/libvmak-native.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 0644 lib/include/vmak/*.h $(DESTDIR)$(INCLUDEDIR)/vmak/
	install -m 0644 lib/include/mellanox/vma_extra.h $(DESTDIR)$(INCLUDEDIR)/mellanox/
	install -m 0644 uapi/linux/vmak*.h $(DESTDIR)$(INCLUDEDIR)/linux/
	install -m 0755 $(VMAKCTL) $(DESTDIR)$(BINDIR)/
	install -m 0644 $(filter %.3,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man3/
	install -m 0644 $(filter %.7,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man7/
	install -m 0644 $(filter %.8,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man8/

dkms-install:
	rm -rf /usr/src/vmak-$(VERSION)
	mkdir -p /usr/src/vmak-$(VERSION)
	cp -r Kbuild Makefile VERSION kmod uapi /usr/src/vmak-$(VERSION)/
	sed 's/^PACKAGE_VERSION=.*/PACKAGE_VERSION="$(VERSION)"/' dkms.conf > /usr/src/vmak-$(VERSION)/dkms.conf
	dkms add vmak/$(VERSION) && dkms build vmak/$(VERSION) && dkms install vmak/$(VERSION)

clean:
	rm -rf $(B)
	-test -z "$(KERNELDIR)" || $(MAKE) -C $(KERNELDIR) M=$(CURDIR) clean
