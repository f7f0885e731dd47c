#!/bin/sh
# Ownership in the public API: every pointer parameter and every pointer
# result of a function declared in include/tessel/*.h carries one of the
# annotations of <tessel/ownership.h> (__ts_give, __ts_take, __ts_keep,
# __ts_gc; __ts_null alone says nothing of ownership).  A result may not
# be __ts_take, a parameter may not be __ts_give.  A pointer is what has
# a "*" or array bounds, or a function pointer type that the headers
# define by typedef.  Declarations may span several lines; comments,
# preprocessor lines, the bodies of structures and enumerations, typedefs
# and the C++ guards are skipped.  Each offender is printed as
# "FAIL: header:line: function: parameter", a result as "(result)".
# With TS_OWNERSHIP_LIST=1 every pointer checked is listed as well.
set -u

srcdir=${TS_SRCDIR:-.}
cd "$srcdir" || exit 99

ls include/tessel/*.h >/dev/null 2>&1 || exit 99

awk -v list="${TS_OWNERSHIP_LIST:-0}" '
# The number of newlines in "s": lines spanned.
function nl(s,	n, i) {
	n = 0
	for (i = 1; i <= length(s); i++)
		if (substr(s, i, 1) == "\n")
			n++
	return n
}

function trim(s) {
	sub(/^[ \t\n]+/, "", s)
	sub(/[ \t\n]+$/, "", s)
	return s
}

function has(s, word) {
	return s ~ ("(^|[^A-Za-z0-9_])" word "([^A-Za-z0-9_]|$)")
}

# The ownership annotations that "s" carries, as a word list.
function ann(s,	a) {
	a = ""
	if (has(s, "__ts_give")) a = a " give"
	if (has(s, "__ts_take")) a = a " take"
	if (has(s, "__ts_keep")) a = a " keep"
	if (has(s, "__ts_gc")) a = a " gc"
	return a
}

function fail(line, fn, what) {
	printf "FAIL: %s:%d: %s: %s\n", FILENAME, line, fn, what
	bad++
}

# The name a parameter declares: "(*name)" for a function pointer, else
# the last identifier before any array bounds.
function pname(p,	q) {
	if (match(p, /\([ \t\n]*\*[ \t\n]*[A-Za-z_][A-Za-z0-9_]*/)) {
		q = substr(p, RSTART, RLENGTH)
		sub(/^\([ \t\n]*\*[ \t\n]*/, "", q)
		return q
	}
	q = p
	sub(/\[.*$/, "", q)
	if (match(q, /[A-Za-z_][A-Za-z0-9_]*[ \t\n]*$/))
		return trim(substr(q, RSTART, RLENGTH))
	return p
}

# Check one parameter "p" of "fn", "line" being where it starts.
function param(p, fn, line,	type, a) {
	p = trim(p)
	if (p == "" || p == "void" || p == "...")
		return
	# The type of a function pointer is what precedes its "(*name)":
	# the parameters of the pointed-to function are not ours.
	type = p
	if (index(type, "("))
		type = substr(type, 1, index(type, "(") - 1)
	if (p !~ /[*[]/ && !fnptr_type(type))
		return
	a = ann(type)
	nptr++
	if (list)
		printf "%s:%d: %s: %s:%s\n", FILENAME, line, fn, pname(p), a
	if (a == "")
		fail(line, fn, pname(p))
	else if (has(type, "__ts_give"))
		fail(line, fn, pname(p) " (__ts_give on a parameter)")
}

# Whether "type" names one of the function pointer types of the headers.
function fnptr_type(type,	n, w, i) {
	n = split(type, w, /[^A-Za-z0-9_]+/)
	for (i = 1; i <= n; i++)
		if (w[i] in fnptr)
			return 1
	return 0
}

# One statement at file scope, from line "start".
function decl(s, start,	p, head, fn, ret, rest, i, c, depth, from, a, t) {
	s = trim(s)
	# A typedef of a function pointer: its name, for the parameters of
	# that type later on.
	if (s ~ /^typedef[^A-Za-z0-9_]/ &&
	    match(s, /\([ \t\n]*\*[ \t\n]*[A-Za-z_][A-Za-z0-9_]*[ \t\n]*\)/)) {
		t = substr(s, RSTART + 1, RLENGTH - 2)
		gsub(/[* \t\n]/, "", t)
		fnptr[t] = 1
	}
	if (s ~ /^typedef[^A-Za-z0-9_]/ || !index(s, "("))
		return
	if (index(s, "__attribute__"))
		s = substr(s, 1, index(s, "__attribute__") - 1)
	p = index(s, "(")
	head = substr(s, 1, p - 1)
	if (!match(head, /[A-Za-z_][A-Za-z0-9_]*[ \t\n]*$/))
		return
	fn = trim(substr(head, RSTART, RLENGTH))
	ret = substr(head, 1, RSTART - 1)
	nfn++
	if (ret ~ /\*/) {
		a = ann(ret)
		nptr++
		if (list)
			printf "%s:%d: %s: (result):%s\n", FILENAME, \
				start + nl(head), fn, a
		if (a == "")
			fail(start + nl(head), fn, "(result)")
		else if (has(ret, "__ts_take"))
			fail(start + nl(head), fn, "(result, __ts_take)")
	}
	# Split the parameters at the commas outside parentheses.
	depth = 0
	from = p + 1
	for (i = p + 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "(") {
			depth++
		} else if (c == ")" && depth > 0) {
			depth--
		} else if ((c == "," && depth == 0) || c == ")") {
			rest = substr(s, from, i - from)
			param(rest, fn,
				start + nl(substr(s, 1, from - 1)) + lead(rest))
			from = i + 1
			if (c == ")")
				break
		}
	}
}

# The newlines before the first non-blank character of "s".
function lead(s,	t) {
	t = s
	sub(/[^ \t\n].*$/, "", t)
	return nl(t)
}

FNR == 1 {
	incomment = 0; cont = 0; cplusplus = 0; depth = 0
	stmt = ""; start = 0
}

{
	line = $0
	# Comments, possibly over several lines.
	if (incomment) {
		if (!index(line, "*/"))
			next
		line = substr(line, index(line, "*/") + 2)
		incomment = 0
	}
	while (index(line, "/*")) {
		i = index(line, "/*")
		rest = substr(line, i + 2)
		if (index(rest, "*/")) {
			line = substr(line, 1, i - 1) " " \
				substr(rest, index(rest, "*/") + 2)
		} else {
			line = substr(line, 1, i - 1)
			incomment = 1
		}
	}
	# Preprocessor lines (with their continuations) and the C++ guards.
	if (cont) {
		cont = line ~ /\\$/
		next
	}
	if (line ~ /^[ \t]*#/) {
		cont = line ~ /\\$/
		if (line ~ /^[ \t]*#[ \t]*ifdef[ \t]+__cplusplus/)
			cplusplus = 1
		else if (line ~ /^[ \t]*#[ \t]*endif/)
			cplusplus = 0
		next
	}
	if (cplusplus)
		next
	# Statements at file scope, without the bodies of braces.
	for (i = 1; i <= length(line); i++) {
		c = substr(line, i, 1)
		if (c == "{") {
			depth++
		} else if (c == "}") {
			depth--
		} else if (depth == 0 && c == ";") {
			decl(stmt, start)
			stmt = ""
		} else if (depth == 0) {
			if (trim(stmt) == "" && c !~ /[ \t]/) {
				stmt = ""
				start = FNR
			}
			stmt = stmt c
		}
	}
	if (stmt != "")
		stmt = stmt "\n"
}

END {
	if (nfn == 0) {
		print "FAIL: no function declaration found"
		exit 1
	}
	if (bad) {
		printf "%d pointer(s) without a fitting ownership " \
			"annotation\n", bad
		exit 1
	}
	printf "ok: %d functions, %d pointer parameters and results " \
		"annotated\n", nfn, nptr
}
' include/tessel/*.h
