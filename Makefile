# dpusim: kernel module, libdpusim, the dpusim tool and the tests.
#
#   make                 module (against KDIR), library, tool, host tests
#   make module KDIR=... MODDIR=...   the module for one kernel tree
#   make check           everything: deps, debug kernel, both kernels' VMs
#   make install PREFIX=/usr/local DESTDIR=
#   make C=1 module      sparse over kernel/

VERSION     := 0.1.0
SOVERSION   := 1
PREFIX      ?= /usr/local
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
BINDIR      ?= $(PREFIX)/bin
DATADIR     ?= $(PREFIX)/share
UDEVDIR     ?= /lib/udev/rules.d
DESTDIR     ?=

BUILD       ?= build
DPUSIM_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/dpusim
# Extracted linux-source-6.12 (tools/build-debug-kernel puts it there):
# scripts/checkpatch.pl, kselftest_harness.h, kunit.py.
KSRC        ?= $(DPUSIM_CACHE)/linux-source-6.12

# ---------------------------------------------------------------- module
KVER        ?= $(shell uname -r)
KDIR        ?= $(firstword $(wildcard /lib/modules/$(KVER)/build) \
                 $(lastword $(sort $(wildcard /usr/src/linux-headers-*-amd64))))
MODDIR      ?= $(BUILD)/module/$(notdir $(patsubst %/,%,$(KDIR)))
KSOURCES    := Kbuild $(wildcard kernel/*.c kernel/*.h kernel/tests/*.c kernel/tests/*.h) include/uapi/dpusim.h

# ---------------------------------------------------------------- user space
CC          ?= cc
CFLAGS      ?= -O2 -g
USER_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Iinclude -Ilib $(CFLAGS)
# kselftest_harness.h is written for the selftests' -Wall, not -Wextra.
SELFTEST_CFLAGS := -std=gnu11 -D_GNU_SOURCE -Wall -Werror -Iinclude -Ilib -Itests/user $(CFLAGS)
PKG_LIBS    := $(shell pkg-config --libs libudev libelf 2>/dev/null || echo -ludev -lelf)
LIB_LDLIBS  := $(PKG_LIBS) -lpthread

LIB_SRCS    := $(wildcard lib/*.c)
LIB_PIC_OBJS := $(LIB_SRCS:%.c=$(BUILD)/pic/%.o)
LIB_OBJS    := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
LIB_SO      := $(BUILD)/lib/libdpusim.so.$(VERSION)
LIB_A       := $(BUILD)/lib/libdpusim.a
PUBLIC_HDRS := $(wildcard include/*.h)

# DPU-side runtime (linked into every DPU program by tools/dpusim-cc)
DPURT_SRCS  := $(wildcard lib/dpurt/*.c)
DPURT_OBJS  := $(DPURT_SRCS:lib/dpurt/%.c=$(BUILD)/dpurt/%.o)
DPURT_A     := $(BUILD)/lib/libdpusim-dpurt.a
DPURT_HDRS  := $(wildcard include/dpurt/*.h)
DPU_PLUGIN  := $(BUILD)/lib/dpu-model-plugin.so
DPURT_CFLAGS := -std=c11 -D_GNU_SOURCE -DDPUSIM_HOST_LIBC -Wall -Wextra -Werror -Iinclude -Iinclude/dpurt -Ilib/dpurt $(CFLAGS)
DPU_TOOLS   := tools/dpusim-cc tools/dpu-upmem-dpurte-clang tools/dpu-pkg-config
# DPU test programs: build/tests/dpu/<name>, barrier_test once per tasklet
# count (<name>_<N>t); DPU_NR_<name> is the NR_TASKLETS of the others.
DPUCC       := DPUSIM_BUILD=$(abspath $(BUILD)) tools/dpusim-cc
DPU_CFLAGS  := -Wall -Wextra -Werror -O2 -g
DPU_BARRIER_NRS := 1 2 16 24
DPU_NR_mutex_test := 16
DPU_NR_handshake_test := 8
DPU_NR_alloc_test := 4
DPU_NR_sdk_alloc := 8
DPU_NR_profiling_test := 4
DPU_NR_profiling_on := 4
DPU_NR_globals := 4
DPU_NR_log := 4
DPU_NR_vecadd := 16
DPU_NR_pivot := 1
DPU_NR_mram_fault := 2
DPU_NR_crash := 2
DPU_NR_model_time_16 := 16
DPU_NR_model_lock := 16
# per-program dpusim-cc flags
DPU_FLAGS_model_time_plain := -fno-dpu-model
# stream_consumer times its work in host time (tools/bench/README)
DPU_FLAGS_stream_consumer := -fno-dpu-model
DPU_TEST_SRCS := $(filter-out tests/user/dpu/barrier_test.c,$(wildcard tests/user/dpu/*.c))
# Programs of several files: tests/user/dpu/<name>/*.c -> build/tests/dpu/<name>
DPU_MULTI   := $(patsubst tests/user/dpu/%/,%,$(sort $(dir $(wildcard tests/user/dpu/*/*.c))))
DPU_TESTS   := $(patsubst tests/user/dpu/%.c,$(BUILD)/tests/dpu/%,$(DPU_TEST_SRCS)) \
               $(patsubst %,$(BUILD)/tests/dpu/barrier_test_%t,$(DPU_BARRIER_NRS)) \
               $(patsubst %,$(BUILD)/tests/dpu/%,$(DPU_MULTI))

TOOL        := $(BUILD)/bin/dpusim
TOOL_SRCS   := $(wildcard tools/dpusim/*.c)
EXAMPLES    := $(patsubst tools/examples/%.c,$(BUILD)/examples/%,$(wildcard tools/examples/*.c))
BENCH       := $(patsubst tools/bench/%.c,$(BUILD)/bench/%,$(wildcard tools/bench/*.c))
# DPU programs of the examples and benchmarks (built by dpusim-cc)
DPU_EXAMPLES := $(patsubst tools/examples/dpu/%.c,$(BUILD)/examples/dpu/%,$(wildcard tools/examples/dpu/*.c))
DPU_BENCH   := $(patsubst tools/bench/dpu/%.c,$(BUILD)/bench/dpu/%,$(wildcard tools/bench/dpu/*.c))
# The model benchmark's DPU programs: one build per tasklet count, and
# vecadd and pivot without the model (its instrumentation's cost)
MODEL_NRS   := 1 2 4 8 11 16 24
MODEL_BENCH := $(patsubst %,$(BUILD)/bench/dpu/model_arith_%t,$(MODEL_NRS)) \
               $(patsubst %,$(BUILD)/bench/dpu/model_mram_%t,1 2 16) \
               $(BUILD)/bench/dpu/vecadd_plain $(BUILD)/bench/dpu/pivot $(BUILD)/bench/dpu/pivot_plain
DPU_BENCH   := $(filter-out $(BUILD)/bench/dpu/model_%,$(DPU_BENCH)) $(MODEL_BENCH)
UNIT_TESTS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(wildcard tests/unit/test_*.c))
USER_TESTS  := $(patsubst tests/user/%.c,$(BUILD)/tests/user/%,$(wildcard tests/user/*.c))

.PHONY: all module lib tool tests examples bench check install clean checkpatch sparse

all: module lib tool tests examples bench

module: $(KSOURCES)
	@mkdir -p $(MODDIR)/kernel/tests $(MODDIR)/include/uapi
	@cp -p Kbuild $(MODDIR)/
	@cp -p $(wildcard kernel/*.c kernel/*.h) $(MODDIR)/kernel/
	@cp -p $(wildcard kernel/tests/*.c kernel/tests/*.h) $(MODDIR)/kernel/tests/
	@cp -p include/uapi/dpusim.h $(MODDIR)/include/uapi/
	$(MAKE) -C $(KDIR) M=$(abspath $(MODDIR)) $(if $(C),C=$(C)) modules

lib: $(LIB_SO) $(LIB_A) $(DPURT_A) $(DPU_PLUGIN)
tool: $(TOOL)
tests: $(UNIT_TESTS) $(USER_TESTS) $(DPU_TESTS)
examples: $(EXAMPLES) $(DPU_EXAMPLES)
bench: $(BENCH) $(DPU_BENCH)

$(BUILD)/pic/%.o: %.c $(PUBLIC_HDRS) $(wildcard lib/*.h) include/uapi/dpusim.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(BUILD)/obj/%.o: %.c $(PUBLIC_HDRS) $(wildcard lib/*.h) include/uapi/dpusim.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -fvisibility=hidden -c $< -o $@

$(LIB_SO): $(LIB_PIC_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libdpusim.so.$(SOVERSION) -Wl,--no-undefined -o $@ $^ $(LIB_LDLIBS)
	ln -sf libdpusim.so.$(VERSION) $(BUILD)/lib/libdpusim.so.$(SOVERSION)
	ln -sf libdpusim.so.$(SOVERSION) $(BUILD)/lib/libdpusim.so

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(DPURT_OBJS): $(BUILD)/dpurt/%.o: lib/dpurt/%.c $(wildcard lib/dpurt/*.h) $(DPURT_HDRS) include/uapi/dpusim.h
	@mkdir -p $(dir $@)
	$(CC) $(DPURT_CFLAGS) -c $< -o $@

$(DPURT_A): $(DPURT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/tests/dpu/barrier_test_%t: tests/user/dpu/barrier_test.c $(DPURT_A) $(DPU_PLUGIN) $(DPURT_HDRS) lib/dpurt/dpu.ld lib/dpurt/user.ld tools/dpusim-cc
	@mkdir -p $(dir $@)
	$(DPUCC) $(DPU_CFLAGS) -DNR_TASKLETS=$* -o $@ $<

$(BUILD)/tests/dpu/%: tests/user/dpu/%.c $(DPURT_A) $(DPU_PLUGIN) $(DPURT_HDRS) lib/dpurt/dpu.ld lib/dpurt/user.ld tools/dpusim-cc
	@mkdir -p $(dir $@)
	$(DPUCC) $(DPU_CFLAGS) $(DPU_FLAGS_$*) -DNR_TASKLETS=$(or $(DPU_NR_$*),1) -o $@ $<

define DPU_MULTI_RULE
$(BUILD)/tests/dpu/$(1): $(wildcard tests/user/dpu/$(1)/*.c) $(DPURT_A) $(DPU_PLUGIN) $(DPURT_HDRS) lib/dpurt/dpu.ld lib/dpurt/user.ld tools/dpusim-cc
	@mkdir -p $$(dir $$@)
	$(DPUCC) $(DPU_CFLAGS) -DNR_TASKLETS=$(or $(DPU_NR_$(1)),1) -o $$@ $$(filter %.c,$$^)
endef
$(foreach p,$(DPU_MULTI),$(eval $(call DPU_MULTI_RULE,$(p))))

$(BUILD)/examples/dpu/%: tools/examples/dpu/%.c $(DPURT_A) $(DPU_PLUGIN) $(DPURT_HDRS) lib/dpurt/dpu.ld lib/dpurt/user.ld tools/dpusim-cc
	@mkdir -p $(dir $@)
	$(DPUCC) $(DPU_CFLAGS) -DNR_TASKLETS=$(or $(DPU_NR_$*),1) -o $@ $<

# A benchmark's loops start 32-byte aligned: under QEMU's software
# emulation a hot loop whose code straddles a page boundary runs several
# times slower, so where the linker happens to put a loop must not decide
# a figure (tools/bench/README, "Code layout").
BENCH_CFLAGS := -falign-loops=32

$(BUILD)/bench/dpu/%: tools/bench/dpu/%.c $(DPURT_A) $(DPU_PLUGIN) $(DPURT_HDRS) lib/dpurt/dpu.ld lib/dpurt/user.ld tools/dpusim-cc
	@mkdir -p $(dir $@)
	$(DPUCC) $(DPU_CFLAGS) $(BENCH_CFLAGS) $(DPU_FLAGS_$*) -DNR_TASKLETS=$(or $(DPU_NR_$*),1) -o $@ $<

DPU_DEPS    := $(DPURT_A) $(DPU_PLUGIN) $(DPURT_HDRS) lib/dpurt/dpu.ld lib/dpurt/user.ld tools/dpusim-cc

$(BUILD)/bench/dpu/model_arith_%t: tools/bench/dpu/model_arith.c $(DPU_DEPS)
	@mkdir -p $(dir $@)
	$(DPUCC) $(DPU_CFLAGS) $(BENCH_CFLAGS) -DNR_TASKLETS=$* -o $@ $<
$(BUILD)/bench/dpu/model_mram_%t: tools/bench/dpu/model_mram.c $(DPU_DEPS)
	@mkdir -p $(dir $@)
	$(DPUCC) $(DPU_CFLAGS) $(BENCH_CFLAGS) -DNR_TASKLETS=$* -o $@ $<
$(BUILD)/bench/dpu/vecadd_plain: tools/bench/dpu/vecadd.c $(DPU_DEPS)
	@mkdir -p $(dir $@)
	$(DPUCC) $(DPU_CFLAGS) $(BENCH_CFLAGS) -fno-dpu-model -DNR_TASKLETS=16 -o $@ $<
$(BUILD)/bench/dpu/pivot: tools/examples/dpu/pivot.c $(DPU_DEPS)
	@mkdir -p $(dir $@)
	$(DPUCC) $(DPU_CFLAGS) $(BENCH_CFLAGS) -DNR_TASKLETS=1 -o $@ $<
$(BUILD)/bench/dpu/pivot_plain: tools/examples/dpu/pivot.c $(DPU_DEPS)
	@mkdir -p $(dir $@)
	$(DPUCC) $(DPU_CFLAGS) $(BENCH_CFLAGS) -fno-dpu-model -DNR_TASKLETS=1 -o $@ $<

# Programs link the static library so they run in the VM without installing.
$(TOOL): $(TOOL_SRCS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -o $@ $(TOOL_SRCS) $(LIB_A) $(LIB_LDLIBS)

$(BUILD)/examples/%: tools/examples/%.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -o $@ $< $(LIB_A) $(LIB_LDLIBS)

$(BUILD)/bench/%: tools/bench/%.c tools/bench/bench.h tools/bench/capacity.h tools/bench/handoff.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(BENCH_CFLAGS) -o $@ $< $(LIB_A) $(LIB_LDLIBS)

# The runtime's unit tests run tasklets in the test process (no kernel).
$(BUILD)/tests/unit/test_dpurt: tests/unit/test_dpurt.c $(wildcard tests/unit/*.h) $(DPURT_A) $(DPURT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -DDPUSIM_HOST_LIBC -Itests/unit -Iinclude/dpurt -Ilib/dpurt -o $@ $< $(DPURT_A) -lpthread

# built_ins.h's builtins against the ISA, host-compiled against the DPU headers
$(BUILD)/tests/unit/test_builtins: tests/unit/test_builtins.c $(wildcard tests/unit/*.h) $(DPURT_A) $(DPURT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -DDPUSIM_HOST_LIBC -Itests/unit -Iinclude/dpurt -Ilib/dpurt -o $@ $< $(DPURT_A) -lpthread

# test_trace includes the tool's trace formatter; tool_trace the JSON checker;
# test_bench the benchmarks' header
$(BUILD)/tests/unit/test_trace: tools/dpusim/trace_fmt.c tools/dpusim/trace_fmt.h
$(BUILD)/tests/unit/test_bench: tools/bench/bench.h
$(BUILD)/tests/user/tool_trace: tests/unit/json_mini.h

$(BUILD)/tests/unit/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Itests/unit -o $@ $< $(LIB_A) $(LIB_LDLIBS)

# Integration tests use the kernel's kselftest harness: from the extracted
# linux-source tree when tools/build-debug-kernel made it, else taken out
# of Debian's linux-source-6.12 tarball.
KSELFTEST   := $(or $(wildcard $(KSRC)/tools/testing/selftests),$(BUILD)/kselftest)
KSRC_TAR    ?= /usr/src/linux-source-6.12.tar.xz

$(BUILD)/kselftest/kselftest_harness.h:
	@test -f $(KSRC_TAR) || { echo "$(KSRC_TAR) missing: run tools/install-deps" >&2; exit 1; }
	@mkdir -p $(dir $@)
	tar -xJf $(KSRC_TAR) -C $(dir $@) --strip-components=4 \
		linux-source-6.12/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.12/tools/testing/selftests/kselftest.h
	@touch $@

$(BUILD)/tests/user/%: tests/user/%.c $(wildcard tests/user/*.h) $(LIB_A) $(KSELFTEST)/kselftest_harness.h
	@mkdir -p $(dir $@)
	$(CC) $(SELFTEST_CFLAGS) -I$(KSELFTEST) -o $@ $< $(LIB_A) $(LIB_LDLIBS)

# UPMEM's CMake support goes where the SDK puts it (tools/cmake/*.in say
# what each holds), with a libdpu.so for its DPU_HOST_LIBRARIES and a
# package config for find_package(dpu).
CMAKE_SUBST = sed -e 's|@PREFIX@|$(PREFIX)|g; s|@LIBDIR@|$(LIBDIR)|g; s|@INCLUDEDIR@|$(INCLUDEDIR)|g; s|@DATADIR@|$(DATADIR)|g; s|@SOVERSION@|$(SOVERSION)|g'

install: $(LIB_SO) $(LIB_A) $(TOOL) $(DPURT_A) $(DPU_PLUGIN)
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/dpusim/uapi $(DESTDIR)$(BINDIR) $(DESTDIR)$(UDEVDIR)
	install -d $(DESTDIR)$(INCLUDEDIR)/dpusim/dpurt $(DESTDIR)$(LIBDIR)/dpusim
	install -m 0644 $(DPURT_HDRS) $(DESTDIR)$(INCLUDEDIR)/dpusim/dpurt/
	install -m 0644 $(DPURT_A) lib/dpurt/dpu.ld lib/dpurt/user.ld $(DPU_PLUGIN) $(DPU_PLUGIN:.so=.gccver) $(DESTDIR)$(LIBDIR)/dpusim/
	sed -e 's|@DPURT_INCDIR@|$(INCLUDEDIR)/dpusim/dpurt|; s|@DPURT_LIBDIR@|$(LIBDIR)/dpusim|' \
		tools/dpusim-cc > $(DESTDIR)$(BINDIR)/dpusim-cc
	chmod 0755 $(DESTDIR)$(BINDIR)/dpusim-cc
	ln -sf dpusim-cc $(DESTDIR)$(BINDIR)/dpu-upmem-dpurte-clang
	install -m 0755 tools/dpu-pkg-config $(DESTDIR)$(BINDIR)/
	install -m 0755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libdpusim.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libdpusim.so.$(SOVERSION)
	ln -sf libdpusim.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libdpusim.so
	install -m 0644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 0644 $(PUBLIC_HDRS) $(DESTDIR)$(INCLUDEDIR)/dpusim/
	install -m 0644 include/uapi/dpusim.h $(DESTDIR)$(INCLUDEDIR)/dpusim/uapi/
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' \
		lib/dpusim.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/dpusim.pc
	install -m 0755 $(TOOL) $(DESTDIR)$(BINDIR)/
	install -m 0644 tools/udev/60-dpusim.rules $(DESTDIR)$(UDEVDIR)/
	install -d $(DESTDIR)$(DATADIR)/upmem/cmake/include/host $(DESTDIR)$(LIBDIR)/cmake/dpu
	ln -sf ../libdpusim.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/dpusim/libdpu.so
	$(CMAKE_SUBST) tools/cmake/dpu.cmake.in > $(DESTDIR)$(DATADIR)/upmem/cmake/dpu.cmake
	$(CMAKE_SUBST) tools/cmake/DpuHost.cmake.in > $(DESTDIR)$(DATADIR)/upmem/cmake/include/host/DpuHost.cmake
	$(CMAKE_SUBST) tools/cmake/dpuConfig.cmake.in > $(DESTDIR)$(LIBDIR)/cmake/dpu/dpuConfig.cmake

check:
	tests/check

checkpatch:
	$(KSRC)/scripts/checkpatch.pl --no-tree --strict -f kernel/*.c kernel/*.h kernel/tests/*.c kernel/tests/*.h

sparse:
	$(MAKE) module C=2

clean:
	rm -rf $(BUILD)

# the pipeline model's unit tests link the runtime's archive (no kernel)
$(BUILD)/tests/unit/test_model: tests/unit/test_model.c $(wildcard tests/unit/*.h) $(DPURT_A) lib/dpurt/model.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Itests/unit -Ilib/dpurt -o $@ $< $(DPURT_A)

# dpusim-cc's model plugin, built for the gcc that will load it (its
# version beside it: dpusim-cc loads it into no other compiler)
PLUGIN_DIR  := $(shell $(CXX) -print-file-name=plugin)
$(DPU_PLUGIN): tools/dpu-model-plugin.cc lib/dpurt/model_table.h
	@mkdir -p $(dir $@)
	$(CXX) -std=gnu++17 -shared -fPIC -fno-rtti -O2 -Wall -Wextra -Wno-unused-parameter \
		-I$(PLUGIN_DIR)/include -o $@ $<
	$(or $(DPUSIM_HOST_CC),gcc) -dumpfullversion > $(@:.so=.gccver)

# model_time's other builds include it
$(BUILD)/tests/dpu/model_time_16 $(BUILD)/tests/dpu/model_time_plain: tests/user/dpu/model_time.c

# the cost table as the plugin applies it: one operation per function
$(BUILD)/tests/unit/model_ops.o: tests/unit/fixtures/model_ops.c $(DPU_PLUGIN)
	@mkdir -p $(dir $@)
	$(CC) -O2 -fplugin=$(DPU_PLUGIN) -fno-tree-vectorize -c $< -o $@
$(BUILD)/tests/unit/test_model_costs: tests/unit/test_model_costs.c $(BUILD)/tests/unit/model_ops.o lib/dpurt/model_table.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Itests/unit -o $@ $< $(BUILD)/tests/unit/model_ops.o
