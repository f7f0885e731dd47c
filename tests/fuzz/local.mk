# tests/fuzz: libFuzzer targets for every reader of untrusted input (the
# .tsl parser, .npy files, target JSON, schedule JSON, records), built
# when configure found a clang that links libFuzzer.  The library is
# compiled a second time, with clang and the sanitizers, into a static
# archive of its own: libtool's objects carry neither the coverage
# instrumentation nor ASan, and the archive lets each target link only
# the objects it reaches.  run.sh runs each target for a bounded time
# from its seed corpus and reports SKIP (77) when they were not built.
TESTS += tests/fuzz/run.sh
FUZZ_NAMES = parse npy target_json schedule_json records
if HAVE_ONNX
FUZZ_NAMES += onnx
endif
EXTRA_DIST += tests/fuzz/run.sh tests/fuzz/fuzz_common.h \
	$(FUZZ_NAMES:%=tests/fuzz/fuzz_%.c) tests/fuzz/fuzz_onnx.c \
	tests/fuzz/corpus

if HAVE_LIBFUZZER
FUZZ_TARGETS = $(FUZZ_NAMES:%=tests/fuzz/fuzz_%)
check_SCRIPTS = $(FUZZ_TARGETS)
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
FUZZ_CFLAGS = -g -O1 -std=c11 $(FUZZ_SAN)
FUZZ_LIB_OBJECTS = $(patsubst %.c,tests/fuzz/obj/%.o,\
	$(filter %.c,$(libtessel_la_SOURCES)))
if HAVE_ONNX
# The generated bindings of onnx.proto, from the build tree.
FUZZ_LIB_OBJECTS += tests/fuzz/obj/onnx/onnx.pb-c.o
tests/fuzz/obj/onnx/onnx.pb-c.o: onnx/onnx.pb-c.c
	@$(MKDIR_P) $(@D)
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -w \
		$(PROTOBUF_C_CFLAGS) -I$(top_builddir) -c -o $@ onnx/onnx.pb-c.c
endif
FUZZ_LIBS = tests/fuzz/libtessel_fuzz.a $(PROTOBUF_C_LIBS) $(ISL_LIBS) $(GC_LIBS) \
	$(JANSSON_LIBS) $(LLVM_LIBS) $(XGBOOST_LIBS) $(CUDA_LIBS) $(MPI_LIBS) -lm -ldl \
	-lpthread

# OpenMP is left out: the parallel loops of the runtime run serially.
tests/fuzz/obj/%.o: $(srcdir)/%.c config.h
	@$(MKDIR_P) $(@D)
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -w \
		$(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) -c -o $@ $<

tests/fuzz/libtessel_fuzz.a: $(FUZZ_LIB_OBJECTS)
	$(AM_V_AR)rm -f $@ && $(AR) cr $@ $(FUZZ_LIB_OBJECTS) && $(RANLIB) $@

tests/fuzz/fuzz_%: $(srcdir)/tests/fuzz/fuzz_%.c \
		$(srcdir)/tests/fuzz/fuzz_common.h tests/fuzz/libtessel_fuzz.a
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer \
		$(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) -o $@ $< $(FUZZ_LIBS)

CLEANFILES += $(FUZZ_TARGETS) tests/fuzz/libtessel_fuzz.a \
	$(FUZZ_LIB_OBJECTS)
endif
