/* The differential corpus: for a range of seeds, a random declaration of
 * tests/corpus/gen.c is parsed, run in the reference interpreter, and
 * compiled through LLVM under the naive schedule, the static schedule and
 * two random schedules; every output must match the interpreter's
 * (integers exactly, floats within ts_array_close's tolerance).  Every
 * buffer lies against an inaccessible page, after or before it by the
 * seed and the schedule, so that a kernel that reads outside a buffer
 * (a load that a select or a && should have skipped) faults.
 *
 * Each case runs in a child process with a time limit, so that a crash
 * or a hang is counted as a failure of that case (and of the schedule it
 * was in) and the run goes on.  Every failure prints its seed, what
 * failed and the declaration; the test fails if any case fails.
 *
 * Environment:
 *   TS_CORPUS_SEEDS  number of seeds (default 300)
 *   TS_CORPUS_FIRST  first seed (default 0)
 *   TS_CORPUS_STYLE  only this writing style
 *   TS_CORPUS_FORM   "one" or "staged" instead of the seed's choice
 *   TS_CORPUS_ZERO   let some extents be 0
 *   TS_CORPUS_JOBS   cases run at once, 1 or 2 (default 2)
 *   TS_CORPUS_SAVE   a folder where each failing declaration is written
 *                    as seed-N.tsl, with its failures as comments, and
 *                    each failing schedule but the naive one as
 *                    seed-N-SCHEDULE.json (tessel run FILE --schedule
 *                    JSON --check replays it, without the fences that
 *                    catch a read outside a buffer)
 *   TS_CORPUS_SCHEDULE a schedule in JSON to run in place of the random
 *                    ones (with TS_CORPUS_FILES: to replay a saved
 *                    schedule, or a smaller one, with the fences; random1
 *                    runs it at -O3, random2 at -O0)
 *   TS_CORPUS_TIMEOUT seconds for one case (default 120)
 *   TS_CORPUS_FILES  .tsl files separated by ':' to check instead of
 *                    seeds (a reproducer); the seed of the inputs is the
 *                    one in a "# corpus seed N" line, else the position */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

#include "tests/common.h"
#include "tests/backends/fence.h"
#include "tests/backends/random_schedule.h"
#include "tests/corpus/gen.h"

#define NSCHED 4
#define MSG_MAX 600

static const char *const sched_name[NSCHED] = {
	"naive", "static", "random1", "random2",
};

/* The kinds of failure, in the order of the summary. */
enum fail_kind {
	F_PARSE, F_EVAL, F_SCHEDULE, F_LOWER, F_COMPILE, F_RUN, F_MISMATCH,
	F_CRASH, F_TIMEOUT, F_KIND_COUNT
};

static const char *const kind_name[F_KIND_COUNT] = {
	"parse error", "interpreter error", "no schedule", "lowering error",
	"compile error", "run error", "wrong answer", "crash", "timeout",
};

/* What the environment asks for. */
struct corpus_env {
	uint64_t first;
	int nseeds, jobs, timeout;
	ts_corpus_opts opts;
	const char *save;
	char *files[256];	/* instead of seeds when nfiles > 0 */
	int nfiles;
};

/* Write one report line "fmt" to the pipe "fd" (a child's). */
static void report(int fd, const char *fmt, ...)
{
	char line[MSG_MAX + 64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	/* One line per report: newlines of messages become spaces. */
	for (int i = 0; i < n; i++)
		if (line[i] == '\n')
			line[i] = ' ';
	line[n++] = '\n';
	if (write(fd, line, (size_t)n) < 0)
		_exit(3);
}

/* The error of "ctx", or a placeholder. */
static const char *err_of(ts_ctx *ctx)
{
	const char *e = ts_ctx_error(ctx);

	return e && *e ? e : "(no message)";
}

/* The schedule of "dag" in the JSON file "path", NULL with an error in
 * "ctx". */
static ts_schedule *replay(ts_ctx *ctx, const ts_dag *dag, const char *path)
{
	char text[65536];
	FILE *fp = fopen(path, "rb");
	size_t n;

	if (!fp) {
		ts_ctx_set_error(ctx, "cannot open %s", path);
		return NULL;
	}
	n = fread(text, 1, sizeof(text) - 1, fp);
	fclose(fp);
	text[n] = '\0';
	return ts_schedule_from_json(ctx, dag, text);
}

/* The schedule number "k" of "dag" for case "seed", NULL with an error in
 * "ctx". */
static ts_schedule *schedule_of(ts_ctx *ctx, const ts_dag *dag, int k,
	uint64_t seed)
{
	switch (k) {
	case 0:
		return ts_schedule_naive(ctx, dag);
	case 1: {
		ts_target *tg = ts_target_host(ctx);
		return tg ? ts_static_schedule(ctx, dag, tg) : NULL;
	}
	default: {
		const char *json = getenv("TS_CORPUS_SCHEDULE");
		if (json && *json)
			return replay(ctx, dag, json);
		return ts_random_schedule(ctx, dag, seed * 4 + (uint64_t)k,
			NULL);
	}
	}
}

/* The path of the saved schedule "k" of case "seed" in folder "save". */
static void schedule_path(char *path, size_t size, const char *save,
	uint64_t seed, int k)
{
	snprintf(path, size, "%s/seed-%llu-%s.json", save,
		(unsigned long long)seed, sched_name[k]);
}

/* Write "sch", schedule "k" of case "seed", into folder "save" (the
 * parent removes it if the schedule passes). */
static void save_schedule(const char *save, uint64_t seed, int k,
	const ts_schedule *sch)
{
	char path[4096];
	FILE *fp;

	schedule_path(path, sizeof(path), save, seed, k);
	if ((fp = fopen(path, "w"))) {
		fputs(ts_schedule_to_json(sch), fp);
		fclose(fp);
	}
}

/* Lower, compile and run "dag" under schedule "k" on "in" and compare
 * with "want"; report the outcome on "fd". */
static void check_schedule(ts_ctx *ctx, int fd, const ts_dag *dag, int k,
	uint64_t seed, ts_array **in, ts_array **want, const char *save)
{
	ts_compile_options opt = ts_compile_options_default();
	int nargs = dag->ninputs + dag->noutputs;
	ts_array *args[64];
	ts_fence fences[64];
	ts_schedule *sch;
	ts_module *m;
	ts_func *f;

	report(fd, "S %d", k);
	ts_ctx_clear_error(ctx);
	if (!(sch = schedule_of(ctx, dag, k, seed))) {
		report(fd, "R %d %d %s", k, F_SCHEDULE, err_of(ctx));
		return;
	}
	if (k >= 1)
		report(fd, "P %d %s", k, ts_schedule_to_string(sch));
	if (k >= 1 && save)
		save_schedule(save, seed, k, sch);
	if (!(f = ts_lower(ctx, dag, sch))) {
		report(fd, "R %d %d %s", k, F_LOWER, err_of(ctx));
		return;
	}
	/* The static schedule and one random one at LLVM's -O3 (what users
	 * run), the others at -O0, which compiles much faster. */
	opt.opt_level = k == 1 || k == 2 ? 3 : 0;
	opt.threads = 2;
	if (!(m = ts_module_compile(ctx, f, &opt))) {
		report(fd, "R %d %d %s", k, F_COMPILE, err_of(ctx));
		return;
	}
	for (int i = 0; i < nargs; i++) {
		args[i] = i < dag->ninputs ? in[i] : ts_array_for_tensor(ctx,
			dag->outputs[i - dag->ninputs]);
		fences[i] = ts_test_fence(ctx, args[i],
			(seed + (uint64_t)k + (uint64_t)i) & 1);
		args[i] = fences[i].a;
	}
	if (ts_module_run(m, args) < 0) {
		report(fd, "R %d %d %s", k, F_RUN, err_of(ctx));
		return;
	}
	for (int i = 0; i < nargs; i++) {
		ts_array *back = i < dag->ninputs ? NULL :
			ts_array_for_tensor(ctx,
			dag->outputs[i - dag->ninputs]);
		ts_test_unfence(&fences[i], back);
		args[i] = back;
	}
	for (int o = 0; o < dag->noutputs; o++) {
		double err = 0;
		if (!ts_array_close(args[dag->ninputs + o], want[o], &err)) {
			report(fd, "R %d %d output '%s' differs from ts_eval "
				"by %g", k, F_MISMATCH, dag->outputs[o]->name,
				err);
			ts_module_free(m);
			return;
		}
	}
	report(fd, "R %d ok", k);
	ts_module_free(m);
}

/* The body of the child that checks declaration "text" of "seed",
 * reporting on "fd"; never returns. */
static void child(int fd, uint64_t seed, const char *text, int timeout,
	const char *save)
{
	ts_ctx *ctx = ts_ctx_alloc();
	ts_array **in, *want[64];
	ts_dag *dag;
	char name[64];

	/* Die of a fault rather than let cmocka's handlers catch it in
	 * the child. */
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGILL, SIG_DFL);
	signal(SIGFPE, SIG_DFL);
	signal(SIGABRT, SIG_DFL);
	alarm((unsigned)timeout);
	ts_ctx_set_seed(ctx, 1);
	snprintf(name, sizeof(name), "seed-%llu.tsl", (unsigned long long)seed);
	if (!(dag = ts_parse_string(ctx, name, text))) {
		report(fd, "E %d %s", F_PARSE, err_of(ctx));
		_exit(0);
	}
	if (dag->noutputs > 64 || dag->ninputs + dag->noutputs > 64) {
		report(fd, "E %d too many tensors", F_PARSE);
		_exit(0);
	}
	report(fd, "S -1");
	in = ts_dag_random_inputs(ctx, dag, seed);
	if (!in || ts_eval(ctx, dag, in, want) < 0) {
		report(fd, "E %d %s", F_EVAL, err_of(ctx));
		_exit(0);
	}
	for (int k = 0; k < NSCHED; k++)
		check_schedule(ctx, fd, dag, k, seed, in, want, save);
	ts_ctx_free(ctx);
	_exit(0);
}

/* One case in flight or done. */
struct corpus_case {
	ts_corpus_case c;
	pid_t pid;
	int fd;
	int status;
	char *out;		/* what the child reported */
	size_t len, cap;
};

/* The failures counted so far. */
struct tally {
	int cases, failed_cases;
	int matched;		/* schedule runs that matched */
	int kind[F_KIND_COUNT];
	int per_sched[NSCHED];
	int per_style[64];
};

/* Read what the child of "cc" reported until it closes its pipe. */
static void drain(struct corpus_case *cc)
{
	char chunk[4096];
	ssize_t n;

	while ((n = read(cc->fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (cc->len + (size_t)n + 1 > cc->cap) {
			cc->cap = 2 * (cc->len + (size_t)n + 1);
			cc->out = realloc(cc->out, cc->cap);
			assert_non_null(cc->out);
		}
		memcpy(cc->out + cc->len, chunk, (size_t)n);
		cc->len += (size_t)n;
		cc->out[cc->len] = '\0';
	}
	close(cc->fd);
}

/* Append one failure "what" of case "cc" to "msg". */
static void note(char *msg, size_t size, const char *what)
{
	size_t len = strlen(msg);

	snprintf(msg + len, size - len, "#   %s\n", what);
}

/* Append the schedule "plan" (NULL: none reported) to "msg". */
static void plan_note(char *msg, size_t size, const char *plan)
{
	char what[MSG_MAX + 32];

	if (!plan)
		return;
	snprintf(what, sizeof(what), "  schedule: %s", plan);
	note(msg, size, what);
}

/* Judge the finished case "cc": count its failures into "t", print them
 * with the declaration, and save it when asked. */
static void judge(struct corpus_case *cc, struct tally *t,
	const struct corpus_env *env)
{
	char msg[8 * MSG_MAX] = "", what[MSG_MAX + 128];
	int last = -2, fails = 0;
	bool done[NSCHED] = { false }, eval_ok = false;
	const char *plan[NSCHED] = { NULL };
	char *line = cc->out, *nl;

	while (line && *line && (nl = strchr(line, '\n'))) {
		int k, kind, off = 0;
		*nl = '\0';
		if (line[0] == 'P' && sscanf(line, "P %d %n", &k, &off) == 1 &&
		    k >= 0 && k < NSCHED) {
			plan[k] = line + off;
		} else if (line[0] == 'S' && sscanf(line, "S %d", &k) == 1) {
			last = k;
			eval_ok |= k == -1;
		} else if (line[0] == 'E' &&
		    sscanf(line, "E %d %n", &kind, &off) == 1) {
			snprintf(what, sizeof(what), "%s: %s",
				kind_name[kind], line + off);
			note(msg, sizeof(msg), what);
			t->kind[kind]++;
			fails++;
		} else if (sscanf(line, "R %d %d %n", &k, &kind, &off) == 2) {
			done[k] = true;
			snprintf(what, sizeof(what), "%s schedule: %s: %s",
				sched_name[k], kind_name[kind], line + off);
			note(msg, sizeof(msg), what);
			plan_note(msg, sizeof(msg), plan[k]);
			t->kind[kind]++;
			t->per_sched[k]++;
			fails++;
		} else if (sscanf(line, "R %d ok", &k) == 1) {
			done[k] = true;
			t->matched++;
			if (env->save && k >= 1) {
				char path[4096];
				schedule_path(path, sizeof(path), env->save,
					cc->c.seed, k);
				unlink(path);
			}
		}
		line = nl + 1;
	}
	if (!WIFEXITED(cc->status) || WEXITSTATUS(cc->status) != 0) {
		bool alarm_ = WIFSIGNALED(cc->status) &&
			WTERMSIG(cc->status) == SIGALRM;
		enum fail_kind kind = alarm_ ? F_TIMEOUT : F_CRASH;
		snprintf(what, sizeof(what), "%s%s: %s (%s)",
			last >= 0 ? sched_name[last] : last == -1 ?
			"interpreter" : "parser", last >= 0 ? " schedule" : "",
			kind_name[kind], WIFSIGNALED(cc->status) ?
			strsignal(WTERMSIG(cc->status)) : "exit status");
		note(msg, sizeof(msg), what);
		if (last >= 0) {
			plan_note(msg, sizeof(msg), plan[last]);
			t->per_sched[last]++;
		}
		t->kind[kind]++;
		fails++;
	} else if (eval_ok) {
		for (int k = 0; k < NSCHED; k++)
			if (!done[k]) {
				note(msg, sizeof(msg), "a schedule did not "
					"report");
				fails++;
			}
	}
	t->cases++;
	if (!fails)
		return;
	t->failed_cases++;
	if (cc->c.style >= 0)
		t->per_style[cc->c.style]++;
	printf("# FAIL %s %llu (%s, %s):\n%s%s\n", cc->c.style >= 0 ?
		"seed" : "file", (unsigned long long)cc->c.seed,
		cc->c.style >= 0 ? ts_corpus_style_name(cc->c.style) : "file",
		ts_corpus_form_name(cc->c.form), msg, cc->c.text);
	fflush(stdout);
	if (env->save) {
		char path[4096];
		FILE *fp;
		snprintf(path, sizeof(path), "%s/seed-%llu.tsl", env->save,
			(unsigned long long)cc->c.seed);
		if ((fp = fopen(path, "w"))) {
			fprintf(fp, "%s%s", msg, cc->c.text);
			fclose(fp);
		}
	}
}

/* Start the child of "cc". */
static void start(struct corpus_case *cc, const struct corpus_env *env)
{
	int p[2];

	assert_int_equal(pipe(p), 0);
	fflush(stdout);
	fflush(stderr);
	cc->pid = fork();
	assert_true(cc->pid >= 0);
	if (cc->pid == 0) {
		close(p[0]);
		child(p[1], cc->c.seed, cc->c.text, env->timeout, env->save);
	}
	close(p[1]);
	cc->fd = p[0];
}

/* The integer in variable "name", or "dflt". */
static long long env_int(const char *name, long long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoll(v, NULL, 0) : dflt;
}

/* Read the environment into "e". */
static void read_env(struct corpus_env *e)
{
	const char *style = getenv("TS_CORPUS_STYLE");
	const char *form = getenv("TS_CORPUS_FORM");

	memset(e, 0, sizeof(*e));
	e->opts = ts_corpus_opts_default();
	e->first = (uint64_t)env_int("TS_CORPUS_FIRST", 0);
	e->nseeds = (int)env_int("TS_CORPUS_SEEDS", 300);
	e->jobs = (int)env_int("TS_CORPUS_JOBS", 2);
	e->timeout = (int)env_int("TS_CORPUS_TIMEOUT", 120);
	e->save = getenv("TS_CORPUS_SAVE");
	if (e->save && !*e->save)
		e->save = NULL;
	e->opts.zero_extents = env_int("TS_CORPUS_ZERO", 0) != 0;
	if (style && *style) {
		e->opts.style = ts_corpus_style_find(style);
		if (e->opts.style < 0)
			fail_msg("TS_CORPUS_STYLE: no style '%s'", style);
	}
	if (form && !strcmp(form, "one"))
		e->opts.form = TS_CORPUS_ONE_STATEMENT;
	else if (form && !strcmp(form, "staged"))
		e->opts.form = TS_CORPUS_STAGED;
	if (getenv("TS_CORPUS_FILES") && *getenv("TS_CORPUS_FILES")) {
		char *list = strdup(getenv("TS_CORPUS_FILES")), *save = NULL;
		for (char *f = strtok_r(list, ":", &save); f && e->nfiles < 256;
		    f = strtok_r(NULL, ":", &save))
			e->files[e->nfiles++] = f;
		e->nseeds = e->nfiles;
	}
	if (e->jobs < 1)
		e->jobs = 1;
	if (e->jobs > 2)
		e->jobs = 2;	/* a shared machine */
}

/* Read the declaration of file "path" into "c" as case "seed". */
static void read_case(ts_corpus_case *c, const char *path, uint64_t seed)
{
	FILE *fp = fopen(path, "rb");
	unsigned long long saved;
	const char *hdr;
	long size;

	if (!fp)
		fail_msg("cannot open %s", path);
	fseek(fp, 0, SEEK_END);
	size = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	c->text = calloc(1, (size_t)size + 1);
	assert_non_null(c->text);
	assert_int_equal(fread(c->text, 1, (size_t)size, fp), (size_t)size);
	fclose(fp);
	/* A saved case keeps its seed, which draws its inputs. */
	hdr = strstr(c->text, "# corpus seed ");
	if (!hdr || sscanf(hdr, "# corpus seed %llu", &saved) != 1)
		saved = seed;
	c->seed = saved;
	c->style = -1;		/* not generated */
	c->form = TS_CORPUS_EITHER;
}

/* Wait for one child among the "n" cases "cs" in flight, judge it and
 * remove it; return the new count. */
static int reap(struct corpus_case *cs, int n, struct tally *t,
	const struct corpus_env *env)
{
	int status, i;
	pid_t pid;

	/* A child's reports are a few lines: they fit in its pipe
	 * until it is reaped. */
	do
		pid = waitpid(-1, &status, 0);
	while (pid < 0 && errno == EINTR);
	assert_true(pid > 0);
	for (i = 0; i < n && cs[i].pid != pid; i++)
		;
	assert_true(i < n);
	cs[i].status = status;
	drain(&cs[i]);
	judge(&cs[i], t, env);
	ts_corpus_case_clear(&cs[i].c);
	free(cs[i].out);
	cs[i] = cs[n - 1];
	return n - 1;
}

static void test_corpus__every_schedule_matches_eval(void **state)
{
	struct corpus_env env;
	struct tally t = { 0 };
	struct corpus_case cs[2];
	int n = 0;

	(void)state;
	read_env(&env);
	if (env.nfiles)
		printf("# %d files, %d at a time\n", env.nfiles, env.jobs);
	else if (env.nseeds > 0)
		printf("# seeds %llu to %llu, %d at a time\n",
			(unsigned long long)env.first,
			(unsigned long long)(env.first +
			(uint64_t)env.nseeds - 1), env.jobs);
	for (int s = 0; s < env.nseeds; s++) {
		if (n == env.jobs)
			n = reap(cs, n, &t, &env);
		memset(&cs[n], 0, sizeof(cs[n]));
		if (env.nfiles)
			read_case(&cs[n].c, env.files[s], (uint64_t)s);
		else
			assert_int_equal(ts_corpus_generate(env.first +
				(uint64_t)s, &env.opts, &cs[n].c), 0);
		start(&cs[n], &env);
		n++;
	}
	while (n)
		n = reap(cs, n, &t, &env);
	printf("# %d cases, %d failed; %d compiled runs matched the "
		"interpreter\n", t.cases, t.failed_cases, t.matched);
	for (int k = 0; k < F_KIND_COUNT; k++)
		if (t.kind[k])
			printf("#   %-18s %d\n", kind_name[k], t.kind[k]);
	for (int k = 0; k < NSCHED; k++)
		if (t.per_sched[k])
			printf("#   under %-10s %d\n", sched_name[k],
				t.per_sched[k]);
	for (int s = 0; s < ts_corpus_style_count(); s++)
		if (t.per_style[s])
			printf("#   style %-12s %d\n", ts_corpus_style_name(s),
				t.per_style[s]);
	if (t.failed_cases)
		fail_msg("%d of %d corpus cases failed (see above)",
			t.failed_cases, t.cases);
}

/* The generator is deterministic, writes each seed's form, and its
 * styles are all reachable. */
static void test_corpus_gen__reproducible(void **state)
{
	ts_corpus_opts o = ts_corpus_opts_default();
	bool seen[64] = { false }, forms[3] = { false };

	(void)state;
	for (uint64_t s = 0; s < 200; s++) {
		ts_corpus_case a, b;
		assert_int_equal(ts_corpus_generate(s, &o, &a), 0);
		assert_int_equal(ts_corpus_generate(s, &o, &b), 0);
		assert_string_equal(a.text, b.text);
		assert_int_equal(a.style, b.style);
		seen[a.style] = true;
		forms[a.form] = true;
		ts_corpus_case_clear(&a);
		ts_corpus_case_clear(&b);
	}
	for (int i = 0; i < ts_corpus_style_count(); i++)
		if (!seen[i])
			fail_msg("style %s never drawn",
				ts_corpus_style_name(i));
	assert_true(forms[TS_CORPUS_ONE_STATEMENT] && forms[TS_CORPUS_STAGED]);
}

/* The two forms of one seed declare the same inputs and outputs and
 * compute the same values in the interpreter: the generator writes one
 * computation two ways. */
static void test_corpus_gen__forms_agree_in_eval(void **state)
{
	ts_corpus_opts o = ts_corpus_opts_default();
	int twins = 0;

	(void)state;
	for (uint64_t s = 0; s < 130; s++) {
		ts_ctx *ctx = ts_ctx_alloc();
		ts_corpus_case one, staged;
		ts_dag *d1, *d2;
		ts_array **in, *w1[16], *w2[16];
		o.form = TS_CORPUS_ONE_STATEMENT;
		assert_int_equal(ts_corpus_generate(s, &o, &one), 0);
		o.form = TS_CORPUS_STAGED;
		assert_int_equal(ts_corpus_generate(s, &o, &staged), 0);
		d1 = ts_parse_string(ctx, "one.tsl", one.text);
		d2 = ts_parse_string(ctx, "staged.tsl", staged.text);
		if (!d1 || !d2)
			fail_msg("seed %llu: %s\n%s%s", (unsigned long long)s,
				ts_ctx_error(ctx), one.text, staged.text);
		assert_int_equal(d1->ninputs, d2->ninputs);
		assert_int_equal(d1->noutputs, d2->noutputs);
		twins += one.twin;
		in = ts_dag_random_inputs(ctx, d1, s);
		assert_int_equal(ts_eval(ctx, d1, in, w1), TS_OK);
		assert_int_equal(ts_eval(ctx, d2, in, w2), TS_OK);
		for (int i = 0; i < d1->noutputs; i++)
			if (!ts_array_close(w2[i], w1[i], NULL))
				fail_msg("seed %llu: the forms differ\n%s%s",
					(unsigned long long)s, one.text,
					staged.text);
		ts_corpus_case_clear(&one);
		ts_corpus_case_clear(&staged);
		ts_ctx_free(ctx);
	}
	assert_true(twins >= 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_gen__reproducible),
		cmocka_unit_test(test_corpus_gen__forms_agree_in_eval),
		cmocka_unit_test(test_corpus__every_schedule_matches_eval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
