# search/: files are listed here as they are added.

# Hardware descriptions: checks, JSON, host detection, shipped files.
libtessel_la_SOURCES += search/target.c search/target_json.c search/calibrate.c \
	search/target_detect.c search/target_internal.h
tesselinclude_HEADERS += include/tessel/target.h
targetsdir = $(pkgdatadir)/targets
dist_targets_DATA = targets/zen3.json targets/skylake-sp.json \
	targets/neoverse-n1.json targets/apple-m1.json \
	targets/v100.json targets/a100.json targets/h100.json
include $(srcdir)/search/static.mk
include $(srcdir)/search/network.mk
include $(srcdir)/search/tuner.mk
include $(srcdir)/search/tune.mk
