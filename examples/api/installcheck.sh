#!/bin/sh
# make installcheck: the installed tree as a user meets it.  Builds the C
# examples of examples/api out of the source tree with nothing but
# `pkg-config --cflags --libs tessel`, and runs them against the installed
# library, headers, targets and tool; checks that tessel.pc names the
# right flags (the private libraries too: a static link of libtessel.a
# with `pkg-config --static --libs` runs) and that every installed header
# compiles on its own, with no config.h.
#
# usage: installcheck.sh DESTDIR PREFIX LIBDIR INCLUDEDIR BINDIR SRCDIR
#        (LIBDIR, INCLUDEDIR and BINDIR with DESTDIR in front)
set -u

destdir=$1 prefix=$2 libdir=$3 includedir=$4 bindir=$5 srcdir=$6
examples=$srcdir/examples/api
cc=${CC:-cc}
cflags="-std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -pedantic -Werror"
failures=0

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessel-installcheck.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

pass() {
	echo "PASS: $*"
}

# Only the installed tree: no override may point into the build tree.
unset TS_SRCDIR TS_BUILDDIR TS_TARGETS_DIR TS_MEASURE_WORKER TS_RUNTIME_LIB
# The installed tessel.pc.  Under DESTDIR, a copy with its absolute
# paths moved there, as installing to them would have written it.
PKG_CONFIG_PATH=$libdir/pkgconfig
if [ -n "$destdir" ] && [ -f "$libdir/pkgconfig/tessel.pc" ]; then
	mkdir "$tmp/pc"
	sed -E "s|^(prefix\|exec_prefix\|libdir\|includedir)=/|\\1=$destdir/|" \
		"$libdir/pkgconfig/tessel.pc" >"$tmp/pc/tessel.pc"
	PKG_CONFIG_PATH=$tmp/pc
fi
# Keep -I/usr/include and -L/usr/lib, which pkgconf drops by default.
PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1
PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
export PKG_CONFIG_PATH PKG_CONFIG_ALLOW_SYSTEM_CFLAGS \
	PKG_CONFIG_ALLOW_SYSTEM_LIBS
pc=${PKG_CONFIG:-pkg-config}
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH

if ! $pc --exists tessel; then
	echo "FAIL: no usable tessel.pc in $libdir/pkgconfig (make install first)"
	exit 1
fi
tcflags=$($pc --cflags tessel)
tlibs=$($pc --libs tessel)
echo "pkg-config --cflags --libs tessel: $tcflags $tlibs"

# The flags name the installed folders and nothing of the build tree.
case " $tcflags " in
*" -I$includedir "*) pass "Cflags: -I$includedir" ;;
*) fail "Cflags '$tcflags' lack -I$includedir" ;;
esac
case " $tlibs " in
*" -L$libdir -ltessel "*) pass "Libs: -L$libdir -ltessel" ;;
*) fail "Libs '$tlibs' lack -L$libdir -ltessel" ;;
esac
slibs=$($pc --static --libs tessel)
for l in -lgc -lisl -ljansson -lxgboost -lLLVM-16; do
	case " $slibs " in
	*" $l "*) ;;
	*) fail "pkg-config --static --libs tessel lacks $l: $slibs" ;;
	esac
done
[ "$($pc --modversion tessel)" = "$(sed -n 's/^#define TESSEL_VERSION "\(.*\)"$/\1/p' \
	"$includedir/tessel/version.h")" ] ||
	fail "tessel.pc and tessel/version.h disagree on the version"

# Every installed header compiles alone, as C11 and as C++, and none
# needs a header that is not installed (config.h, the tree's own).
for h in "$includedir"/tessel/*.h; do
	name=tessel/$(basename "$h")
	if grep -q '#include *[<"]config.h' "$h"; then
		fail "$name includes config.h"
	fi
	printf '#include <%s>\nint tessel_header_alone;\n' "$name" >"$tmp/h.c"
	$cc $cflags $tcflags -fsyntax-only "$tmp/h.c" 2>"$tmp/h.err" ||
		{ fail "$name does not compile alone"; sed 's/^/  | /' "$tmp/h.err"; }
	if command -v "${CXX:-c++}" >/dev/null 2>&1; then
		"${CXX:-c++}" -std=c++17 -Wall -Werror $tcflags -fsyntax-only \
			-x c++ "$tmp/h.c" 2>"$tmp/h.err" ||
			{ fail "$name does not compile as C++"; sed 's/^/  | /' "$tmp/h.err"; }
	fi
done
pass "installed headers compile alone (C11 -pedantic, C++)"

# build NAME: compile examples/api/NAME.c as a user does.
build() {
	if $cc $cflags "$examples/$1.c" -o "$tmp/$1" $tcflags $tlibs \
	    2>"$tmp/$1.build"; then
		pass "build $1"
	else
		fail "build $1"
		sed 's/^/  | /' "$tmp/$1.build"
		return 1
	fi
}

# run NAME ARGS...: run the example; 77 is a skip.
run() {
	name=$1
	shift
	"$tmp/$name" "$@" >"$tmp/$name.out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "$name $*"
	elif [ "$rc" -eq 77 ]; then
		echo "SKIP: $name $*: $(cat "$tmp/$name.out")"
	else
		fail "$name $*: exit $rc"
		sed 's/^/  | /' "$tmp/$name.out"
	fi
}

build matmul && run matmul 96 zen3
grep -q "static schedule for zen3" "$tmp/matmul.out" 2>/dev/null ||
	fail "matmul: no schedule for the shipped target zen3"
build dense && run dense 2
# The measure worker and the targets are found from the installed
# library: the tuning run uses $bindir/tessel.
build records && run records "$tmp/mm.jsonl" 8 && run records "$tmp/mm.jsonl"
if [ -s "$tmp/mm.jsonl" ] && grep -q "tuning" "$tmp/records.out"; then
	fail "records: a second run tuned again instead of reading the log"
fi
build onnx_model &&
	run onnx_model "$srcdir/tests/fuzz/corpus/onnx/conv.onnx" &&
	run onnx_model "$srcdir/tests/fuzz/corpus/onnx/relu.onnx" batch=2

# A static link: libtessel.a and what `pkg-config --static` names.
static=$(echo " $slibs " | sed 's/ -ltessel / -Wl,-Bstatic -ltessel -Wl,-Bdynamic /')
if $cc $cflags "$examples/dense.c" -o "$tmp/dense_static" $tcflags $static \
    2>"$tmp/static.err"; then
	if readelf -d "$tmp/dense_static" 2>/dev/null | grep -q 'NEEDED.*libtessel'; then
		fail "the static link still needs libtessel.so"
	elif "$tmp/dense_static" 1 >"$tmp/static.out" 2>&1; then
		pass "static link with pkg-config --static --libs tessel"
	else
		fail "dense linked statically"
		sed 's/^/  | /' "$tmp/static.out"
	fi
else
	fail "static link with pkg-config --static --libs tessel: $static"
	sed 's/^/  | /' "$tmp/static.err"
fi

[ -x "$bindir/tessel" ] && "$bindir/tessel" --version >/dev/null ||
	fail "$bindir/tessel --version"

if [ "$failures" -ne 0 ]; then
	echo "$failures installcheck(s) failed"
	exit 1
fi
echo "installcheck: the examples build and run against $destdir$prefix"
