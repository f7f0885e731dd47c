#!/bin/sh
# The library finds its runtime files (shipped targets, the static
# runtime that AOT libraries link) from where it lies, and no path of the
# source or build tree is compiled into it: a copy laid out as an
# installation, in a prefix the build never knew, must find them there.
set -u

builddir=${TS_BUILDDIR:-.}
srcdir=${TS_SRCDIR:-.}
lib=$builddir/.libs/libtessel.so
tool=$builddir/tools/.libs/tessel
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

[ -e "$lib" ] && [ -x "$tool" ] || { echo "SKIP: no shared library"; exit 77; }
command -v readelf >/dev/null || { echo "SKIP: no readelf"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessel-paths.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

# 1. No tree path in the library's data (debug information aside).
abs_src=$(cd "$srcdir" && pwd) abs_build=$(cd "$builddir" && pwd)
for sec in .rodata .data .dynstr; do
	readelf -p "$sec" "$lib" 2>/dev/null > "$tmp/sec"
	for d in "$abs_src" "$abs_build"; do
		grep -qF "$d/" "$tmp/sec" && fail "$sec of libtessel holds $d"
	done
done

# 2. Laid out as PREFIX/LIBDIR, PREFIX/bin and PREFIX/share/tessel, for
# a plain and a multiarch LIBDIR, with the trees out of the environment.
for libdir in lib lib/x86_64-linux-gnu; do
	p=$tmp/prefix-$(echo "$libdir" | tr / _)
	mkdir -p "$p/$libdir" "$p/bin" "$p/share/tessel/targets"
	cp -P "$builddir"/.libs/libtessel.so* "$p/$libdir/"
	cp "$builddir/libtessel_rt.a" "$p/$libdir/"
	cp "$tool" "$p/bin/tessel"
	cp "$srcdir"/targets/*.json "$p/share/tessel/targets/"
	run() {
		env -u TS_SRCDIR -u TS_BUILDDIR -u TS_TARGETS_DIR \
			LD_LIBRARY_PATH="$p/$libdir" "$p/bin/tessel" "$@"
	}
	if ! run hw --target skylake-sp > "$tmp/out" 2>&1 ||
	   ! grep -q "^skylake-sp: cpu target" "$tmp/out"; then
		fail "$libdir: the shipped targets are not found"
		sed 's/^/  | /' "$tmp/out"
	fi
	if ! run build "$srcdir/examples/softmax.tsl" -o "$tmp/aot" \
	     > "$tmp/out" 2>&1 || ! ls "$tmp"/aot/lib*.so >/dev/null 2>&1; then
		fail "$libdir: an AOT library is not built"
		sed 's/^/  | /' "$tmp/out"
	fi
	rm -rf "$tmp/aot"
	# Without the folder, the message says where it looked.
	mv "$p/share/tessel/targets" "$p/share/tessel/gone"
	run hw --target zen3 > "$tmp/out" 2>&1
	grep -qF "no folder of targets (looked in $p/$libdir/../share/tessel/targets" \
		"$tmp/out" || { fail "$libdir: message"; sed 's/^/  | /' "$tmp/out"; }
done

[ "$failures" -eq 0 ] || exit 1
echo "ok: runtime files found from the library's location"
