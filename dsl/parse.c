/* The .tsl text front end.
 *
 * Three passes over one file:
 *   1. the lexer turns the source into a list of tokens;
 *   2. a recursive-descent parser reads every statement into a small syntax
 *      tree, evaluating constant expressions (lets, extents) on the way;
 *   3. the builder orders the stages by the tensors they read (statements
 *      are declarative: a stage may be written before its producers) and
 *      declares them through the public API (ts_placeholder, ts_compute...).
 *
 * Every message carries "file:line:col: error: ", the source line and a
 * caret under the offending token.  The grammar is in doc/grammar.md; each
 * parser function is named after its rule, written above it.
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dsl/internal.h"

/* The deepest nesting of parentheses, brackets, unary operators, calls and
 * reducers that the parser accepts: every pass over an expression
 * recurses, so a bound here keeps the stack small whatever the input. */
#define MAX_NESTING 256
/* The tallest expression tree accepted: a long chain of binary operators
 * is read without recursion but walked recursively afterwards. */
#define MAX_HEIGHT 2048

/* Lexical tokens. */
enum tok_kind {
	TK_IDENT,
	TK_INT,
	TK_FLOAT,
	TK_PUNCT,
	TK_EOF,
};

struct token {
	enum tok_kind kind;
	const char *loc;	/* first byte in the source */
	int len;		/* length in bytes */
	int line;		/* 1-based line */
	bool bol;		/* first token of its line */
	int64_t ival;		/* TK_INT */
	double fval;		/* TK_FLOAT */
	struct token *next;	/* the EOF token points to itself */
};

/* Syntax tree of expressions; calls are resolved while parsing. */
enum node_kind {
	N_INT,			/* integer literal: ival */
	N_FLOAT,		/* float literal: fval */
	N_BOOL,			/* true or false: ival */
	N_NAME,			/* index variable or constant */
	N_LOAD,			/* tensor[args...] */
	N_UNARY,		/* op(args[0]) */
	N_BINARY,		/* args[0] op args[1] */
	N_CAST,			/* dtype(args[0]) */
	N_SELECT,		/* select(args[0], args[1], args[2]) */
	N_CLAMP,		/* clamp(args[0], args[1], args[2]) */
	N_REDUCE,		/* reducer(binds...) args[0] */
};

/* A reduction axis bound by a reducer: "name: extent". */
struct binder {
	struct token *tok;	/* its name */
	const char *name;
	int64_t extent;
};

struct node {
	enum node_kind kind;
	struct token *tok;	/* operator, name or literal: messages point here */
	struct token *start;	/* first token of the expression */
	const char *name;	/* N_NAME, N_LOAD */
	int64_t ival;
	double fval;
	ts_op op;		/* N_UNARY, N_BINARY */
	ts_dtype dtype;		/* N_CAST */
	ts_reducer reducer;	/* N_REDUCE */
	int nargs;
	struct node **args;
	int nbinds;		/* N_REDUCE */
	struct binder *binds;
	int height;		/* 1 for a leaf, else 1 + its tallest operand */
};

/* A spatial axis of a stage, or a dimension of an input. */
struct dim {
	struct token *tok;	/* axis name, or the dimension's expression */
	const char *name;	/* NULL for an input dimension */
	int64_t extent;
};

/* A declared tensor: an input or a stage. */
struct decl {
	struct token *tok;	/* its name */
	const char *name;
	bool is_input;
	bool is_weight;		/* an input declared "weight" */
	bool is_output;
	bool typed;		/* ": dtype" given after the axes */
	ts_dtype dtype;		/* inputs, typed stages */
	int ndim;
	struct dim *dims;
	struct node *body;	/* stages */
	ts_vec deps;		/* struct decl: stages and inputs read */
	int mark;		/* ordering: 0 unseen, 1 on the path, 2 done */
	bool used;		/* reached from an output */
	ts_tensor *tensor;	/* once built */
};

/* A constant: "let name = value". */
struct let {
	struct token *tok;
	const char *name;
	int64_t value;
};

struct parser {
	ts_ctx *ctx;
	const char *file;	/* the name used in messages */
	const char *src;	/* the whole source, NUL terminated */
	struct token *tok;	/* the current token */
	struct token *prev;	/* the last token consumed, or NULL */
	ts_vec lets;		/* struct let, in order */
	ts_vec decls;		/* struct decl, in order */
	int depth;		/* current nesting, at most MAX_NESTING */
};

/* Messages. */

/* Format into "p"'s context the message "msg" of "kind" at "loc", with the
 * source line and a caret; return the text. */
static char *format_at(struct parser *p, const char *loc, const char *kind,
	const char *msg)
{
	const char *bol = loc, *eol = loc, *s;
	int line = 1;
	ts_buf b;

	while (bol > p->src && bol[-1] != '\n')
		bol--;
	while (*eol && *eol != '\n' && *eol != '\r')
		eol++;
	for (s = p->src; s < bol; s++)
		line += *s == '\n';
	ts_buf_init(&b);
	ts_buf_printf(&b, "%s:%d:%d: %s: %s\n%.*s\n", p->file, line,
		(int)(loc - bol) + 1, kind, msg, (int)(eol - bol), bol);
	for (s = bol; s < loc; s++)
		ts_buf_putc(&b, *s == '\t' ? '\t' : ' ');
	ts_buf_putc(&b, '^');
	return b.s;
}

/* Set the error of "p" to "fmt" at the source position "loc". */
__attribute__((format(printf, 3, 4)))
static void error_at(struct parser *p, const char *loc, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = ts_vasprintf(fmt, ap);
	va_end(ap);
	ts_ctx_set_error(p->ctx, "%s", format_at(p, loc, "error", msg));
}

/* Report the error a constructor left in the context at token "t". */
static void api_error_at(struct parser *p, struct token *t)
{
	const char *msg = ts_ctx_error(p->ctx);

	error_at(p, t->loc, "%s", msg ? msg : "invalid declaration");
}

/* Append a one-line warning "msg" at token "t" to the context. */
static void warn_at(struct parser *p, struct token *t, const char *msg)
{
	char *full = format_at(p, t->loc, "warning", msg);

	ts_ctx_warn(p->ctx, "%.*s", (int)strcspn(full, "\n"), full);
}

/* Lexer. */

/* Return a new token of "kind" covering "len" bytes at "loc". */
static struct token *token_new(enum tok_kind kind, const char *loc, int len,
	int line, bool bol)
{
	struct token *t = ts_new(struct token);

	t->kind = kind;
	t->loc = loc;
	t->len = len;
	t->line = line;
	t->bol = bol;
	return t;
}

static const char *const puncts[] = {
	"//", "<=", ">=", "==", "!=", "&&", "||",
	"[", "]", "(", ")", ",", ":", "=", "+", "-", "*", "/", "%", "<", ">",
	"!",
};

/* Return the length of the punctuator at "s", or 0. */
static int punct_len(const char *s)
{
	for (size_t i = 0; i < sizeof(puncts) / sizeof(puncts[0]); i++) {
		size_t n = strlen(puncts[i]);
		if (strncmp(s, puncts[i], n) == 0)
			return (int)n;
	}
	return 0;
}

/* Read the number at "t"->loc into "t", setting its length and kind. */
static bool lex_number(struct parser *p, struct token *t)
{
	const char *s = t->loc, *end;
	bool is_float = false;

	while (isdigit((unsigned char)*s))
		s++;
	if (*s == '.') {
		is_float = true;
		for (s++; isdigit((unsigned char)*s); s++)
			;
	}
	if (*s == 'e' || *s == 'E') {
		is_float = true;
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!isdigit((unsigned char)*s))
			goto bad;
		while (isdigit((unsigned char)*s))
			s++;
	}
	if (isalnum((unsigned char)*s) || *s == '_' || *s == '.')
		goto bad;
	t->len = (int)(s - t->loc);
	errno = 0;
	if (is_float) {
		t->kind = TK_FLOAT;
		t->fval = strtod(t->loc, (char **)&end);
	} else {
		t->kind = TK_INT;
		t->ival = strtoll(t->loc, (char **)&end, 10);
	}
	if (errno == ERANGE && !is_float) {
		error_at(p, t->loc, "integer literal '%.*s' is too large",
			t->len, t->loc);
		return false;
	}
	return true;
bad:
	while (isalnum((unsigned char)*s) || *s == '_' || *s == '.')
		s++;
	error_at(p, t->loc, "malformed number '%.*s'", (int)(s - t->loc),
		t->loc);
	return false;
}

/* Return the token that starts at "s" (not a space or comment). */
static struct token *lex_one(struct parser *p, const char *s, int line,
	bool bol)
{
	struct token *t = token_new(TK_PUNCT, s, 0, line, bol);
	int n;

	if (isdigit((unsigned char)*s) ||
	    (*s == '.' && isdigit((unsigned char)s[1])))
		return lex_number(p, t) ? t : NULL;
	if (isalpha((unsigned char)*s) || *s == '_') {
		t->kind = TK_IDENT;
		while (isalnum((unsigned char)s[t->len]) || s[t->len] == '_' ||
		    (s[t->len] == '.' &&
		    (isalpha((unsigned char)s[t->len + 1]) ||
		    s[t->len + 1] == '_')))
			t->len++;
		return t;
	}
	if ((n = punct_len(s)) > 0) {
		t->len = n;
		return t;
	}
	if (isprint((unsigned char)*s))
		error_at(p, s, "unexpected character '%c'", *s);
	else
		error_at(p, s, "unexpected byte 0x%02x", (unsigned char)*s);
	return NULL;
}

/* Return the tokens of the source of "p", ending with EOF, or NULL. */
static struct token *tokenize(struct parser *p)
{
	struct token head = { 0 }, *cur = &head;
	const char *s = p->src;
	bool bol = true;
	int line = 1;

	while (*s) {
		if (*s == '\n') {
			line++;
			bol = true;
			s++;
		} else if (isspace((unsigned char)*s)) {
			s++;
		} else if (*s == '#') {
			while (*s && *s != '\n')
				s++;
		} else {
			cur = cur->next = lex_one(p, s, line, bol);
			if (!cur)
				return NULL;
			s += cur->len;
			bol = false;
		}
	}
	cur = cur->next = token_new(TK_EOF, s, 0, line, true);
	cur->next = cur;
	return head.next;
}

/* Parser helpers. */

/* Whether token "t" is the punctuator or word "s". */
static bool equal(const struct token *t, const char *s)
{
	return t->kind != TK_EOF && (int)strlen(s) == t->len &&
		strncmp(t->loc, s, t->len) == 0;
}

/* Return the text of token "t" as a new string. */
static char *tok_text(const struct token *t)
{
	return ts_strndup(t->loc, t->len);
}

/* Describe "t" for a message: its text in quotes, or the end of file. */
static const char *tok_desc(const struct token *t)
{
	if (t->kind == TK_EOF)
		return "the end of the file";
	return ts_asprintf("'%.*s'", t->len, t->loc);
}

/* Move "p" to its next token. */
static void advance(struct parser *p)
{
	p->prev = p->tok;
	p->tok = p->tok->next;
}

/* Consume the token "s" of "p" if it is the current one. */
static bool consume(struct parser *p, const char *s)
{
	if (!equal(p->tok, s))
		return false;
	advance(p);
	return true;
}

/* Report that "what" was expected at the current token of "p".  When the
 * current token starts a new line, point just after the previous one. */
static void *expected(struct parser *p, const char *what)
{
	struct token *t = p->tok, *q = p->prev;

	if (q && t->kind == TK_EOF)
		error_at(p, q->loc + q->len, "expected %s before the end of "
			"the file", what);
	else if (q && t->line > q->line)
		error_at(p, q->loc + q->len, "expected %s at the end of the "
			"line", what);
	else
		error_at(p, t->loc, "expected %s before %s", what, tok_desc(t));
	return NULL;
}

/* Consume the punctuator "s", or report it missing. */
static bool expect(struct parser *p, const char *s)
{
	if (consume(p, s))
		return true;
	expected(p, ts_asprintf("'%s'", s));
	return false;
}

/* Consume "close", which matches "open"; "what" is what was expected
 * instead of the current token. */
static bool expect_close(struct parser *p, struct token *open,
	const char *close, const char *what)
{
	if (consume(p, close))
		return true;
	if (p->tok->kind == TK_EOF)
		error_at(p, open->loc, "unterminated '%.*s': no matching '%s' "
			"before the end of the file", open->len, open->loc,
			close);
	else
		expected(p, what);
	return false;
}

/* Consume an identifier naming "what" and return its token, or NULL. */
static struct token *expect_ident(struct parser *p, const char *what)
{
	struct token *t = p->tok;

	if (t->kind != TK_IDENT)
		return expected(p, what);
	advance(p);
	return t;
}

/* Enter one more level of nesting at token "t" of "p", or report that
 * the input nests too deeply. */
static bool nest(struct parser *p, struct token *t)
{
	if (++p->depth <= MAX_NESTING)
		return true;
	error_at(p, t->loc, "expression nested too deeply (more than %d "
		"levels of parentheses, brackets, unary operators, calls or "
		"reducers)", MAX_NESTING);
	return false;
}

/* Leave the level of nesting entered last in "p"; return "ok". */
static bool unnest(struct parser *p, bool ok)
{
	p->depth--;
	return ok;
}

/* Constant expressions (lets and extents), evaluated while parsing. */

/* Return the constant "name" declared so far in "p", or NULL. */
static struct let *find_let(struct parser *p, const char *name)
{
	for (int i = 0; i < p->lets.n; i++) {
		struct let *l = p->lets.v[i];
		if (strcmp(l->name, name) == 0)
			return l;
	}
	return NULL;
}

static bool cexpr(struct parser *p, int64_t *v);

/* cprimary = int | ident | "(" cexpr ")" */
static bool cprimary(struct parser *p, int64_t *v)
{
	struct token *t = p->tok;
	struct let *l;

	if (t->kind == TK_INT) {
		advance(p);
		*v = t->ival;
		return true;
	}
	if (t->kind == TK_IDENT) {
		advance(p);
		if (!(l = find_let(p, tok_text(t)))) {
			error_at(p, t->loc, "unknown constant '%.*s'",
				t->len, t->loc);
			return false;
		}
		*v = l->value;
		return true;
	}
	if (equal(t, "(")) {
		advance(p);
		if (!nest(p, t))
			return false;
		return unnest(p, cexpr(p, v) &&
			expect_close(p, t, ")", "')' or an operator"));
	}
	if (t->kind == TK_FLOAT) {
		error_at(p, t->loc, "expected an integer constant, got %s",
			tok_desc(t));
		return false;
	}
	expected(p, "an integer constant");
	return false;
}

/* cunary = "-" cunary | cprimary */
static bool cunary(struct parser *p, int64_t *v)
{
	struct token *t = p->tok;

	if (!consume(p, "-"))
		return cprimary(p, v);
	if (!nest(p, t) || !unnest(p, cunary(p, v)))
		return false;
	if (*v == INT64_MIN) {
		error_at(p, t->loc, "integer overflow in a constant expression");
		return false;
	}
	*v = -*v;
	return true;
}

/* Apply "op" ("*", "//", "%", "+" or "-") to "*v" and "w" in 64 bits;
 * "t" is the operator's token. */
static bool cbinary(struct parser *p, struct token *t, int64_t *v, int64_t w)
{
	int64_t r;
	bool ovf = false;

	if ((equal(t, "//") || equal(t, "%")) && w == 0) {
		error_at(p, t->loc, "division by zero in a constant expression");
		return false;
	}
	if (equal(t, "*"))
		ovf = __builtin_mul_overflow(*v, w, &r);
	else if (equal(t, "+"))
		ovf = __builtin_add_overflow(*v, w, &r);
	else if (equal(t, "-"))
		ovf = __builtin_sub_overflow(*v, w, &r);
	else if (*v == INT64_MIN && w == -1)
		ovf = true;
	else if (equal(t, "//"))
		r = *v / w - ((*v % w != 0) && ((*v < 0) != (w < 0)));
	else
		r = *v % w + (((*v % w != 0) && ((*v < 0) != (w < 0))) ? w : 0);
	if (ovf) {
		error_at(p, t->loc, "integer overflow in a constant expression");
		return false;
	}
	*v = r;
	return true;
}

/* cterm = cunary { ("*" | "//" | "%") cunary } */
static bool cterm(struct parser *p, int64_t *v)
{
	int64_t w;

	if (!cunary(p, v))
		return false;
	while (equal(p->tok, "*") || equal(p->tok, "//") ||
	       equal(p->tok, "%") || equal(p->tok, "/")) {
		struct token *op = p->tok;
		if (equal(op, "/")) {
			error_at(p, op->loc, "constant expressions are "
				"integers: use '//' for division");
			return false;
		}
		advance(p);
		if (!cunary(p, &w) || !cbinary(p, op, v, w))
			return false;
	}
	return true;
}

/* cexpr = cterm { ("+" | "-") cterm } */
static bool cexpr(struct parser *p, int64_t *v)
{
	int64_t w;

	if (!cterm(p, v))
		return false;
	while (equal(p->tok, "+") || equal(p->tok, "-")) {
		struct token *op = p->tok;
		advance(p);
		if (!cterm(p, &w) || !cbinary(p, op, v, w))
			return false;
	}
	return true;
}

/* Expressions. */

/* Return a node of "kind" at "tok", starting at "start", with room for
 * "nargs" operands. */
static struct node *node_new(enum node_kind kind, struct token *tok,
	struct token *start, int nargs)
{
	struct node *n = ts_new(struct node);

	n->kind = kind;
	n->tok = tok;
	n->start = start;
	n->nargs = nargs;
	n->args = ts_new_array(struct node *, nargs ? nargs : 1);
	n->height = 1;
	return n;
}

/* Set the height of "n" from its operands, or report at its token that
 * the expression is too tall; return "n" or NULL. */
static struct node *node_done(struct parser *p, struct node *n)
{
	for (int i = 0; i < n->nargs; i++)
		n->height = TS_MAX(n->height, n->args[i]->height + 1);
	if (n->height <= MAX_HEIGHT)
		return n;
	error_at(p, n->tok->loc, "expression too deep (more than %d nested "
		"operations)", MAX_HEIGHT);
	return NULL;
}

static struct node *expr(struct parser *p);

/* Parse expressions separated by commas up to "close", which matches
 * "open", into "out". */
static bool expr_list(struct parser *p, struct token *open, const char *close,
	ts_vec *out)
{
	const char *what = ts_asprintf("',' or '%s'", close);

	if (consume(p, close))
		return true;
	for (;;) {
		struct node *e = expr(p);
		if (!e)
			return false;
		ts_vec_push(out, e);
		if (consume(p, ","))
			continue;
		return expect_close(p, open, close, what);
	}
}

/* A node of "kind" over the expressions in "v". */
static struct node *node_from_vec(struct parser *p, enum node_kind kind,
	struct token *tok, ts_vec *v)
{
	struct node *n = node_new(kind, tok, tok, v->n);

	for (int i = 0; i < v->n; i++)
		n->args[i] = v->v[i];
	return node_done(p, n);
}

/* load = ident "[" [ expr { "," expr } ] "]" */
static struct node *load(struct parser *p)
{
	struct token *name = p->tok, *open;
	ts_vec idx = { 0 };
	struct node *n;

	advance(p);
	open = p->tok;
	advance(p);
	if (!nest(p, open) || !unnest(p, expr_list(p, open, "]", &idx)))
		return NULL;
	if (!(n = node_from_vec(p, N_LOAD, name, &idx)))
		return NULL;
	n->name = tok_text(name);
	return n;
}

/* The functions a call may name, besides dtypes. */
static const struct func {
	const char *name;
	enum node_kind kind;
	int arity;
	ts_op op;
} funcs[] = {
	{ "exp", N_UNARY, 1, TS_OP_EXP },
	{ "log", N_UNARY, 1, TS_OP_LOG },
	{ "sqrt", N_UNARY, 1, TS_OP_SQRT },
	{ "rsqrt", N_UNARY, 1, TS_OP_RSQRT },
	{ "tanh", N_UNARY, 1, TS_OP_TANH },
	{ "sigmoid", N_UNARY, 1, TS_OP_SIGMOID },
	{ "erf", N_UNARY, 1, TS_OP_ERF },
	{ "abs", N_UNARY, 1, TS_OP_ABS },
	{ "floor", N_UNARY, 1, TS_OP_FLOOR },
	{ "round", N_UNARY, 1, TS_OP_ROUND },
	{ "ceil", N_UNARY, 1, TS_OP_CEIL },
	{ "sign", N_UNARY, 1, TS_OP_SIGN },
	{ "sin", N_UNARY, 1, TS_OP_SIN },
	{ "cos", N_UNARY, 1, TS_OP_COS },
	{ "tan", N_UNARY, 1, TS_OP_TAN },
	{ "asin", N_UNARY, 1, TS_OP_ASIN },
	{ "acos", N_UNARY, 1, TS_OP_ACOS },
	{ "atan", N_UNARY, 1, TS_OP_ATAN },
	{ "sinh", N_UNARY, 1, TS_OP_SINH },
	{ "cosh", N_UNARY, 1, TS_OP_COSH },
	{ "asinh", N_UNARY, 1, TS_OP_ASINH },
	{ "acosh", N_UNARY, 1, TS_OP_ACOSH },
	{ "atanh", N_UNARY, 1, TS_OP_ATANH },
	{ "isnan", N_UNARY, 1, TS_OP_ISNAN },
	{ "isinf", N_UNARY, 1, TS_OP_ISINF },
	{ "min", N_BINARY, 2, TS_OP_MIN },
	{ "max", N_BINARY, 2, TS_OP_MAX },
	{ "pow", N_BINARY, 2, TS_OP_POW },
	{ "select", N_SELECT, 3, 0 },
	{ "clamp", N_CLAMP, 3, 0 },
};

/* Return the function named by token "t", or NULL; a dtype name is a cast
 * and sets "*cast". */
static const struct func *find_func(const struct token *t, ts_dtype *cast)
{
	static const struct func cast_func = { "cast", N_CAST, 1, 0 };
	char *name = tok_text(t);

	if (ts_dtype_from_name(name, cast) == TS_OK)
		return &cast_func;
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		if (strcmp(funcs[i].name, name) == 0)
			return &funcs[i];
	return NULL;
}

/* call = ident "(" [ expr { "," expr } ] ")" */
static struct node *call(struct parser *p)
{
	struct token *name = p->tok, *open;
	const struct func *f;
	ts_vec args = { 0 };
	struct node *n;
	ts_dtype t = TS_F32;

	if (!(f = find_func(name, &t))) {
		error_at(p, name->loc, "unknown function '%.*s'", name->len,
			name->loc);
		return NULL;
	}
	advance(p);
	open = p->tok;
	advance(p);
	if (!nest(p, open) || !unnest(p, expr_list(p, open, ")", &args)))
		return NULL;
	if (args.n != f->arity) {
		error_at(p, name->loc, "'%.*s' takes %d argument%s, %d given",
			name->len, name->loc, f->arity, f->arity == 1 ? "" : "s",
			args.n);
		return NULL;
	}
	if (!(n = node_from_vec(p, f->kind, name, &args)))
		return NULL;
	n->op = f->op;
	n->dtype = t;
	return n;
}

/* Whether the current token starts a reducer: "sum(" or "prod(", or
 * "max(" and "min(" followed by "ident :". */
static bool at_reduce(struct parser *p, ts_reducer *r)
{
	struct token *t = p->tok, *u = t->next;

	if (t->kind != TK_IDENT || !equal(t->next, "("))
		return false;
	for (int i = 0; i < TS_RED_COUNT; i++) {
		if (!equal(t, ts_reducer_name(i)))
			continue;
		*r = i;
		if (i == TS_RED_SUM || i == TS_RED_PROD)
			return true;
		return u->next->kind == TK_IDENT && equal(u->next->next, ":");
	}
	return false;
}

/* binder = ident ":" cexpr */
static bool binder(struct parser *p, struct binder *b)
{
	if (p->tok->kind != TK_IDENT || !equal(p->tok->next, ":")) {
		expected(p, "a reduction axis 'name: extent'");
		return false;
	}
	b->tok = p->tok;
	b->name = tok_text(b->tok);
	advance(p);
	advance(p);
	return cexpr(p, &b->extent);
}

/* reduce = ("sum" | "max" | "min" | "prod")
 *          "(" binder { "," binder } ")" expr */
static struct node *reduce(struct parser *p, ts_reducer r)
{
	struct token *name = p->tok, *open;
	ts_vec binds = { 0 };
	struct node *n;

	if (!nest(p, name))
		return NULL;
	advance(p);
	open = p->tok;
	advance(p);
	do {
		struct binder *b = ts_new(struct binder);
		if (!binder(p, b))
			return NULL;
		ts_vec_push(&binds, b);
	} while (consume(p, ","));
	if (!expect_close(p, open, ")", "',' or ')'"))
		return NULL;
	n = node_new(N_REDUCE, name, name, 1);
	n->reducer = r;
	n->nbinds = binds.n;
	n->binds = ts_new_array(struct binder, binds.n);
	for (int i = 0; i < binds.n; i++)
		n->binds[i] = *(struct binder *)binds.v[i];
	if (!unnest(p, (n->args[0] = expr(p)) != NULL))
		return NULL;
	return node_done(p, n);
}

/* A literal or a name standing alone: "true", "false", "inf", "nan" or an
 * index variable or constant. */
static struct node *word(struct parser *p)
{
	struct token *t = p->tok;
	struct node *n;

	advance(p);
	if (equal(t, "true") || equal(t, "false")) {
		n = node_new(N_BOOL, t, t, 0);
		n->ival = equal(t, "true");
	} else if (equal(t, "inf") || equal(t, "nan")) {
		n = node_new(N_FLOAT, t, t, 0);
		n->fval = equal(t, "inf") ? INFINITY : NAN;
	} else {
		n = node_new(N_NAME, t, t, 0);
		n->name = tok_text(t);
	}
	return n;
}

/* primary = "(" expr ")" | int | float | reduce | call | load | word */
static struct node *primary(struct parser *p)
{
	struct token *t = p->tok;
	struct node *n;
	ts_reducer r;

	if (equal(t, "(")) {
		advance(p);
		if (!nest(p, t) || !unnest(p, (n = expr(p)) &&
		    expect_close(p, t, ")", "')' or an operator")))
			return NULL;
		return n;
	}
	if (t->kind == TK_INT || t->kind == TK_FLOAT) {
		advance(p);
		n = node_new(t->kind == TK_INT ? N_INT : N_FLOAT, t, t, 0);
		n->ival = t->ival;
		n->fval = t->kind == TK_INT ? (double)t->ival : t->fval;
		return n;
	}
	if (t->kind != TK_IDENT)
		return expected(p, "an expression");
	if (at_reduce(p, &r))
		return reduce(p, r);
	if (equal(t->next, "("))
		return call(p);
	if (equal(t->next, "["))
		return load(p);
	return word(p);
}

/* unary = ("-" | "!") unary | primary */
static struct node *unary(struct parser *p)
{
	struct token *t = p->tok;
	struct node *n;

	if (!equal(t, "-") && !equal(t, "!"))
		return primary(p);
	advance(p);
	n = node_new(N_UNARY, t, t, 1);
	n->op = equal(t, "-") ? TS_OP_NEG : TS_OP_NOT;
	if (!nest(p, t) || !unnest(p, (n->args[0] = unary(p)) != NULL))
		return NULL;
	return node_done(p, n);
}

/* The binary operators of one precedence level. */
struct binop {
	const char *text;
	ts_op op;
};

static const struct binop mul_ops[] = {
	{ "*", TS_OP_MUL }, { "/", TS_OP_DIV }, { "//", TS_OP_FLOORDIV },
	{ "%", TS_OP_MOD }, { NULL, 0 },
};
static const struct binop add_ops[] = {
	{ "+", TS_OP_ADD }, { "-", TS_OP_SUB }, { NULL, 0 },
};
static const struct binop cmp_ops[] = {
	{ "<", TS_OP_LT }, { "<=", TS_OP_LE }, { ">", TS_OP_GT },
	{ ">=", TS_OP_GE }, { "==", TS_OP_EQ }, { "!=", TS_OP_NE },
	{ NULL, 0 },
};
static const struct binop and_ops[] = { { "&&", TS_OP_AND }, { NULL, 0 } };
static const struct binop or_ops[] = { { "||", TS_OP_OR }, { NULL, 0 } };

/* Return the operator of "ops" that token "t" spells, or NULL. */
static const struct binop *match_op(const struct binop *ops,
	const struct token *t)
{
	for (; ops->text; ops++)
		if (equal(t, ops->text))
			return ops;
	return NULL;
}

/* Parse a left-associative chain of the operators "ops" over operands
 * read by "operand". */
static struct node *chain(struct parser *p, const struct binop *ops,
	struct node *(*operand)(struct parser *))
{
	struct token *start = p->tok;
	const struct binop *b;
	struct node *n = operand(p), *m;

	while (n && (b = match_op(ops, p->tok))) {
		m = node_new(N_BINARY, p->tok, start, 2);
		m->op = b->op;
		m->args[0] = n;
		advance(p);
		if (!(m->args[1] = operand(p)) || !(n = node_done(p, m)))
			return NULL;
	}
	return n;
}

/* mul = unary { ("*" | "/" | "//" | "%") unary } */
static struct node *mul(struct parser *p)
{
	return chain(p, mul_ops, unary);
}

/* add = mul { ("+" | "-") mul } */
static struct node *add(struct parser *p)
{
	return chain(p, add_ops, mul);
}

/* cmp = add { ("<" | "<=" | ">" | ">=" | "==" | "!=") add } */
static struct node *cmp(struct parser *p)
{
	return chain(p, cmp_ops, add);
}

/* and = cmp { "&&" cmp } */
static struct node *and(struct parser *p)
{
	return chain(p, and_ops, cmp);
}

/* expr = and { "||" and } */
static struct node *expr(struct parser *p)
{
	return chain(p, or_ops, and);
}

/* Statements. */

/* Return the input or stage "name" of "p", or NULL. */
static struct decl *find_decl(struct parser *p, const char *name)
{
	for (int i = 0; i < p->decls.n; i++) {
		struct decl *d = p->decls.v[i];
		if (strcmp(d->name, name) == 0)
			return d;
	}
	return NULL;
}

/* Return "first defined at line:col" for the token "t". */
static const char *first_defined(struct parser *p, struct token *t)
{
	int line = 1, col = 1;

	for (const char *s = p->src; s < t->loc; s++) {
		if (*s == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	return ts_asprintf("first defined at %d:%d", line, col);
}

/* Return the declaration named by the identifier token "t", which must
 * not name another tensor. */
static struct decl *decl_new(struct parser *p, struct token *t)
{
	struct decl *d = ts_new(struct decl);
	struct decl *old;

	d->tok = t;
	d->name = tok_text(t);
	if ((old = find_decl(p, d->name))) {
		error_at(p, t->loc, "redefinition of tensor '%s' (%s)",
			d->name, first_defined(p, old->tok));
		return NULL;
	}
	return d;
}

/* Words that cannot name a constant or an axis: they are literals. */
static bool is_reserved(const struct token *t)
{
	return equal(t, "true") || equal(t, "false") || equal(t, "inf") ||
		equal(t, "nan");
}

/* let_decl = "let" ident "=" cexpr */
static bool let_decl(struct parser *p)
{
	struct let *l = ts_new(struct let), *old;

	advance(p);
	if (!(l->tok = expect_ident(p, "a constant name")))
		return false;
	l->name = tok_text(l->tok);
	if (is_reserved(l->tok)) {
		error_at(p, l->tok->loc, "'%s' is reserved and cannot name "
			"a constant", l->name);
		return false;
	}
	if ((old = find_let(p, l->name))) {
		error_at(p, l->tok->loc, "redefinition of constant '%s' (%s)",
			l->name, first_defined(p, old->tok));
		return false;
	}
	if (!expect(p, "=") || !cexpr(p, &l->value))
		return false;
	ts_vec_push(&p->lets, l);
	return true;
}

/* dtype = "bool" | "i8" | "u8" | "i16" | "u16" | "i32" | "u32" | "i64"
 *       | "u64" | "f16" | "bf16" | "f32" | "f64" */
static bool dtype(struct parser *p, ts_dtype *t)
{
	struct token *tok = p->tok;

	if (tok->kind != TK_IDENT) {
		expected(p, "a dtype");
		return false;
	}
	if (ts_dtype_from_name(tok_text(tok), t) < 0) {
		error_at(p, tok->loc, "unknown dtype '%.*s' (one of bool i8 "
			"u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64)",
			tok->len, tok->loc);
		return false;
	}
	advance(p);
	return true;
}

/* Store the dimensions in "v" (struct dim) into "d". */
static void decl_set_dims(struct decl *d, ts_vec *v)
{
	d->ndim = v->n;
	d->dims = ts_new_array(struct dim, v->n ? v->n : 1);
	for (int i = 0; i < v->n; i++)
		d->dims[i] = *(struct dim *)v->v[i];
}

/* input_decl = ( "input" | "weight" ) ident ":" dtype
 *		"[" [ cexpr { "," cexpr } ] "]" */
static bool input_decl(struct parser *p)
{
	struct token *name, *open;
	ts_vec dims = { 0 };
	struct decl *d;
	bool weight = equal(p->tok, "weight");

	advance(p);
	if (!(name = expect_ident(p, "a tensor name")) ||
	    !(d = decl_new(p, name)))
		return false;
	d->is_input = true;
	d->is_weight = weight;
	if (!expect(p, ":") || !dtype(p, &d->dtype))
		return false;
	open = p->tok;
	if (!expect(p, "["))
		return false;
	if (!consume(p, "]")) {
		do {
			struct dim *m = ts_new(struct dim);
			m->tok = p->tok;
			if (!cexpr(p, &m->extent))
				return false;
			ts_vec_push(&dims, m);
		} while (consume(p, ","));
		if (!expect_close(p, open, "]", "',' or ']'"))
			return false;
	}
	decl_set_dims(d, &dims);
	ts_vec_push(&p->decls, d);
	return true;
}

/* Check that the axis "t" is not already an axis in "dims" or a constant. */
static bool check_axis_name(struct parser *p, struct token *t, ts_vec *dims)
{
	const char *name = tok_text(t);
	struct let *l;

	for (int i = 0; i < dims->n; i++) {
		struct dim *m = dims->v[i];
		if (strcmp(m->name, name) == 0) {
			error_at(p, t->loc, "redefinition of axis '%s' (%s)",
				name, first_defined(p, m->tok));
			return false;
		}
	}
	if ((l = find_let(p, name))) {
		error_at(p, t->loc, "axis '%s' has the name of a constant (%s)",
			name, first_defined(p, l->tok));
		return false;
	}
	if (is_reserved(t)) {
		error_at(p, t->loc, "'%s' is reserved and cannot name an axis",
			name);
		return false;
	}
	return true;
}

/* axis = ident ":" cexpr */
static bool axis(struct parser *p, ts_vec *dims)
{
	struct dim *m = ts_new(struct dim);

	if (!(m->tok = expect_ident(p, "an axis 'name: extent'")) ||
	    !check_axis_name(p, m->tok, dims))
		return false;
	m->name = tok_text(m->tok);
	if (!expect(p, ":") || !cexpr(p, &m->extent))
		return false;
	ts_vec_push(dims, m);
	return true;
}

/* stage_decl = [ "output" ] ident "[" [ axis { "," axis } ] "]"
 *              [ ":" dtype ] "=" expr */
static bool stage_decl(struct parser *p)
{
	struct token *name, *open;
	bool is_output = false;
	ts_vec dims = { 0 };
	struct decl *d;

	if (equal(p->tok, "output") && !equal(p->tok->next, "[")) {
		is_output = true;
		advance(p);
	}
	if (!(name = expect_ident(p, "a statement")) ||
	    !(d = decl_new(p, name)))
		return false;
	d->is_output = is_output;
	open = p->tok;
	if (!expect(p, "["))
		return false;
	if (!consume(p, "]")) {
		do {
			if (!axis(p, &dims))
				return false;
		} while (consume(p, ","));
		if (!expect_close(p, open, "]", "',' or ']'"))
			return false;
	}
	decl_set_dims(d, &dims);
	if (consume(p, ":")) {
		d->typed = true;
		if (!dtype(p, &d->dtype))
			return false;
	}
	if (!expect(p, "=") || !(d->body = expr(p)))
		return false;
	ts_vec_push(&p->decls, d);
	return true;
}

/* statement = let_decl | input_decl | stage_decl, alone on its line(s).
 * "let", "input", "weight" and "output" are keywords unless a "[" follows
 * them, so that a stage may still be called "input". */
static bool statement(struct parser *p)
{
	struct token *t = p->tok;
	bool ok;

	if (equal(t, "let") && !equal(t->next, "["))
		ok = let_decl(p);
	else if ((equal(t, "input") || equal(t, "weight")) &&
	    !equal(t->next, "["))
		ok = input_decl(p);
	else
		ok = stage_decl(p);
	if (ok && !p->tok->bol) {
		error_at(p, p->tok->loc, "unexpected %s after the end of the "
			"statement (one statement per line)", tok_desc(p->tok));
		return false;
	}
	return ok;
}

/* program = { statement } */
static bool program(struct parser *p)
{
	while (p->tok->kind != TK_EOF)
		if (!statement(p))
			return false;
	return true;
}

/* Dependencies and order. */

/* Add to "d"->deps the tensors read by "n", checking that they exist. */
static bool collect_deps(struct parser *p, struct decl *d, struct node *n)
{
	struct decl *u;
	bool seen = false;

	if (n->kind == N_LOAD) {
		if (!(u = find_decl(p, n->name))) {
			error_at(p, n->tok->loc, "unknown tensor '%s'", n->name);
			return false;
		}
		for (int i = 0; i < d->deps.n; i++)
			seen |= d->deps.v[i] == u;
		if (!seen)
			ts_vec_push(&d->deps, u);
	}
	for (int i = 0; i < n->nargs; i++)
		if (!collect_deps(p, d, n->args[i]))
			return false;
	return true;
}

/* Report the cycle that closes at "d" on "path". */
static bool cycle_error(struct parser *p, ts_vec *path, struct decl *d)
{
	int i = 0;
	ts_buf b;

	while (path->v[i] != d)
		i++;
	ts_buf_init(&b);
	for (int j = i; j < path->n; j++)
		ts_buf_printf(&b, "%s -> ", ((struct decl *)path->v[j])->name);
	ts_buf_puts(&b, d->name);
	error_at(p, d->tok->loc, "cycle between stages: %s", b.s);
	return false;
}

/* Append the stages "d" reads, then "d", to "order"; "path" holds the
 * stages being visited. */
static bool order_visit(struct parser *p, struct decl *d, ts_vec *path,
	ts_vec *order)
{
	if (d->mark == 2 || d->is_input)
		return true;
	if (d->mark == 1)
		return cycle_error(p, path, d);
	d->mark = 1;
	ts_vec_push(path, d);
	for (int i = 0; i < d->deps.n; i++)
		if (!order_visit(p, d->deps.v[i], path, order))
			return false;
	path->n--;
	d->mark = 2;
	ts_vec_push(order, d);
	return true;
}

/* Mark "d" and every tensor it reads as used. */
static void mark_used(struct decl *d)
{
	if (d->used)
		return;
	d->used = true;
	for (int i = 0; i < d->deps.n; i++)
		mark_used(d->deps.v[i]);
}

/* Return the stages of "p" in an order where producers come first, or
 * NULL after an unknown tensor or a cycle. */
static ts_vec *order_stages(struct parser *p)
{
	ts_vec *order = ts_new(ts_vec), path = { 0 };

	for (int i = 0; i < p->decls.n; i++) {
		struct decl *d = p->decls.v[i];
		if (!d->is_input && !collect_deps(p, d, d->body))
			return NULL;
	}
	for (int i = 0; i < p->decls.n; i++)
		if (!order_visit(p, p->decls.v[i], &path, order))
			return NULL;
	return order;
}

/* Building. */

/* The state of building one stage body. */
struct builder {
	struct parser *p;
	ts_vec scope;		/* axes in scope, innermost last */
	ts_vec rnames;		/* names bound by any reducer of the stage */
};

/* Collect into "b" the names bound by the reducers in "n". */
static void collect_rnames(struct builder *b, struct node *n)
{
	if (n->kind == N_REDUCE)
		for (int i = 0; i < n->nbinds; i++)
			ts_vec_push(&b->rnames, (void *)n->binds[i].name);
	for (int i = 0; i < n->nargs; i++)
		collect_rnames(b, n->args[i]);
}

/* Return the innermost axis "name" in scope in "b", or NULL. */
static ts_axis *scope_find(struct builder *b, const char *name)
{
	for (int i = b->scope.n - 1; i >= 0; i--) {
		ts_axis *a = b->scope.v[i];
		if (strcmp(a->name, name) == 0)
			return a;
	}
	return NULL;
}

/* Return the expression for the name "n": an axis in scope or a constant. */
static ts_expr *build_name(struct builder *b, struct node *n)
{
	struct parser *p = b->p;
	ts_axis *a;
	struct let *l;

	if ((a = scope_find(b, n->name)))
		return ts_var(p->ctx, a);
	if ((l = find_let(p, n->name)))
		return ts_int(p->ctx, l->value);
	for (int i = 0; i < b->rnames.n; i++)
		if (strcmp(b->rnames.v[i], n->name) == 0) {
			error_at(p, n->tok->loc, "reduction axis '%s' is used "
				"outside its reducer", n->name);
			return NULL;
		}
	if (find_decl(p, n->name))
		error_at(p, n->tok->loc, "unknown index variable or constant "
			"'%s' ('%s' is a tensor: read it as %s[...])", n->name,
			n->name, n->name);
	else
		error_at(p, n->tok->loc, "unknown index variable or constant "
			"'%s'", n->name);
	return NULL;
}

/* Point the error of a failed load "n" of "t" with indices "idx" at the
 * offending index when there is one. */
static void load_error(struct builder *b, struct node *n, ts_tensor *t,
	ts_expr **idx)
{
	for (int i = 0; i < n->nargs && n->nargs == t->ndim; i++) {
		ts_expr *e = idx[i];
		if ((e->kind == TS_EXPR_INT && (e->ival < 0 ||
		    e->ival >= t->shape[i])) || e->kind == TS_EXPR_FLOAT ||
		    (!e->literal && !ts_dtype_is_int(e->dtype))) {
			api_error_at(b->p, n->args[i]->start);
			return;
		}
	}
	api_error_at(b->p, n->tok);
}

static ts_expr *build_expr(struct builder *b, struct node *n);

/* Return the load "n". */
static ts_expr *build_load(struct builder *b, struct node *n)
{
	struct decl *d = find_decl(b->p, n->name);
	ts_expr **idx = ts_new_array(ts_expr *, n->nargs + 1);
	ts_expr *e;

	for (int i = 0; i < n->nargs; i++)
		if (!(idx[i] = build_expr(b, n->args[i])))
			return NULL;
	if (!d || !d->tensor) {
		error_at(b->p, n->tok->loc, "unknown tensor '%s'", n->name);
		return NULL;
	}
	if (!(e = ts_load(b->p->ctx, d->tensor, n->nargs, idx)))
		load_error(b, n, d->tensor, idx);
	return e;
}

/* Bind the axes of the reducer "n" in "b"; return them, or NULL. */
static ts_axis **bind_axes(struct builder *b, struct node *n)
{
	struct parser *p = b->p;
	ts_axis **axes = ts_new_array(ts_axis *, n->nbinds);

	for (int i = 0; i < n->nbinds; i++) {
		struct binder *x = &n->binds[i];
		struct let *l = find_let(p, x->name);
		if (scope_find(b, x->name) || l || is_reserved(x->tok)) {
			error_at(p, x->tok->loc, "redefinition of axis '%s'%s",
				x->name, l ? " (it names a constant)" : "");
			return NULL;
		}
		if (!(axes[i] = ts_reduce_axis(p->ctx, x->name, x->extent))) {
			api_error_at(p, x->tok);
			return NULL;
		}
		ts_vec_push(&b->scope, axes[i]);
	}
	return axes;
}

/* Whether "e" reads one of the "n" axes "axes". */
static bool uses_axes(const ts_expr *e, int n, ts_axis *const *axes)
{
	if (!e)
		return false;
	if (e->kind == TS_EXPR_VAR) {
		for (int i = 0; i < n; i++)
			if (e->axis == axes[i])
				return true;
		return false;
	}
	for (int i = 0; e->kind == TS_EXPR_LOAD && i < e->nargs; i++)
		if (uses_axes(e->args[i], n, axes))
			return true;
	return uses_axes(e->a, n, axes) || uses_axes(e->b, n, axes) ||
		uses_axes(e->c, n, axes);
}

/* Warn about each term of the sum "body" (built from "n") that reads none
 * of the axes of the sum "red": the body of a reducer extends to the
 * right, so such a term is added once per instance of the reduction,
 * which is rarely what was meant. */
static void warn_loose_terms(struct builder *b, struct node *red,
	ts_axis *const *axes, struct node *n, const ts_expr *body)
{
	int64_t count = 1;
	char *term, *msg;

	if (n->kind == N_BINARY && (n->op == TS_OP_ADD || n->op == TS_OP_SUB) &&
	    body->kind == TS_EXPR_BINARY && body->op == n->op) {
		warn_loose_terms(b, red, axes, n->args[0], body->a);
		warn_loose_terms(b, red, axes, n->args[1], body->b);
		return;
	}
	if (uses_axes(body, red->nbinds, axes))
		return;
	for (int i = 0; i < red->nbinds; i++)
		count = red->binds[i].extent > 0 &&
			count <= INT64_MAX / red->binds[i].extent ?
			count * red->binds[i].extent : count;
	term = ts_expr_to_string(body);
	msg = ts_asprintf("'%s' reads no axis of this sum, yet is inside "
		"it (the body of a reducer extends to the right), so it is "
		"added %" PRId64 " times; write '(%s(%s: ...) ...) + %s' to "
		"add it once", term, count, ts_reducer_name(red->reducer),
		red->binds[0].name, term);
	warn_at(b->p, n->start, msg);
}

/* Return the reduction "n". */
static ts_expr *build_reduce(struct builder *b, struct node *n)
{
	ts_axis **axes = bind_axes(b, n);
	ts_expr *body, *e;

	if (!axes)
		return NULL;
	body = build_expr(b, n->args[0]);
	b->scope.n -= n->nbinds;
	if (!body)
		return NULL;
	e = ts_reduce(b->p->ctx, n->reducer, n->nbinds, axes, body);
	if (!e)
		api_error_at(b->p, n->tok);
	else if (n->reducer == TS_RED_SUM)
		warn_loose_terms(b, n, axes, n->args[0], body);
	return e;
}

/* Return the operation "n" applied to "a" (its built operands). */
static ts_expr *build_op(struct builder *b, struct node *n, ts_expr **a)
{
	ts_ctx *ctx = b->p->ctx;

	switch (n->kind) {
	case N_UNARY: return ts_unary(ctx, n->op, a[0]);
	case N_BINARY: return ts_binary(ctx, n->op, a[0], a[1]);
	case N_CAST: return ts_cast(ctx, n->dtype, a[0]);
	case N_SELECT: return ts_select(ctx, a[0], a[1], a[2]);
	case N_CLAMP: return ts_clamp(ctx, a[0], a[1], a[2]);
	default: return NULL;
	}
}

/* Return the expression for "n", or NULL with a message at its position. */
static ts_expr *build_expr(struct builder *b, struct node *n)
{
	ts_ctx *ctx = b->p->ctx;
	ts_expr *a[3], *e;

	switch (n->kind) {
	case N_INT: return ts_int(ctx, n->ival);
	case N_FLOAT: return ts_float(ctx, n->fval);
	case N_BOOL: return ts_const(ctx, TS_BOOL, (double)n->ival);
	case N_NAME: return build_name(b, n);
	case N_LOAD: return build_load(b, n);
	case N_REDUCE: return build_reduce(b, n);
	default: break;
	}
	for (int i = 0; i < n->nargs; i++)
		if (!(a[i] = build_expr(b, n->args[i])))
			return NULL;
	if (!(e = build_op(b, n, a)))
		api_error_at(b->p, n->tok);
	return e;
}

/* Report the error a constructor left for the tensor "d" of shape "shape"
 * at the dimension where its size in bytes ("elem" per element)
 * overflows, or else at its name. */
static void dim_error_at(struct parser *p, struct decl *d,
	const int64_t *shape, size_t elem)
{
	int k = ts_shape_overflow_dim(TS_MIN(d->ndim, TS_MAX_DIMS), shape,
		elem);

	api_error_at(p, k >= 0 ? d->dims[k].tok : d->tok);
}

/* Declare the input "d" as a placeholder. */
static bool build_input(struct parser *p, struct decl *d)
{
	int64_t shape[TS_MAX_DIMS];

	if (d->ndim > TS_MAX_DIMS) {
		error_at(p, d->tok->loc, "tensor '%s' has %d dimensions; at "
			"most %d are supported", d->name, d->ndim, TS_MAX_DIMS);
		return false;
	}
	for (int i = 0; i < d->ndim; i++)
		shape[i] = d->dims[i].extent;
	d->tensor = ts_placeholder(p->ctx, d->name, d->dtype, d->ndim, shape);
	if (d->tensor) {
		d->tensor->weight = d->is_weight;
		return true;
	}
	for (int i = 0; i < d->ndim; i++)
		if (shape[i] < 0) {
			api_error_at(p, d->dims[i].tok);
			return false;
		}
	dim_error_at(p, d, shape, ts_dtype_size(d->dtype));
	return false;
}

/* Declare the stage "d" through ts_compute. */
static bool build_stage(struct parser *p, struct decl *d)
{
	struct builder b = { p };
	ts_axis **axes = ts_new_array(ts_axis *, d->ndim + 1);
	ts_expr *body;

	for (int i = 0; i < d->ndim; i++) {
		axes[i] = ts_axis_new(p->ctx, d->dims[i].name,
			d->dims[i].extent);
		if (!axes[i]) {
			api_error_at(p, d->dims[i].tok);
			return false;
		}
		ts_vec_push(&b.scope, axes[i]);
	}
	collect_rnames(&b, d->body);
	if (!(body = build_expr(&b, d->body)))
		return false;
	if (d->typed)
		d->tensor = ts_compute_typed(p->ctx, d->name, d->dtype,
			d->ndim, axes, body);
	else
		d->tensor = ts_compute(p->ctx, d->name, d->ndim, axes, body);
	if (!d->tensor) {
		int64_t shape[TS_MAX_DIMS];
		for (int i = 0; i < d->ndim && i < TS_MAX_DIMS; i++)
			shape[i] = d->dims[i].extent;
		dim_error_at(p, d, shape, ts_dtype_size(d->typed ? d->dtype :
			body->dtype));
		return false;
	}
	d->tensor->stage->line = d->tok->line;
	return true;
}

/* Position of the stage of "t" in "dag", for sorting outputs. */
static int stage_pos(const ts_dag *dag, const ts_tensor *t)
{
	return ts_dag_stage_index(dag, t->stage);
}

/* Sort the "n" outputs "outs" by the position of their stages in "dag". */
static void sort_outputs(const ts_dag *dag, ts_tensor **outs, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && stage_pos(dag, outs[j - 1]) >
		     stage_pos(dag, outs[j]); j--) {
			ts_tensor *t = outs[j];
			outs[j] = outs[j - 1];
			outs[j - 1] = t;
		}
}

/* Return where "p" declares stage "s", or the one "s" was moved out of
 * (which shares its line). */
static const char *stage_loc(struct parser *p, const ts_stage *s)
{
	for (int i = 0; i < p->decls.n; i++) {
		struct decl *d = p->decls.v[i];
		if (!d->is_input && d->tok->line == s->line)
			return d->tok->loc;
	}
	return p->src;
}

/* Check that each stage of "dag" prints within the nesting that "p"
 * reads, so that the printed DAG parses back. */
static bool check_printed_nesting(struct parser *p, const ts_dag *dag)
{
	for (int i = 0; i < dag->nstages; i++) {
		const ts_stage *s = dag->stages[i];
		int n = ts_expr_nesting(s->body);
		if (n <= MAX_NESTING)
			continue;
		error_at(p, stage_loc(p, s), "stage '%s' prints nested %d "
			"levels deep (more than %d levels of parentheses, "
			"brackets, unary operators, calls or reducers): it "
			"would not read back", s->name, n, MAX_NESTING);
		return false;
	}
	return true;
}

/* Return the DAG of the built declarations of "p".  Outputs are ordered
 * by when they are computed, so that printing the DAG and parsing it back
 * gives the same DAG. */
static ts_dag *make_dag(struct parser *p)
{
	ts_vec ins = { 0 }, outs = { 0 };
	ts_dag *dag;

	for (int i = 0; i < p->decls.n; i++) {
		struct decl *d = p->decls.v[i];
		if (d->is_input)
			ts_vec_push(&ins, d->tensor);
		else if (d->is_output)
			ts_vec_push(&outs, d->tensor);
	}
	dag = ts_dag_new(p->ctx, ins.n, (ts_tensor **)ins.v, outs.n,
		(ts_tensor **)outs.v);
	if (dag) {
		sort_outputs(dag, (ts_tensor **)outs.v, outs.n);
		dag = ts_dag_new(p->ctx, ins.n, (ts_tensor **)ins.v, outs.n,
			(ts_tensor **)outs.v);
	}
	if (!dag)
		api_error_at(p, ((struct decl *)p->decls.v[0])->tok);
	else if (!check_printed_nesting(p, dag))
		return NULL;
	return dag;
}

/* Warn about the stages of "p" that no output reads. */
static void warn_unused(struct parser *p)
{
	for (int i = 0; i < p->decls.n; i++) {
		struct decl *d = p->decls.v[i];
		if (d->is_output)
			mark_used(d);
	}
	for (int i = 0; i < p->decls.n; i++) {
		struct decl *d = p->decls.v[i];
		if (!d->is_input && !d->used)
			warn_at(p, d->tok, ts_asprintf("stage '%s' is not used "
				"by any output; it is left out of the DAG",
				d->name));
	}
}

/* Check that "p" declares an output. */
static bool check_has_output(struct parser *p)
{
	struct decl *first = NULL;

	for (int i = 0; i < p->decls.n; i++) {
		struct decl *d = p->decls.v[i];
		if (d->is_output)
			return true;
		if (!first && !d->is_input)
			first = d;
	}
	error_at(p, first ? first->tok->loc : p->src, "no output: mark "
		"at least one stage with 'output'");
	return false;
}

/* Requires: the statements of "p", parsed.  Produces: every tensor
 * declared through the API in dependency order, and the DAG. */
static ts_dag *build(struct parser *p)
{
	ts_vec *order;

	if (!check_has_output(p) || !(order = order_stages(p)))
		return NULL;
	for (int i = 0; i < p->decls.n; i++) {
		struct decl *d = p->decls.v[i];
		if (d->is_input && !build_input(p, d))
			return NULL;
	}
	for (int i = 0; i < order->n; i++)
		if (!build_stage(p, order->v[i]))
			return NULL;
	warn_unused(p);
	return make_dag(p);
}

/* Return the base name of "path" without its directory and extension. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *dot = strrchr(base, '.');

	if (!dot || dot == base)
		return ts_strdup(base);
	return ts_strndup(base, dot - base);
}

/* Parse "src", named "filename" in messages, into a DAG of "ctx". */
ts_dag *ts_parse_string(ts_ctx *ctx, const char *filename, const char *src)
{
	struct parser p = { ctx };
	ts_dag *dag;

	if (!ctx)
		return NULL;
	p.file = filename ? filename : "<string>";
	if (!src) {
		ts_ctx_set_error(ctx, "%s: no source text", p.file);
		return NULL;
	}
	p.src = src;
	if (!(p.tok = tokenize(&p)) || !program(&p) || !(dag = build(&p)))
		return NULL;
	dag->name = base_name(p.file);
	return dag;
}

/* Return the contents of the file "path", or NULL with an error. */
static char *read_file(ts_ctx *ctx, const char *path)
{
	size_t len;
	char *s = ts_read_file(path, &len);

	if (!s) {
		ts_ctx_set_error(ctx, "%s: cannot open: %s", path,
			strerror(errno));
		return NULL;
	}
	if (strlen(s) != len) {
		ts_ctx_set_error(ctx, "%s: the file contains a NUL byte", path);
		return NULL;
	}
	return s;
}

/* Parse the file "path" into a DAG of "ctx". */
ts_dag *ts_parse_file(ts_ctx *ctx, const char *path)
{
	char *src;

	if (!ctx)
		return NULL;
	if (!path) {
		ts_ctx_set_error(ctx, "no file to parse");
		return NULL;
	}
	if (!(src = read_file(ctx, path)))
		return NULL;
	return ts_parse_string(ctx, path, src);
}
