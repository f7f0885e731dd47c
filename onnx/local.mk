# onnx/: the ONNX importer, a front end beside the .tsl parser.  The C
# bindings of onnx.proto are generated at build time by protoc-c from the
# file a Debian package ships (configure's ONNX_PROTO), compiled apart
# without the project's warning flags (the code is not ours).
tesselinclude_HEADERS += include/tessel/onnx.h
if HAVE_ONNX
noinst_LTLIBRARIES += onnx/libonnxpb.la
nodist_onnx_libonnxpb_la_SOURCES = onnx/onnx.pb-c.c onnx/onnx.pb-c.h
onnx_libonnxpb_la_CFLAGS = $(PROTOBUF_C_CFLAGS)
BUILT_SOURCES = onnx/onnx.pb-c.h
onnx/onnx.pb-c.c: $(ONNX_PROTO)
	$(AM_V_GEN)$(MKDIR_P) onnx && \
	$(PROTOC_C) --c_out=onnx -I$(dir $(ONNX_PROTO)) $(ONNX_PROTO)
onnx/onnx.pb-c.h: onnx/onnx.pb-c.c
CLEANFILES += onnx/onnx.pb-c.c onnx/onnx.pb-c.h
libtessel_la_SOURCES += \
	onnx/internal.h \
	onnx/read.c \
	onnx/import.c \
	onnx/ops_elementwise.c \
	onnx/ops_linalg.c \
	onnx/ops_shape.c \
	onnx/ops_reduce.c \
	onnx/ops_nn.c \
	onnx/ops_quant.c \
	onnx/ops_misc.c
libtessel_la_LIBADD += onnx/libonnxpb.la $(PROTOBUF_C_LIBS)
else
libtessel_la_SOURCES += onnx/none.c
endif
