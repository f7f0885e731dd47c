# target/: hardware descriptions (checks, JSON, host detection,
# calibration) and the shipped descriptions.  Below the meta-templates,
# the static search and the CUDA runtime, which all read a target.
libtessel_la_SOURCES += target/target.c target/target_json.c \
	target/calibrate.c target/target_detect.c target/target_internal.h
tesselinclude_HEADERS += include/tessel/target.h
targetsdir = $(pkgdatadir)/targets
dist_targets_DATA = targets/zen3.json targets/zen4.json targets/zen5.json \
	targets/skylake-sp.json targets/sapphire-rapids.json \
	targets/neoverse-n1.json targets/apple-m1.json \
	targets/v100.json targets/a100.json targets/h100.json targets/h200.json
