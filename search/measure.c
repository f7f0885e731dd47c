/* Measuring candidate schedules in a worker process (see
 * include/tessel/measure.h for the design and search/measure_internal.h
 * for the protocol).
 *
 * This side prepares the folder the worker reads, starts the worker by
 * fork and exec (so that the worker shares no thread, lock or OpenMP
 * team with the caller), sends one schedule at a time and waits for the
 * answer with poll: until the child says it has compiled, the build
 * timeout runs; after that, the run timeout, restarted whenever the child
 * says it is alive between two runs (so it bounds one run, not all).  A child that passes its
 * deadline is killed; a worker that dies or stops answering is killed
 * and started again for the next candidate.  Writes use send() with
 * MSG_NOSIGNAL, so a dead worker never raises SIGPIPE in the caller.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <tessel/lower.h>
#include <tessel/measure.h>

#include "dsl/ir.h"
#include "metatemplates/ir.h"
#include "support/support.h"
#include "search/measure_internal.h"

struct ts_measurer {
	ts_ctx *ctx;
	const ts_dag *dag;
	const char *hash;	/* ts_dag_hash of dag */
	ts_measure_options opt;
	uint64_t seed;
	char *dir;		/* private folder, NULL once removed */
	char *worker_path;	/* the program to exec */
	pid_t worker;		/* 0: none running */
	int fd;			/* socket to the worker, -1: none */
	char *in;		/* unread bytes from the worker */
	size_t nin, capin;
	int fault;		/* enum ts_fault for every candidate */
	int count;		/* candidates measured */
	int started;		/* workers started */
	int ahead;		/* candidates built while another ran */
	struct ts_cluster_dag cdag;	/* what the ranks rebuild, when the
					 * options name a cluster */
	ts_measurer *local;	/* measures here when no rank is left */
};

static const char *const error_names[TS_ERR_COUNT] = {
	[TS_ERR_NONE] = "none",
	[TS_ERR_INVALID_SCHEDULE] = "invalid_schedule",
	[TS_ERR_COMPILE] = "compile_error",
	[TS_ERR_RUNTIME] = "runtime_error",
	[TS_ERR_WRONG_ANSWER] = "wrong_answer",
	[TS_ERR_BUILD_TIMEOUT] = "build_timeout",
	[TS_ERR_RUN_TIMEOUT] = "run_timeout",
};

/* Return the name of "code". */
const char *ts_error_code_name(ts_error_code code)
{
	return code >= 0 && code < TS_ERR_COUNT ? error_names[code]
		: "unknown";
}

/* Set "*out" to the code called "name". */
ts_status ts_error_code_from_name(const char *name, ts_error_code *out)
{
	for (int i = 0; name && i < TS_ERR_COUNT; i++)
		if (!strcmp(name, error_names[i])) {
			*out = (ts_error_code)i;
			return TS_OK;
		}
	return TS_ERROR;
}

/* Return the default options: 20 s to build, 10 s to run, 0.1 s of
 * timed runs, no cache flush, one thread, builds pipelined. */
ts_measure_options ts_measure_options_default(void)
{
	return (ts_measure_options){
		.build_timeout_s = 20,
		.run_timeout_s = 10,
		.min_repeat_s = 0.1,
		.flush_cache = false,
		.threads = 1,
		.pipeline = true,
		.eval_limit = 0,
	};
}

/* Check the options "o" of a measurer in "ctx". */
static ts_status options_check(ts_ctx *ctx, const ts_measure_options *o)
{
	if (!(o->build_timeout_s > 0) || !(o->run_timeout_s > 0))
		return ts_ctx_set_error(ctx, "measure: build_timeout_s and "
			"run_timeout_s must be positive (%g, %g)",
			o->build_timeout_s, o->run_timeout_s);
	if (!(o->min_repeat_s >= 0) || o->threads < 1 || o->threads > 4096)
		return ts_ctx_set_error(ctx, "measure: bad min_repeat_s %g or "
			"threads %d", o->min_repeat_s, o->threads);
	if (!(o->eval_limit >= 0))
		return ts_ctx_set_error(ctx, "measure: bad eval_limit %g",
			o->eval_limit);
	if ((o->cpu && (!*o->cpu || strpbrk(o->cpu, " \t\n"))) ||
	    (o->features && strpbrk(o->features, " \t\n")))
		return ts_ctx_set_error(ctx, "measure: bad cpu '%s' or "
			"features '%s'", o->cpu ? o->cpu : "",
			o->features ? o->features : "");
	return TS_OK;
}

void ts_measure_options_target(ts_measure_options *o, const ts_target *t)
{
	o->cpu = t && t->kind == TS_TARGET_CPU ? t->cpu.llvm_cpu : NULL;
	o->features = t && t->kind == TS_TARGET_CPU ? t->cpu.llvm_features :
		NULL;
}

/* Return "o" as one line: timeouts, repeat, flush, threads, pipeline,
 * eval limit, LLVM cpu and features ("-" for this machine's). */
char *ts_measure_options_encode(const ts_measure_options *o)
{
	return ts_asprintf("%.17g %.17g %.17g %d %d %d %.17g %s %s",
		o->build_timeout_s, o->run_timeout_s, o->min_repeat_s,
		o->flush_cache ? 1 : 0, o->threads, o->pipeline ? 1 : 0,
		o->eval_limit,
		o->cpu && *o->cpu ? o->cpu : "-",
		o->features && *o->features ? o->features : "-");
}

/* Read the line "s" of ts_measure_options_encode into "o". */
ts_status ts_measure_options_decode(const char *s, ts_measure_options *o)
{
	char cpu[256], feat[4096];
	int flush, pipeline;

	*o = ts_measure_options_default();
	if (sscanf(s, "%lg %lg %lg %d %d %d %lg %255s %4095s",
	    &o->build_timeout_s, &o->run_timeout_s, &o->min_repeat_s, &flush,
	    &o->threads, &pipeline, &o->eval_limit, cpu, feat) != 9)
		return TS_ERROR;
	o->flush_cache = flush != 0;
	o->pipeline = pipeline != 0;
	o->cpu = strcmp(cpu, "-") ? ts_strdup(cpu) : NULL;
	o->features = strcmp(feat, "-") ? ts_strdup(feat) : NULL;
	return TS_OK;
}

/* Return whether "path" is an executable file. */
static bool is_program(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		access(path, X_OK) == 0;
}

/* Return "name" found on the PATH, or NULL. */
static char *path_lookup(const char *name)
{
	const char *p = getenv("PATH");

	while (p && *p) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *cand = ts_asprintf("%.*s/%s", (int)len, p, name);
		if (len && is_program(cand))
			return cand;
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

/* Return the worker program: $TS_MEASURE_WORKER, this program when it is
 * the tessel tool, the build tree's tool, or tessel on the PATH. */
static char *worker_program(void)
{
	const char *env = getenv("TS_MEASURE_WORKER"), *tool;
	char self[4096];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (env && *env)
		return ts_strdup(env);
	if (k > 0) {
		const char *base;
		self[k] = '\0';
		base = strrchr(self, '/');
		base = base ? base + 1 : self;
		if (!strcmp(base, "tessel") || !strcmp(base, "lt-tessel"))
			return ts_strdup(self);
	}
	tool = ts_runtime_path(TS_FILE_TOOL, NULL);
	if (tool && is_program(tool))
		return ts_strdup(tool);
	return path_lookup("tessel");
}

/* Remove the folder of "m" and what it holds. */
static void dir_remove(ts_measurer *m)
{
	if (m->dir)
		ts_measure_dir_remove(m->dir);
	m->dir = NULL;
}

/* Kill the worker of "m", if any, and reap it. */
static void worker_stop(ts_measurer *m)
{
	int status;

	/* Kill before closing: a worker that sees the socket close without
	 * being killed takes it that the caller has gone, and removes the
	 * folder. */
	if (m->worker > 0) {
		kill(-m->worker, SIGKILL);
		kill(m->worker, SIGKILL);
		while (waitpid(m->worker, &status, 0) < 0 && errno == EINTR)
			;
	}
	m->worker = 0;
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
	m->nin = 0;
}

/* Stop the worker of "m" and remove its folder. */
void ts_measurer_free(ts_measurer *m)
{
	if (!m)
		return;
	ts_measurer_free(m->local);
	m->local = NULL;
	worker_stop(m);
	dir_remove(m);
}

/* ts_measurer_free for ts_ctx_on_free. */
static void measurer_cleanup(void *m)
{
	ts_measurer_free(m);
}

/* Write the options file of "m": threads, flush and time on the first
 * line; the LLVM cpu and features on the second, "- -" for this
 * machine's. */
static ts_status write_options(ts_measurer *m)
{
	char *path = ts_measure_file(m->dir, "options", -1);
	const char *cpu = m->opt.cpu && *m->opt.cpu ? m->opt.cpu : "-";
	const char *feat = m->opt.features && *m->opt.features ?
		m->opt.features : "-";
	char *text = ts_asprintf("%d %d %.17g %d\n%s %s\n", m->opt.threads,
		m->opt.flush_cache ? 1 : 0, m->opt.min_repeat_s,
		m->opt.pipeline ? 1 : 0, cpu, feat);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	bool ok = fd >= 0 && ts_measure_write_all(fd, text, strlen(text));

	if (fd >= 0)
		close(fd);
	return ok ? TS_OK : ts_ctx_set_error(m->ctx, "measure: cannot write "
		"'%s': %s", path, strerror(errno));
}

/* Write the DAG of "m" as .tsl text. */
static ts_status write_dag(ts_measurer *m)
{
	char *path = ts_measure_file(m->dir, "dag.tsl", -1);
	FILE *fp = fopen(path, "w");

	if (!fp)
		return ts_ctx_set_error(m->ctx, "measure: cannot write '%s': "
			"%s", path, strerror(errno));
	ts_dag_print(fp, m->dag);
	if (fclose(fp) != 0)
		return ts_ctx_set_error(m->ctx, "measure: cannot write '%s'",
			path);
	return TS_OK;
}

/* Check that the DAG printed for the worker, "text", reads back as the
 * same DAG with its arguments in the same order. */
static ts_status check_dag_text(ts_measurer *m, const char *text)
{
	ts_ctx *scratch = ts_ctx_alloc();
	ts_dag *d = text ? ts_parse_string(scratch, "measured.tsl", text)
		: NULL;
	bool same = d && !strcmp(ts_dag_hash(d), m->hash) &&
		d->ninputs == m->dag->ninputs &&
		d->noutputs == m->dag->noutputs;

	for (int i = 0; same && i < d->ninputs; i++)
		same = !strcmp(d->inputs[i]->name, m->dag->inputs[i]->name);
	for (int i = 0; same && i < d->noutputs; i++)
		same = !strcmp(d->outputs[i]->name, m->dag->outputs[i]->name);
	ts_ctx_free(scratch);
	if (!same)
		return ts_ctx_set_error(m->ctx, "measure: DAG '%s' does not "
			"read back from its printed form, so a worker process "
			"cannot rebuild it", m->dag->name ? m->dag->name : "?");
	return TS_OK;
}

/* The innermost iterations the interpreter needs for "dag". */
static double eval_work(const ts_dag *dag)
{
	double work = 0;

	for (int i = 0; i < dag->nstages; i++) {
		const ts_stage *s = dag->stages[i];
		double w = (double)ts_tensor_size(s->out);
		for (int r = 0; r < s->nraxes; r++)
			w *= (double)s->raxes[r]->extent;
		work += w;
	}
	return work;
}

/* Run "prog measure-worker dir [--reference]" with its standard input
 * and output on "fd" (or /dev/null when -1), in its own process group;
 * return its pid or -1.  Only async-signal-safe calls after fork. */
static pid_t spawn(ts_measurer *m, int fd, bool reference)
{
	char *argv[] = { m->worker_path, "measure-worker", m->dir,
		reference ? "--reference" : NULL, NULL };
	char *err = ts_measure_file(m->dir, "worker.err", -1);
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	setpgid(0, 0);
#ifdef __linux__
	/* A serving worker notices the caller's end by the socket closing
	 * and cleans up; the reference writer just dies with the caller. */
	if (reference)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
	if (fd < 0)
		fd = open("/dev/null", O_RDWR);
	dup2(fd, 0);
	dup2(fd, 1);
	fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0)
		dup2(fd, 2);
	/* Nothing else of the caller's: a worker holding the caller's
	 * connections to an MPI launcher would outlive a caller that died
	 * and hold up the end of the whole job. */
	if (close_range(3, ~0U, 0) < 0)
		for (int i = 3; i < 1024; i++)
			close(i);
	execv(argv[0], argv);
	_exit(127);
}

/* The first lines of the file "what" of the folder of "m", or "". */
static const char *file_tail(ts_measurer *m, const char *what)
{
	char *s = ts_measure_read_text(ts_measure_file(m->dir, what, -1));
	size_t n = s ? strlen(s) : 0;

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
	if (n > 600)
		s = ts_asprintf("...%s", s + n - 600);
	return n ? ts_asprintf(": %s", s) : "";
}

/* Compute the reference outputs with the naive schedule compiled, in a
 * worker process, for a DAG too large for the interpreter. */
static ts_status reference_by_worker(ts_measurer *m)
{
	int status = 0;
	pid_t pid = spawn(m, -1, true);

	if (pid < 0)
		return ts_ctx_set_error(m->ctx, "measure: fork: %s",
			strerror(errno));
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return ts_ctx_set_error(m->ctx, "measure: the reference of "
			"'%s' by the naive schedule failed (worker '%s', status "
			"%d)%s", m->dag->name ? m->dag->name : "?",
			m->worker_path, status, file_tail(m, "worker.err"));
	return TS_OK;
}

/* Write the inputs of "m" from its seed and the reference outputs. */
static ts_status write_arrays(ts_measurer *m)
{
	const ts_dag *d = m->dag;
	ts_array **in = ts_dag_random_inputs(m->ctx, d, m->seed);
	ts_array **out = ts_new_array(ts_array *, d->noutputs + 1);
	double limit = m->opt.eval_limit > 0 ? m->opt.eval_limit : 2e9;

	if (!in)
		return TS_ERROR;
	for (int i = 0; i < d->ninputs; i++)
		if (ts_npy_write(m->ctx, ts_measure_file(m->dir, "in", i),
		    in[i]) < 0)
			return TS_ERROR;
	if (eval_work(d) > limit) {
		ts_ctx_warn(m->ctx, "measure: '%s' needs %.3g iterations, more "
			"than the interpreter's limit %.3g: the reference "
			"outputs come from the naive schedule compiled",
			d->name ? d->name : "?", eval_work(d), limit);
		return reference_by_worker(m);
	}
	if (ts_eval(m->ctx, d, in, out) < 0)
		return TS_ERROR;
	for (int i = 0; i < d->noutputs; i++)
		if (ts_npy_write(m->ctx, ts_measure_file(m->dir, "ref", i),
		    out[i]) < 0)
			return TS_ERROR;
	return TS_OK;
}

/* Create the private folder of "m". */
static ts_status dir_create(ts_measurer *m)
{
	const char *tmp = getenv("TMPDIR");
	char *tmpl = ts_asprintf("%s/tessel-measure-XXXXXX",
		tmp && *tmp ? tmp : "/tmp");

	if (!mkdtemp(tmpl))
		return ts_ctx_set_error(m->ctx, "measure: cannot create a "
			"folder '%s': %s", tmpl, strerror(errno));
	m->dir = tmpl;
	return TS_OK;
}

/* Read the next line from the worker of "m" into "*line" before the
 * monotonic time "deadline"; return 1, 0 on timeout, -1 at the end. */
static int next_line(ts_measurer *m, double deadline, char **line)
{
	for (;;) {
		char *nl = m->in ? memchr(m->in, '\n', m->nin) : NULL;
		struct pollfd p = { .fd = m->fd, .events = POLLIN };
		double left = deadline - ts_measure_now();
		ssize_t k;
		int r;
		if (nl) {
			size_t len = (size_t)(nl - m->in);
			*line = ts_strndup(m->in, len);
			memmove(m->in, nl + 1, m->nin - len - 1);
			m->nin -= len + 1;
			return 1;
		}
		if (left <= 0)
			return 0;
		r = poll(&p, 1, (int)TS_MIN(left * 1e3 + 1, 1e9));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			continue;
		if (m->nin + 65536 > m->capin) {
			m->in = ts_grow(m->in, 1, m->capin, m->nin + 131072);
			m->capin = m->nin + 131072;
		}
		k = read(m->fd, m->in + m->nin, m->capin - m->nin);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return -1;
		m->nin += (size_t)k;
	}
}

/* Start the worker of "m" and wait until it is ready. */
static ts_status worker_start(ts_measurer *m)
{
	int sv[2];
	char *line = NULL, hash[64];
	int proto = 0, r;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return ts_ctx_set_error(m->ctx, "measure: socketpair: %s",
			strerror(errno));
	m->worker = spawn(m, sv[1], false);
	close(sv[1]);
	if (m->worker < 0) {
		m->worker = 0;
		close(sv[0]);
		return ts_ctx_set_error(m->ctx, "measure: fork: %s",
			strerror(errno));
	}
	m->fd = sv[0];
	m->nin = 0;
	m->started++;
	r = next_line(m, ts_measure_now() + m->opt.build_timeout_s + 30,
		&line);
	if (r == 1 && sscanf(line, "ready %d %63s", &proto, hash) == 2 &&
	    proto == TS_MEASURE_PROTOCOL && !strcmp(hash, m->hash))
		return TS_OK;
	worker_stop(m);
	return ts_ctx_set_error(m->ctx, "measure: the worker program '%s' "
		"did not start for '%s' (%s)%s", m->worker_path,
		m->dag->name ? m->dag->name : "?", r == 1 ? line : r == 0 ?
		"no answer" : "it exited", file_tail(m, "worker.err"));
}

/* The DAG of "m" as .tsl text, or NULL. */
static char *dag_text(ts_measurer *m)
{
	char *buf = NULL, *text;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);

	if (!fp)
		return NULL;
	ts_dag_print(fp, m->dag);
	if (fclose(fp) != 0) {
		free(buf);
		return NULL;
	}
	text = ts_strdup(buf);
	free(buf);
	return text;
}

/* Make "m" measure on the ranks of its cluster: what they need to
 * rebuild the DAG, and no folder nor worker here until no rank is left. */
static ts_measurer *remote_new(ts_measurer *m)
{
	struct ts_cluster_dag *d = &m->cdag;

	d->text = dag_text(m);
	if (!d->text || check_dag_text(m, d->text) < 0)
		return NULL;
	d->id = ts_cluster_dag_id(m->opt.cluster);
	d->hash = m->hash;
	d->options = ts_measure_options_encode(&m->opt);
	d->seed = m->seed;
	ts_ctx_on_free(m->ctx, measurer_cleanup, m);
	return m;
}

/* Prepare measuring candidates of "dag" in "ctx" with "opt" and inputs
 * from "seed": folder, reference outputs, worker.
 * Requires: a DAG that prints and parses back.  Produces: a measurer. */
ts_measurer *ts_measurer_new(ts_ctx *ctx, const ts_dag *dag,
	const ts_measure_options *opt, uint64_t seed)
{
	ts_measurer *m;

	if (!ctx || !dag)
		return NULL;
	m = ts_new(ts_measurer);
	m->ctx = ctx;
	m->dag = dag;
	m->hash = ts_dag_hash(dag);
	m->opt = opt ? *opt : ts_measure_options_default();
	m->seed = seed;
	m->fd = -1;
	if (options_check(ctx, &m->opt) < 0)
		return NULL;
	m->fault = ts_fault_from_name(getenv("TS_MEASURE_FAULT"));
	if (m->fault < 0 && getenv("TS_MEASURE_FAULT"))
		ts_ctx_warn(ctx, "measure: unknown TS_MEASURE_FAULT '%s' "
			"ignored", getenv("TS_MEASURE_FAULT"));
	if (m->fault < 0)
		m->fault = TS_FAULT_NONE;
	if (m->opt.cluster)
		return remote_new(m);
	if (!(m->worker_path = worker_program()))
		return ts_ctx_set_error(ctx, "measure: no worker program: set "
			"TS_MEASURE_WORKER to the tessel program"), NULL;
	if (dir_create(m) < 0)
		return NULL;
	ts_ctx_on_free(ctx, measurer_cleanup, m);
	if (write_options(m) < 0 || write_dag(m) < 0 ||
	    check_dag_text(m, ts_measure_read_text(ts_measure_file(m->dir,
		"dag.tsl", -1))) < 0 || write_arrays(m) < 0 ||
	    worker_start(m) < 0) {
		ts_measurer_free(m);
		return NULL;
	}
	return m;
}

/* Make the children of "m" misbehave as "fault" says (tests only). */
ts_status ts_measurer_set_fault(ts_measurer *m, const char *fault)
{
	int f = fault ? ts_fault_from_name(fault) : TS_FAULT_NONE;

	if (f < 0)
		return ts_ctx_set_error(m->ctx, "measure: unknown fault '%s'",
			fault);
	m->fault = f;
	return TS_OK;
}

/* Return the number of candidates "m" has measured. */
int ts_measurer_count(const ts_measurer *m)
{
	return m->count;
}

/* Return the number of worker processes "m" has started. */
int ts_measurer_built_ahead(const ts_measurer *m)
{
	return m ? m->ahead : 0;
}

int ts_measurer_workers_started(const ts_measurer *m)
{
	return m->started;
}

/* Give "out" the failure "code" with the message "fmt". */
static void result_fail(ts_measure_result *out, ts_error_code code,
	const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void result_fail(ts_measure_result *out, ts_error_code code,
	const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out->error = code;
	out->message = ts_vasprintf(fmt, ap);
	va_end(ap);
	/* A failed candidate has no time, even if samples arrived before
	 * it failed (a candidate that kills the worker goes on running). */
	out->median_s = 0;
	out->nsamples = 0;
	out->samples = NULL;
}

/* Order the doubles at "a" and "b" for qsort. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Read the "result" line "line" into "out". */
static void parse_result(const char *line, ts_measure_result *out)
{
	ts_measure_parse_result(line + 7, out);
}

/* Read the text "s" of a result after its tag into "out". */
void ts_measure_parse_result(const char *s, ts_measure_result *out)
{
	char *p;
	long code = strtol(s, &p, 10);
	double *sorted;
	int n;

	out->error = code >= 0 && code < TS_ERR_COUNT ? (ts_error_code)code
		: TS_ERR_RUNTIME;
	out->max_abs_err = strtod(p, &p);
	out->build_s = strtod(p, &p);
	n = (int)strtol(p, &p, 10);
	out->nsamples = TS_MAX(n, 0);
	out->samples = ts_new_atomic(double, out->nsamples + 1);
	for (int i = 0; i < out->nsamples; i++)
		out->samples[i] = strtod(p, &p);
	if (out->error != TS_ERR_NONE || out->nsamples == 0)
		return;
	sorted = ts_new_atomic(double, out->nsamples);
	memcpy(sorted, out->samples, sizeof(double) * (size_t)n);
	qsort(sorted, (size_t)n, sizeof(double), cmp_double);
	out->median_s = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] +
		sorted[n / 2]) / 2;
}

/* Undo the escapes of a "message" line's text "s". */
static char *unescape(const char *s)
{
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_puts(&b, "");
	for (; *s; s++) {
		if (*s == '\\' && s[1] == 'n')
			ts_buf_putc(&b, '\n'), s++;
		else if (*s == '\\' && s[1] == '\\')
			ts_buf_putc(&b, '\\'), s++;
		else
			ts_buf_putc(&b, *s);
	}
	return b.s;
}

/* What one candidate has told so far. */
struct exchange {
	pid_t child;		/* 0 until "start" */
	bool built;		/* "built" seen: the run timeout applies */
	bool done;		/* "result" seen */
	const char *message;
};

/* Describe the wait "status" of a child that ended without a result,
 * "built" or not, into "out". */
static void child_died(ts_measurer *m, int status, const struct exchange *x,
	ts_measure_result *out)
{
	const char *phase = x->built ? "running" : "building";
	ts_error_code code = x->built ? TS_ERR_RUNTIME : TS_ERR_COMPILE;

	if (WIFSIGNALED(status))
		result_fail(out, code, "the candidate crashed with signal %d "
			"(%s) while %s%s", WTERMSIG(status),
			strsignal(WTERMSIG(status)), phase,
			file_tail(m, "child.err"));
	else
		result_fail(out, code, "the candidate exited with status %d "
			"while %s%s", status, phase, file_tail(m, "child.err"));
}

/* Handle the worker's line "line" about the current candidate; return
 * true when the candidate is over. */
static bool handle_line(ts_measurer *m, const char *line, double *deadline,
	struct exchange *x, ts_measure_result *out)
{
	long v;
	int ahead = 0;

	if (sscanf(line, "start %ld %d", &v, &ahead) >= 1) {
		x->child = (pid_t)v;
		m->ahead += ahead;
	} else if (!strncmp(line, "built ", 6)) {
		x->built = true;
		out->build_s = strtod(line + 6, NULL);
		*deadline = ts_measure_now() + m->opt.run_timeout_s;
	} else if (!strcmp(line, "tick")) {
		*deadline = ts_measure_now() + m->opt.run_timeout_s;
	} else if (!strncmp(line, "message ", 8)) {
		x->message = unescape(line + 8);
	} else if (!strncmp(line, "result ", 7)) {
		parse_result(line, out);
		out->message = out->error ? x->message : NULL;
		x->done = true;
	} else if (sscanf(line, "exit %ld", &v) == 1) {
		if (!x->done)
			child_died(m, (int)v, x, out);
		return true;
	}
	return false;
}

/* After the deadline of the candidate "x": kill its child and wait for
 * the worker to report its end (else stop the worker too). */
static void candidate_timeout(ts_measurer *m, struct exchange *x,
	ts_measure_result *out)
{
	double limit = x->built ? m->opt.run_timeout_s
		: m->opt.build_timeout_s;
	double deadline = ts_measure_now() + 5;
	char *line;

	result_fail(out, x->built ? TS_ERR_RUN_TIMEOUT : TS_ERR_BUILD_TIMEOUT,
		"the candidate took more than %g s to %s", limit,
		x->built ? "run" : "build");
	out->max_abs_err = NAN;
	out->nsamples = 0;
	if (x->child > 0)
		kill(x->child, SIGKILL);
	while (x->child > 0 && next_line(m, deadline, &line) == 1)
		if (!strncmp(line, "exit ", 5))
			return;
	worker_stop(m);
}

/* The request for "json" as the worker reads it. */
static char *request_text(ts_measurer *m, const char *json)
{
	return ts_asprintf("measure %s %zu\n%s", ts_fault_name(m->fault),
		strlen(json), json);
}

/* Send the requests "msg" to the worker of "m" in one piece (so that a
 * worker that finds one finds all), starting a worker when none runs or
 * the one running has died. */
static ts_status send_requests(ts_measurer *m, const char *msg)
{
	size_t n = strlen(msg);

	for (int attempt = 0; attempt < 2; attempt++) {
		size_t done = 0;
		if (m->fd < 0 && worker_start(m) < 0)
			return TS_ERROR;
		while (done < n) {
			ssize_t k = send(m->fd, msg + done, n - done,
				MSG_NOSIGNAL);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			done += (size_t)k;
		}
		if (done == n)
			return TS_OK;
		worker_stop(m);
	}
	return ts_ctx_set_error(m->ctx, "measure: cannot send a candidate to "
		"the worker program '%s'", m->worker_path);
}

/* Send the request for "json" to the worker of "m", starting one when
 * none runs or the one running has died. */
static ts_status send_request(ts_measurer *m, const char *json)
{
	return send_requests(m, request_text(m, json));
}

/* Whether "sch" can be sent to the worker; else fill "out". */
static bool schedule_ok(ts_measurer *m, const ts_schedule *sch,
	ts_measure_result *out)
{
	const char *saved = ts_ctx_error(m->ctx);

	if (!sch || !sch->dag || strcmp(ts_dag_hash(sch->dag), m->hash)) {
		result_fail(out, TS_ERR_INVALID_SCHEDULE, "the schedule is not "
			"one of the measured DAG '%s'",
			m->dag->name ? m->dag->name : "?");
		return false;
	}
	if (ts_schedule_check(sch) < 0) {
		/* The candidate's fault, not the caller's: restore the
		 * context's message. */
		result_fail(out, TS_ERR_INVALID_SCHEDULE, "%s",
			ts_ctx_error(m->ctx));
		ts_ctx_clear_error(m->ctx);
		if (saved)
			ts_ctx_set_error(m->ctx, "%s", saved);
		return false;
	}
	return true;
}

/* Read the lines of the candidate whose request the worker of "m" has
 * (after those before it) into "out", its deadline counting from now. */
static void collect(ts_measurer *m, ts_measure_result *out)
{
	struct exchange x = { .child = 0 };
	double deadline = ts_measure_now() + m->opt.build_timeout_s;
	char *line;

	for (;;) {
		int r = next_line(m, deadline, &line);
		if (r == 0) {
			candidate_timeout(m, &x, out);
			return;
		}
		if (r < 0) {
			worker_stop(m);
			result_fail(out, x.built ? TS_ERR_RUNTIME :
				TS_ERR_COMPILE, "the worker process died%s",
				file_tail(m, "worker.err"));
			return;
		}
		if (handle_line(m, line, &deadline, &x, out))
			return;
	}
}

/* Start the result "out" of a candidate: nothing measured yet. */
static void result_start(ts_measurer *m, ts_measure_result *out)
{
	memset(out, 0, sizeof(*out));
	out->max_abs_err = NAN;
	m->count++;
}

/* Measure "sch" with "m" into "out"; a failing candidate is out->error.
 * Requires: a schedule of the measurer's DAG.  Produces: a checked
 * median time or an error code with its message. */
ts_status ts_measure(ts_measurer *m, const ts_schedule *sch,
	ts_measure_result *out)
{
	if (!m || !out)
		return TS_ERROR;
	if (m->opt.cluster)
		return ts_measure_batch(m, 1, &sch, out);
	result_start(m, out);
	if (!schedule_ok(m, sch, out))
		return TS_OK;
	if (send_request(m, ts_schedule_to_json(sch)) < 0)
		return TS_ERROR;
	collect(m, out);
	return TS_OK;
}

/* The requests of a batch that the worker of "m" holds: those before
 * "sent", sent to the worker started "started"-th. */
struct queue {
	int sent;
	int started;
};

/* Make sure the worker of "m" holds the requests of "json" (NULL: none
 * to send) from "from", the first not yet answered, to "upto", in
 * order: a worker started again meanwhile lost them, and is sent them
 * anew. */
static ts_status queue_to(ts_measurer *m, struct queue *q, char **json,
	int from, int upto)
{
	for (int attempt = 0; ; attempt++) {
		ts_buf b;
		int first;
		if (m->fd < 0 || m->started != q->started)
			q->sent = from;
		first = q->sent;
		ts_buf_init(&b);
		ts_buf_puts(&b, "");
		for (; q->sent <= upto; q->sent++)
			if (json[q->sent])
				ts_buf_puts(&b, request_text(m, json[q->sent]));
		if (!b.len)
			return TS_OK;
		if (send_requests(m, b.s) < 0)
			return TS_ERROR;
		if (m->started == q->started || first == from) {
			q->started = m->started;
			return TS_OK;
		}
		/* The worker died before taking these: a new one holds them
		 * alone, without those it lost before them. */
		if (attempt == 2)
			return ts_ctx_set_error(m->ctx, "measure: the worker "
				"program '%s' keeps dying", m->worker_path);
		worker_stop(m);
	}
}

/* The first of the "n" requests "json" after "i" that is sent, "k"
 * times over (n when none). */
static int next_sent(char **json, int n, int i, int k)
{
	while (k-- > 0)
		do
			i++;
		while (i < n && !json[i]);
	return TS_MIN(i, n);
}

/* Measure the "n" schedules "sch" with the worker of "m" into "out", in
 * order, the requests of the next two candidates sent before the results
 * of one are read: a pipelining worker builds the next while this one
 * checks its output, and when its turn comes, the one after it is there
 * to be built. */
static ts_status local_batch(ts_measurer *m, int n,
	const ts_schedule *const *sch, ts_measure_result *out)
{
	char **json = ts_new_array(char *, n + 1);
	struct queue q = { 0, -1 };

	for (int i = 0; i < n; i++) {
		result_start(m, &out[i]);
		if (schedule_ok(m, sch[i], &out[i]))
			json[i] = ts_schedule_to_json(sch[i]);
	}
	for (int i = 0; i < n; i++) {
		int upto = m->opt.pipeline ? next_sent(json, n, i, 2) : i;
		if (!json[i])
			continue;
		if (queue_to(m, &q, json, i, TS_MIN(upto, n - 1)) < 0)
			return TS_ERROR;
		collect(m, &out[i]);
	}
	return TS_OK;
}

/* Measure here what the ranks of "m" could not: "done"[i] false. */
static ts_status measure_rest(ts_measurer *m, int n,
	const ts_schedule *const *sch, ts_measure_result *out,
	const bool *done)
{
	ts_measure_options o = m->opt;

	o.cluster = NULL;
	for (int i = 0; i < n; i++) {
		if (done[i])
			continue;
		if (!m->local && !(m->local = ts_measurer_new(m->ctx, m->dag,
		    &o, m->seed)))
			return TS_ERROR;
		m->local->fault = m->fault;
		if (ts_measure(m->local, sch[i], &out[i]) < 0)
			return TS_ERROR;
	}
	return TS_OK;
}

/* Measure the "n" schedules "sch" of "m" on the ranks of its cluster,
 * spread over them; the ones that do not check are not sent. */
static ts_status remote_batch(ts_measurer *m, int n,
	const ts_schedule *const *sch, ts_measure_result *out)
{
	char **json = ts_new_array(char *, n + 1);
	bool *done = ts_new_atomic(bool, n + 1);

	memset(done, 0, sizeof(bool) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].max_abs_err = NAN;
		m->count++;
		if (!schedule_ok(m, sch[i], &out[i]))
			done[i] = true;
		else
			json[i] = ts_schedule_to_json(sch[i]);
	}
	ts_cluster_measure(m->opt.cluster, m->ctx, &m->cdag, n, json,
		ts_fault_name(m->fault), out, done);
	return measure_rest(m, n, sch, out, done);
}

/* Measure the "n" schedules "sch" with "m" into "out", in order. */
ts_status ts_measure_batch(ts_measurer *m, int n,
	const ts_schedule *const *sch, ts_measure_result *out)
{
	if (!m || !out)
		return TS_ERROR;
	if (m->opt.cluster)
		return remote_batch(m, n, sch, out);
	return local_batch(m, n, sch, out);
}
