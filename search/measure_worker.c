/* The worker process of a measurer: "tessel measure-worker DIR".
 *
 * It is started fresh by exec, so it inherits no OpenMP team, no JIT and
 * no collector threads from the tuning process.  It reads the DAG, the
 * options, the inputs and the reference outputs once, and then never
 * runs generated code itself: for each candidate it forks a child that
 * lowers, compiles, checks and times it and reports on the socket.  The
 * worker only reports the child's end, so whatever a candidate does to
 * its own memory dies with it and the next child starts from the same
 * pristine inputs.  The collector is told to handle fork before it starts,
 * so that children may allocate and collect.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <tessel/backend.h>
#include <tessel/lower.h>
#include <tessel/measure.h>
#include <tessel/schedule.h>

#include "dsl/ir.h"
#include "support/support.h"
#include "search/measure_internal.h"

/* What the worker holds for all its children. */
struct worker {
	ts_ctx *ctx;
	const char *dir;
	ts_dag *dag;
	ts_array **inputs;	/* dag->ninputs */
	ts_array **refs;	/* dag->noutputs */
	int threads;
	bool flush;
	bool pipeline;		/* build the next candidate while one is
				 * timed */
	int gate;		/* in a child: the end it waits on for its
				 * turn to run, or -1 */
	int quiet;		/* in a child: the end it waits on before
				 * timing, until the next child has built, or
				 * -1 */
	int built;		/* in a child built ahead: the end it closes
				 * once built, or -1 */
	double min_repeat_s;
	const char *cpu, *features;	/* NULL: this machine's */
	char *flush_buf;	/* larger than the last-level cache */
	size_t flush_size;
	volatile char flush_sink;	/* keeps the flush reads */
	double last_tick;	/* when the child last said it is alive */
	char in[4096];		/* unread request bytes */
	size_t nin;
};

static const char *const fault_names[TS_FAULT_COUNT] = {
	[TS_FAULT_NONE] = "none",
	[TS_FAULT_CRASH] = "crash",
	[TS_FAULT_ABORT] = "abort",
	[TS_FAULT_HANG] = "hang",
	[TS_FAULT_SLOW_BUILD] = "slow-build",
	[TS_FAULT_CORRUPT] = "corrupt",
	[TS_FAULT_KILL_WORKER] = "kill-worker",
};

/* Return the fault called "name", or -1. */
int ts_fault_from_name(const char *name)
{
	for (int i = 0; name && i < TS_FAULT_COUNT; i++)
		if (!strcmp(name, fault_names[i]))
			return i;
	return -1;
}

/* Return the name of "fault". */
const char *ts_fault_name(int fault)
{
	return fault >= 0 && fault < TS_FAULT_COUNT ? fault_names[fault]
		: "none";
}

/* Return the path of file "what" (number "i" when >= 0) in "dir". */
char *ts_measure_file(const char *dir, const char *what, int i)
{
	if (i < 0)
		return ts_asprintf("%s/%s", dir, what);
	return ts_asprintf("%s/%s%d.npy", dir, what, i);
}

/* Return the contents of "path", or NULL. */
char *ts_measure_read_text(const char *path)
{
	return ts_read_file(path, NULL);
}

/* Write the "n" bytes at "s" to "fd", however many calls it takes. */
bool ts_measure_write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, s, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		s += k;
		n -= (size_t)k;
	}
	return true;
}

/* Remove the folder "dir" and the files in it. */
void ts_measure_dir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlink(ts_asprintf("%s/%s", dir, e->d_name));
	if (d)
		closedir(d);
	rmdir(dir);
}

/* Return the monotonic clock in seconds. */
double ts_measure_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Send the line "fmt" to the measurer (standard output). */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = ts_vasprintf(fmt, ap);
	va_end(ap);
	ts_measure_write_all(1, s, strlen(s));
}

/* Send "text" as a "message" line, escaping newlines and backslashes. */
static void say_message(const char *text)
{
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_puts(&b, "message ");
	for (const char *p = text ? text : "failed"; *p; p++) {
		if (*p == '\n')
			ts_buf_puts(&b, "\\n");
		else if (*p == '\\')
			ts_buf_puts(&b, "\\\\");
		else
			ts_buf_putc(&b, *p);
	}
	ts_buf_putc(&b, '\n');
	ts_measure_write_all(1, b.s, b.len);
}

/* In a child built ahead of its turn: wait until the worker says that
 * the candidate before it has ended (or has gone: then leave).  Until
 * then the child says nothing, so that the measurer hears the children
 * one after the other, in the order of its requests. */
static void wait_turn(struct worker *w)
{
	char c;
	ssize_t k;

	if (w->built >= 0) {
		close(w->built);	/* the worker may let the child
					 * before this one time now */
		w->built = -1;
	}
	if (w->gate < 0)
		return;
	while ((k = read(w->gate, &c, 1)) < 0 && errno == EINTR)
		;
	if (k != 1)
		_exit(0);
	close(w->gate);
	w->gate = -1;
}

static void tick(struct worker *w);

/* In a child that has its turn: wait, saying it is alive, until the
 * child after it has built (the worker writes to "quiet"), so that no
 * build runs beside the timed runs: on a 2-core AMD Zen 4 a build on the
 * other core made timed kernels up to 1.6x slower.  At most 5 s (builds
 * take 0.1 s; one that takes longer is rare and may be timed out). */
static void wait_quiet(struct worker *w)
{
	struct pollfd p = { .fd = w->quiet, .events = POLLIN };
	double until = ts_measure_now() + 5;

	if (w->quiet < 0)
		return;
	while (ts_measure_now() < until) {
		int r = poll(&p, 1, 200);
		tick(w);
		if (r > 0 || (r < 0 && errno != EINTR))
			break;
	}
	/* Not read: after the time limit nothing may have been written. */
	close(w->quiet);
	w->quiet = -1;
}

/* Report the failure "code" of a candidate with the context's message
 * and leave the child. */
static void fail(struct worker *w, ts_error_code code, double build_s)
{
	wait_turn(w);
	say_message(ts_ctx_error(w->ctx));
	say("result %d nan %.9g 0\n", (int)code, build_s);
	_exit(0);
}

/* Read the LLVM cpu and features of the second line "line" (starting
 * at its newline; "-" for this machine's) into "w". */
static void worker_code_target(struct worker *w, const char *line)
{
	char cpu[256], feat[4096];

	w->cpu = w->features = NULL;
	if (!line || sscanf(line, " %255s %4095s", cpu, feat) != 2)
		return;
	if (strcmp(cpu, "-"))
		w->cpu = ts_strdup(cpu);
	if (strcmp(feat, "-"))
		w->features = ts_strdup(feat);
}

/* Read the options and the arrays of the folder into "w". */
static ts_status worker_load(struct worker *w, bool reference)
{
	const char *text = ts_measure_read_text(ts_measure_file(w->dir,
		"options", -1));
	int flush = 0, pipeline = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	const ts_dag *d;

	if (!text || sscanf(text, "%d %d %lf %d", &w->threads, &flush,
	    &w->min_repeat_s, &pipeline) != 4)
		return ts_ctx_set_error(w->ctx, "measure-worker: no options "
			"in '%s'", w->dir);
	w->flush = flush;
	/* A core to spare for the builds, so that they do not slow down
	 * the candidate being timed. */
	w->pipeline = pipeline && cpus > w->threads;
	worker_code_target(w, strchr(text, '\n'));
	text = ts_measure_read_text(ts_measure_file(w->dir, "dag.tsl", -1));
	w->dag = text ? ts_parse_string(w->ctx, "measured.tsl", text) : NULL;
	if (!w->dag)
		return ts_ctx_set_error(w->ctx, "measure-worker: no DAG in "
			"'%s'", w->dir);
	d = w->dag;
	w->inputs = ts_new_array(ts_array *, d->ninputs + 1);
	w->refs = ts_new_array(ts_array *, d->noutputs + 1);
	for (int i = 0; i < d->ninputs; i++)
		if (!(w->inputs[i] = ts_npy_read(w->ctx,
		    ts_measure_file(w->dir, "in", i))))
			return TS_ERROR;
	for (int i = 0; !reference && i < d->noutputs; i++)
		if (!(w->refs[i] = ts_npy_read(w->ctx,
		    ts_measure_file(w->dir, "ref", i))))
			return TS_ERROR;
	return TS_OK;
}

/* The arguments of a run: the inputs, then fresh outputs filled with
 * values from "seed", so that an output a kernel forgets to write cannot
 * match the reference by luck. */
static ts_array **worker_args(struct worker *w, uint64_t seed)
{
	const ts_dag *d = w->dag;
	ts_array **args = ts_new_array(ts_array *, d->ninputs + d->noutputs);

	for (int i = 0; i < d->ninputs; i++)
		args[i] = w->inputs[i];
	for (int i = 0; i < d->noutputs; i++) {
		ts_array *a = ts_array_for_tensor(w->ctx, d->outputs[i]);
		if (!a)
			return NULL;
		ts_array_fill_random(a, seed + (uint64_t)i);
		args[d->ninputs + i] = a;
	}
	return args;
}

/* Write the reference outputs computed by the naive schedule compiled,
 * for DAGs too large for the interpreter; return the exit code. */
static int worker_reference(struct worker *w)
{
	ts_compile_options opt = ts_compile_options_default();
	ts_func *f = ts_lower(w->ctx, w->dag, NULL);
	ts_module *m;
	ts_array **args = worker_args(w, 7);

	opt.threads = w->threads;
	opt.cpu = w->cpu;
	opt.features = w->features;
	if (!f || !args || !(m = ts_module_compile(w->ctx, f, &opt)))
		return 1;
	ts_runtime_set_threads(w->threads);
	if (ts_module_run(m, args) < 0)
		return 1;
	for (int i = 0; i < w->dag->noutputs; i++)
		if (ts_npy_write(w->ctx, ts_measure_file(w->dir, "ref", i),
		    args[w->dag->ninputs + i]) < 0)
			return 1;
	ts_module_free(m);
	return 0;
}

/* Evict the caches by reading every line of the flush buffer of "w".
 * Reads, not writes: the buffer was written once by the worker, so its
 * children share its pages and reading them copies nothing. */
static void flush_caches(struct worker *w)
{
	const volatile char *p = w->flush_buf;
	char sum = 0;

	for (size_t i = 0; i < w->flush_size; i += 64)
		sum = (char)(sum + p[i]);
	w->flush_sink = sum;
}

/* Allocate the flush buffer of "w", a quarter larger than the last-level
 * cache, and write it so that its pages are real memory. */
static void flush_init(struct worker *w)
{
	long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);

	if (llc <= 0)
		llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
	w->flush_size = llc > 0 ? (size_t)llc + (size_t)llc / 4
		: (size_t)64 << 20;
	if (w->flush_size < ((size_t)8 << 20))
		w->flush_size = (size_t)8 << 20;
	w->flush_buf = ts_new_atomic(char, w->flush_size);
	memset(w->flush_buf, 1, w->flush_size);
}

/* Change one output value of "args" so that the check must fail. */
static void corrupt_output(struct worker *w, ts_array **args)
{
	ts_array *a = args[w->dag->ninputs];
	double v = ts_array_get(a, 0);

	ts_array_set(a, 0, a->dtype == TS_BOOL ? !v : v + 1 + fabs(v));
}

/* Compare the outputs in "args" with the references of "w"; set
 * "*max_err" to the worst absolute difference. */
static bool outputs_match(struct worker *w, ts_array **args,
	double *max_err)
{
	bool ok = true;

	*max_err = 0;
	for (int i = 0; i < w->dag->noutputs; i++) {
		double err = 0;
		if (!ts_array_close(args[w->dag->ninputs + i], w->refs[i],
		    &err)) {
			if (ok)
				ts_ctx_set_error(w->ctx, "output '%s' differs "
					"from the reference: max abs error %g",
					w->dag->outputs[i]->name, err);
			ok = false;
		}
		*max_err = fmax(*max_err, isnan(err) ? INFINITY : err);
	}
	return ok;
}

typedef void (*fn1)(void *);
typedef void (*fn2)(void *, void *);
typedef void (*fn3)(void *, void *, void *);
typedef void (*fn4)(void *, void *, void *, void *);
typedef void (*fn5)(void *, void *, void *, void *, void *);
typedef void (*fn6)(void *, void *, void *, void *, void *, void *);

/* Call the function of "m" on the data of "args" ("n" of them), directly
 * for up to six arguments (checked once by the check run), so that a
 * timed run allocates nothing; else through ts_module_run. */
static ts_status call(ts_module *m, ts_array **args, int n)
{
	void *f = ts_module_address(m);
	void *p[6];

	for (int i = 0; i < n && i < 6; i++)
		p[i] = args[i]->data;
	switch (f ? n : 0) {
	case 1: ((fn1)f)(p[0]); return TS_OK;
	case 2: ((fn2)f)(p[0], p[1]); return TS_OK;
	case 3: ((fn3)f)(p[0], p[1], p[2]); return TS_OK;
	case 4: ((fn4)f)(p[0], p[1], p[2], p[3]); return TS_OK;
	case 5: ((fn5)f)(p[0], p[1], p[2], p[3], p[4]); return TS_OK;
	case 6: ((fn6)f)(p[0], p[1], p[2], p[3], p[4], p[5]); return TS_OK;
	default: return ts_module_run(m, args);
	}
}

/* Tell the measurer that the child of "w" is alive between runs, at
 * most five times a second: the run timeout counts from the last tick. */
static void tick(struct worker *w)
{
	double now = ts_measure_now();

	if (now - w->last_tick >= 0.2) {
		say("tick\n");
		w->last_tick = now;
	}
}

/* Run "m" on "args" "reps" times (after a flush when "w" asks for it);
 * return the seconds per run, or a negative number on failure. */
static double timed_runs(struct worker *w, ts_module *m, ts_array **args,
	int reps)
{
	int n = w->dag->ninputs + w->dag->noutputs;
	double t0, t;

	if (w->flush)
		flush_caches(w);
	t0 = ts_measure_now();
	for (int r = 0; r < reps; r++)
		if (call(m, args, n) < 0)
			return -1;
	t = (ts_measure_now() - t0) / reps;
	tick(w);
	return t;
}

/* The runs per sample: one when flushing (each run starts cold), else
 * doubled from one until a sample lasts 0.2 ms (a twentieth of
 * min_repeat_s if that is less), so that the clock's resolution and the
 * call do not count, while samples stay short enough that the median
 * ignores those a busy machine preempted.  This is also the warm-up. */
static int calibrate(struct worker *w, ts_module *m, ts_array **args,
	double build_s)
{
	double target = TS_MIN(w->min_repeat_s / 20, 2e-4), t;
	int reps = 1;

	if (w->flush)
		return 1;
	while ((t = timed_runs(w, m, args, reps)) * reps < target &&
	       reps < (1 << 20))
		reps *= 2;
	if (t < 0)
		fail(w, TS_ERR_RUNTIME, build_s);
	return reps;
}

/* Time "m" on "args": after the warm-up, samples until the loop has
 * lasted min_repeat_s (at least 3 samples, at most 1000; one when a
 * sample lasts ten times min_repeat_s: a tuner draws candidates of 2 to 5
 * s per run next to a best of 2 ms, and four runs of each cost it more
 * than a batch of good ones); send the result line with "max_err" and
 * "build_s". */
static void time_runs(struct worker *w, ts_module *m, ts_array **args,
	double max_err, double build_s)
{
	int reps = calibrate(w, m, args, build_s), n = 0, cap = 1000;
	double *s = ts_new_atomic(double, cap), start = ts_measure_now();
	ts_buf b;

	while (n < 1 || (n < 3 && s[0] * reps < 10 * w->min_repeat_s) ||
	       (ts_measure_now() - start < w->min_repeat_s && n < cap)) {
		if ((s[n++] = timed_runs(w, m, args, reps)) < 0)
			fail(w, TS_ERR_RUNTIME, build_s);
	}
	ts_buf_init(&b);
	ts_buf_printf(&b, "result 0 %.9g %.9g %d", max_err, build_s, n);
	for (int i = 0; i < n; i++)
		ts_buf_printf(&b, " %.9g", s[i]);
	ts_buf_putc(&b, '\n');
	ts_measure_write_all(1, b.s, b.len);
}

/* In a forked child: lower, compile, check and time the schedule in
 * "json", misbehaving as "fault" asks; report and exit. */
static void run_candidate(struct worker *w, const char *json, int fault)
{
	ts_compile_options opt = ts_compile_options_default();
	double t0 = ts_measure_now(), build_s, err;
	ts_schedule *sch;
	ts_func *f;
	ts_module *m;
	ts_array **args;

	if (fault == TS_FAULT_SLOW_BUILD)
		for (;;)
			sleep(1);
	if (fault == TS_FAULT_ABORT)
		abort();
	if (!(sch = ts_schedule_from_json(w->ctx, w->dag, json)) ||
	    !(f = ts_lower(w->ctx, w->dag, sch)))
		fail(w, TS_ERR_INVALID_SCHEDULE, 0);
	opt.threads = w->threads;
	opt.cpu = w->cpu;
	opt.features = w->features;
	if (!(m = ts_module_compile(w->ctx, f, &opt)))
		fail(w, TS_ERR_COMPILE, ts_measure_now() - t0);
	build_s = ts_measure_now() - t0;
	wait_turn(w);
	say("built %.9g\n", build_s);
	w->last_tick = ts_measure_now();
	ts_runtime_set_threads(w->threads);
	if (!(args = worker_args(w, 99)))
		fail(w, TS_ERR_RUNTIME, build_s);
	if (ts_module_run(m, args) < 0)
		fail(w, TS_ERR_RUNTIME, build_s);
	tick(w);
	if (fault == TS_FAULT_CRASH) {
		volatile uintptr_t bad = 8;	/* a store to page zero */
		*(volatile int *)bad = 1;
	}
	if (fault == TS_FAULT_HANG)
		for (;;)
			pause();
	if (fault == TS_FAULT_CORRUPT)
		corrupt_output(w, args);
	if (fault == TS_FAULT_KILL_WORKER)
		kill(getppid(), SIGKILL);
	if (!outputs_match(w, args, &err)) {
		say_message(ts_ctx_error(w->ctx));
		say("result %d %.9g %.9g 0\n", (int)TS_ERR_WRONG_ANSWER, err,
			build_s);
		_exit(0);
	}
	wait_quiet(w);
	time_runs(w, m, args, err, build_s);
	_exit(0);
}

/* The file that the standard error of the child "pid" goes to. */
static char *child_err(struct worker *w, pid_t pid)
{
	return ts_measure_file(w->dir, ts_asprintf("child-%ld.err",
		(long)pid), -1);
}

/* Start the child of one candidate, which waits on "gate" for its turn
 * to run (-1: it is its turn): it dies with the worker, and its
 * standard error goes to a file the measurer reads after a crash. */
static void child_start(struct worker *w, const char *json, int fault,
	int gate)
{
	int fd;

#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
	w->gate = gate;
	fd = open(child_err(w, getpid()), O_WRONLY | O_CREAT | O_TRUNC |
		O_CLOEXEC, 0600);
	if (fd >= 0) {
		dup2(fd, 2);
		close(fd);
	}
	run_candidate(w, json, fault);
	_exit(0);
}

/* Read one request line from standard input into "line" (at most
 * "size" bytes); return false at the end of input. */
static bool read_line(struct worker *w, char *line, size_t size)
{
	for (;;) {
		char *nl = memchr(w->in, '\n', w->nin);
		ssize_t k;
		if (nl) {
			size_t len = (size_t)(nl - w->in);
			if (len >= size)
				return false;
			memcpy(line, w->in, len);
			line[len] = '\0';
			memmove(w->in, nl + 1, w->nin - len - 1);
			w->nin -= len + 1;
			return true;
		}
		if (w->nin == sizeof(w->in))
			return false;
		k = read(0, w->in + w->nin, sizeof(w->in) - w->nin);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		w->nin += (size_t)k;
	}
}

/* Read exactly "n" bytes of standard input (after what is buffered). */
static char *read_bytes(struct worker *w, size_t n)
{
	char *s = ts_new_atomic(char, n + 1);
	size_t have = TS_MIN(n, w->nin);

	memcpy(s, w->in, have);
	memmove(w->in, w->in + have, w->nin - have);
	w->nin -= have;
	while (have < n) {
		ssize_t k = read(0, s + have, n - have);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return NULL;
		have += (size_t)k;
	}
	s[n] = '\0';
	return s;
}

/* Whether the measurer has gone: its end of the socket on standard input
 * is closed (it sends nothing while a candidate runs, but the next
 * request, which stays unread). */
static bool measurer_gone(void)
{
	char c;

	return recv(0, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* Whether a request waits to be read on standard input. */
static bool request_waiting(struct worker *w)
{
	char c;

	return w->nin > 0 || recv(0, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

/* A candidate's child and the gate it waits on (-1: running). */
struct child {
	pid_t pid;		/* 0: none */
	int gate;
	int quiet;		/* written when it may time, or -1 */
	int built;		/* ends when it has built, or -1 */
	bool ahead;		/* forked while another child ran */
};

static const struct child no_child = { 0, -1, -1, -1, false };

/* Tell a child what it waits for on the pipe "*fd" (its turn, or that
 * it may time its runs), once. */
static void release(int *fd)
{
	if (*fd < 0)
		return;
	(void)!write(*fd, "r", 1);
	close(*fd);
	*fd = -1;
}

/* Close those of "a", "b" and "c" that are open. */
static void close_ends(int a, int b, int c)
{
	int fd[3] = { a, b, c };

	for (int i = 0; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/* Open the pipe "p", or set both ends to -1. */
static bool pipe_or_none(int *p)
{
	if (pipe(p) == 0)
		return true;
	p[0] = p[1] = -1;
	return false;
}

/* Read the next request and fork its child, which waits for its turn
 * when "gated"; return 1, 0 at the end of input, -1 on a bad request.
 * When "w" pipelines, the child also waits before timing until told that
 * no build runs, and a gated child says when it has built. */
static int child_fork(struct worker *w, bool gated, struct child *c)
{
	char line[256], fault[32], *json;
	int g[2] = { -1, -1 }, q[2] = { -1, -1 }, b[2] = { -1, -1 };
	size_t n;

	*c = no_child;
	c->ahead = gated;
	if (!read_line(w, line, sizeof(line)))
		return 0;
	if (sscanf(line, "measure %31s %zu", fault, &n) != 2 ||
	    !(json = read_bytes(w, n)))
		return -1;
	if ((gated && (!pipe_or_none(g) || !pipe_or_none(b))) ||
	    (w->pipeline && !pipe_or_none(q))) {
		close_ends(g[0], g[1], b[0]);
		close_ends(b[1], q[0], q[1]);
		c->pid = -1;	/* reported as a failed start */
		return 1;
	}
	c->pid = fork();
	if (c->pid == 0) {
		close_ends(g[1], b[0], q[1]);	/* the worker's */
		w->quiet = q[0];
		w->built = b[1];
		child_start(w, json, ts_fault_from_name(fault), g[0]);
	}
	close_ends(g[0], b[1], q[0]);		/* the child's */
	c->gate = g[1];
	c->built = b[0];
	c->quiet = q[1];
	if (c->pid < 0) {
		close_ends(c->gate, c->built, c->quiet);
		c->gate = c->built = c->quiet = -1;
	}
	return 1;
}

/* Whether the child "c" built ahead has built (or died): its end of
 * the "built" pipe is closed.  Then that end is closed here too. */
static bool child_built(struct child *c)
{
	struct pollfd p = { .fd = c->built, .events = POLLIN };

	if (c->built < 0)
		return true;
	if (poll(&p, 1, 0) <= 0)
		return false;
	close(c->built);
	c->built = -1;
	return true;
}

/* Wait for the child "cur" and return its wait status; when the
 * measurer goes away meanwhile, kill the child and set "*orphan".
 * "next", the child built meanwhile (pid 0: none), lets "cur" time its
 * runs once it has built. */
static int wait_child(struct child *cur, struct child *next, bool *orphan)
{
	const struct timespec tick = { 0, 2000000 };
	int status = 0;

	for (;;) {
		pid_t r = waitpid(cur->pid, &status, WNOHANG);
		if (r == cur->pid || (r < 0 && errno != EINTR))
			break;
		if (measurer_gone()) {
			*orphan = true;
			kill(cur->pid, SIGKILL);
		}
		if (cur->quiet >= 0 && (next->pid <= 0 || child_built(next)))
			release(&cur->quiet);
		nanosleep(&tick, NULL);
	}
	if (cur->quiet >= 0)
		close(cur->quiet);
	cur->quiet = -1;
	return status;
}

/* Serve requests until standard input ends: fork a child per candidate
 * and report its start and its end, one candidate after the other.  When
 * pipelining, the next candidate's child is forked when one gets its
 * turn, if its request is there: it builds while the one before it
 * checks its output, which waits for that build to end before it times
 * its runs; then the new child waits for its turn, which comes when the
 * one before has ended.  So building overlaps everything but timing, and
 * two candidates never run at once. */
static int worker_serve(struct worker *w)
{
	struct child cur, next = no_child;
	bool orphan = false;
	int got;

	/* A child that died before its turn has closed its gate. */
	signal(SIGPIPE, SIG_IGN);
	say("ready %d %s\n", TS_MEASURE_PROTOCOL, ts_dag_hash(w->dag));
	for (;;) {
		int status;
		if (next.pid) {
			cur = next;
			next = no_child;
		} else if ((got = child_fork(w, false, &cur)) <= 0) {
			if (got < 0)
				return 2;	/* not the measurer's */
			break;
		}
		if (cur.pid < 0) {
			say("exit -1\n");
			continue;
		}
		release(&cur.gate);
		say("start %ld %d\n", (long)cur.pid, cur.ahead ? 1 : 0);
		if (w->pipeline && request_waiting(w) &&
		    child_fork(w, true, &next) < 0) {
			kill(cur.pid, SIGKILL);
			return 2;	/* a bad request */
		}
		status = wait_child(&cur, &next, &orphan);
		if (orphan)
			break;
		rename(child_err(w, cur.pid), ts_measure_file(w->dir,
			"child.err", -1));
		say("exit %d\n", status);
	}
	if (next.pid > 0) {
		kill(next.pid, SIGKILL);
		waitpid(next.pid, NULL, 0);
	}
	/* The measurer closed the socket without stopping this worker: it
	 * has exited without ts_measurer_free, so clean up after it. */
	ts_measure_dir_remove(w->dir);
	return 0;
}

/* Serve the measurer of the folder "dir", or write its reference
 * outputs when "reference"; return the exit code. */
int ts_measure_worker_main(const char *dir, bool reference)
{
	struct worker w = { .dir = dir, .gate = -1, .quiet = -1, .built = -1 };

	/* Before the collector starts: children of this process allocate. */
	GC_set_handle_fork(1);
	w.ctx = ts_ctx_alloc();
	if (!w.ctx)
		return 1;
	if (worker_load(&w, reference) < 0) {
		const char *e = ts_ctx_error(w.ctx);
		int fd = open(ts_measure_file(dir, "worker.err", -1),
			O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd >= 0) {
			ts_measure_write_all(fd, e, strlen(e));
			close(fd);
		}
		return 2;
	}
	if (reference)
		return worker_reference(&w);
	if (w.flush)
		flush_init(&w);
	return worker_serve(&w);
}
