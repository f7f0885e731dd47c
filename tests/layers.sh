#!/bin/sh
# The layering of the tree, checked over its #include lines: a folder of
# the library may include the headers of its own folder and of the
# folders below it, never above; the public header <tessel/X.h> belongs
# to the folder that implements it; tools/, bench/ and examples/ see the
# public API only (and their own headers).  The README's map of the tree
# says the same in words.
set -u

srcdir=${TS_SRCDIR:-.}
cd "$srcdir" || exit 99

# The library's folders, lowest first.
layers="support dsl onnx analysis target metatemplates backends search networks"

# The folder that owns each public header.
owner() {
	case $1 in
	version|ownership) echo support ;;
	dsl) echo dsl ;;
	onnx) echo onnx ;;
	analysis) echo analysis ;;
	target) echo target ;;
	space|schedule|metatemplate|gpu) echo metatemplates ;;
	loop|lower|backend|cuda) echo backends ;;
	search|measure|records|tune) echo search ;;
	network) echo networks ;;
	tessel) echo top ;;
	*) echo unknown ;;
	esac
}

# The rank of folder $1 among the layers (0: not a layer of the library).
rank() {
	n=0
	for l in $layers; do
		n=$((n + 1))
		[ "$l" = "$1" ] && { echo $n; return; }
	done
	[ "$1" = top ] && { echo 99; return; }
	echo 0
}

bad() {
	echo "FAIL: $1 includes $2: $3"
}

# check FILE FOLDER: the includes of FILE, which belongs to FOLDER.
check() {
	file=$1 folder=$2
	r=$(rank "$folder")
	sed -n 's/^#[ \t]*include[ \t]*\([<"][^>"]*[>"]\).*/\1/p' "$file" |
	while read -r inc; do
		case $inc in
		\"*/*\")
			dir=${inc#\"}; dir=${dir%%/*}
			if [ "$r" -eq 0 ]; then
				# Programs: their own folder, and the catalogue.
				case $folder/$dir in
				tools/tools|bench/bench|bench/examples|bench/tests) ;;
				examples/examples) ;;
				*) bad "$file" "$inc" "$folder/ sees the public API only" ;;
				esac
			elif [ "$(rank "$dir")" -eq 0 ] ||
			     [ "$(rank "$dir")" -gt "$r" ]; then
				bad "$file" "$inc" "$dir/ is not below $folder/"
			fi
			;;
		\<tessel/*\>)
			h=${inc#<tessel/}; h=${h%.h>}
			o=$(owner "$h")
			[ "$o" = unknown ] && bad "$file" "$inc" "no such public header"
			# support/ implements the contexts that dsl.h declares.
			[ "$folder/$h" = support/dsl ] && continue
			if [ "$r" -ne 0 ] && [ "$(rank "$o")" -gt "$r" ]; then
				bad "$file" "$inc" "it belongs to $o/, above $folder/"
			fi
			;;
		esac
	done
}

# Every file of every folder, and the public headers as their owners.
all() {
	for l in $layers tools bench examples; do
		for f in "$l"/*.c "$l"/*.h; do
			[ -e "$f" ] && check "$f" "$l"
		done
	done
	for f in include/tessel/*.h include/tessel/*.h.in; do
		[ -e "$f" ] || continue
		h=${f#include/tessel/}; h=${h%.in}; h=${h%.h}
		check "$f" "$(owner "$h")"
	done
}

out=$(all)
if [ -n "$out" ]; then
	echo "$out"
	exit 1
fi
echo "ok: every include respects the layers ($layers)"
