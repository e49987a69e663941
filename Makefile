# cpuledger: plain make with pkg-config. `make run` and `make test` are the
# two commands of the README; both install missing Debian packages first.

BUILD ?= build
CC ?= cc
SANITIZE ?=
OPT ?= -O2

CFLAGS_BASE := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wno-missing-field-initializers -D_GNU_SOURCE -g
ifeq ($(SANITIZE),1)
CFLAGS_BASE += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
else
CFLAGS_BASE += $(OPT)
endif
CFLAGS ?=
ALL_CFLAGS = $(CFLAGS_BASE) $(CFLAGS)
LDLIBS = $(shell pkg-config --libs libzstd libdw libelf sqlite3 2>/dev/null || echo -lzstd -ldw -lelf -lsqlite3) -lpthread -lm
CMOCKA_LIBS = $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

CORE_SRC := $(wildcard src/core/*.c)
LIB_SRC := $(wildcard src/format/*.c src/report/*.c src/collect/*.c src/symbols/*.c src/ledger/*.c)
CLI_SRC := $(wildcard src/cli/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)

CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all deps build run test test-fast unit check-core fuzz fuzz-build bench clean
all: $(BUILD)/cpuledger $(UNIT_BIN)
build: all

deps:
	@scripts/install-deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# The engine is a library of its own, so tests link it alone.
$(BUILD)/libcore.a: $(CORE_OBJ)
	ar rcs $@ $^
$(BUILD)/libcpuledger.a: $(LIB_OBJ)
	ar rcs $@ $^

$(BUILD)/cpuledger: $(CLI_OBJ) $(BUILD)/libcpuledger.a $(BUILD)/libcore.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libcpuledger.a $(BUILD)/libcore.a $(LDLIBS)

# Unit tests of the engine link libcore.a alone; tests of formats and
# reports may add libcpuledger.a.
$(BUILD)/tests/test_%: tests/unit/test_%.c $(BUILD)/libcpuledger.a $(BUILD)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -Isrc -o $@ $< \
		$(if $(filter core_%,$*),,$(BUILD)/libcpuledger.a) $(BUILD)/libcore.a \
		$(CMOCKA_LIBS) $(LDLIBS)

# src/core does no I/O, reads no clock or environment and never exits.
check-core: $(BUILD)/libcore.a
	@bad=$$(nm -u $(BUILD)/libcore.a | awk '{print $$2}' | grep -E '^(f?open|open64|read|write|f?printf|puts|fputs|fwrite|fread|clock_gettime|time|gettimeofday|getenv|exit|_exit|abort|syscall)$$' | sort -u); \
	if [ -n "$$bad" ]; then echo "src/core calls I/O or process functions: $$bad"; exit 1; fi

run: deps
	@$(MAKE) --no-print-directory all
	@scripts/run-demo.sh $(BUILD)/cpuledger

test: deps
	@$(MAKE) --no-print-directory test-fast

# The whole suite twice: optimized, then under ASan+UBSan; then the fuzz
# targets briefly. The last line is the runner's "N passed, N failed".
test-fast:
	@$(MAKE) --no-print-directory all check-core
	@$(MAKE) --no-print-directory BUILD=build/asan SANITIZE=1 all
	@$(MAKE) --no-print-directory fuzz-build
	@tests/run.sh build build/asan build/fuzz

FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_CC ?= clang
fuzz-build: $(FUZZ_TARGETS)
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(CORE_SRC) $(LIB_SRC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
		-Isrc -o $@ $< $(CORE_SRC) $(LIB_SRC) $(LDLIBS)

FUZZ_SECONDS ?= 300
fuzz: deps fuzz-build
	@for t in $(FUZZ_TARGETS); do \
		tests/fuzz/run.sh $$t $(FUZZ_SECONDS) || exit 1; done

build/bench/ledger_bench: bench/ledger_bench.c $(BUILD)/libcpuledger.a $(BUILD)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc -o $@ $< $(BUILD)/libcpuledger.a $(BUILD)/libcore.a $(LDLIBS)

bench: deps all
	bench/analyze.sh
	bench/record.sh
	bench/symbols.sh
	bench/ledger.sh

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
