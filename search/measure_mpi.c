/* Measuring on the ranks of an MPI job (see include/tessel/measure.h).
 *
 * Rank 0 runs the search; every other rank waits for requests, each a
 * message of text:
 *
 *	rank -> 0	HELLO	"<protocol> <target key> <host> <pid>"
 *	0 -> rank	WELCOME	"ok", or "refused <why>"
 *	0 -> rank	DAG	"<id> <seed> <options>\n<.tsl text>"
 *	0 -> rank	MEASURE	"<job> <dag id> <fault>\n<schedule JSON>"
 *	rank -> 0	RESULT	"<job> <code> <max abs err> <build s> <n>
 *				 <s1> ... <sn>\n<message>"
 *	rank -> 0	LOST	"<job> <why>": the rank cannot rebuild the DAG
 *	0 -> rank	STOP	"", or "abandon" when a rank was lost
 *
 * A rank gets one candidate at a time, and a DAG before its first
 * candidate.  Nothing here blocks without a deadline: a message is found
 * by MPI_Iprobe, received by MPI_Irecv and MPI_Test, sent by MPI_Isend
 * and MPI_Test, all polled with a millisecond's sleep between two polls
 * (a busy wait would take a core from the measurements of a rank on the
 * same machine) and given up when their deadline passes.  The
 * communicator returns errors instead of aborting; a rank that errs or
 * misses its deadline is lost, and its candidate goes back to the queue.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <tessel/measure.h>

#include "support/support.h"
#include "search/measure_internal.h"

#ifdef TS_HAVE_MPI
#include <mpi.h>

#define TS_CLUSTER_PROTOCOL 1

enum tag { TAG_HELLO = 1, TAG_WELCOME, TAG_DAG, TAG_MEASURE, TAG_RESULT,
	TAG_LOST, TAG_STOP };

/* Deadlines in seconds: meeting the other ranks, and one message whose
 * receiver is known to be waiting for it. */
#define HELLO_S 120.0
#define MESSAGE_S 30.0

/* What rank 0 knows of one other rank. */
struct rank {
	char *host;
	bool alive;		/* welcomed and not lost */
	bool refused;		/* another target: it has left */
	int job;		/* the job it measures, -1: idle */
	int slot;		/* that job's index in the batch */
	double deadline;	/* its answer is due by then */
	ts_vec dags;		/* ids of the DAGs it has (as pointers) */
	char *pending;		/* buffer of a send given up, kept alive */
	pid_t pid;		/* its process, when on rank 0's machine */
	int measured;
};

struct ts_cluster {
	ts_ctx *ctx;
	int rank, size;
	const char *key;
	struct rank *ranks;	/* rank 0's view, [size] */
	int workers, lost;
	int next_dag, next_job;
	bool finalized;
	bool abandon;		/* a rank was lost: leave without
				 * MPI_Finalize */
	/* Test faults of this rank: after "fault_after" measurements,
	 * exit (1) or stop answering (2). */
	int fault_kind, fault_after;
	double idle_s;		/* a measuring rank's wait for rank 0 */
};

/* Sleep a millisecond between two polls. */
static void nap(void)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
}

/* Wait for the request "req" to complete before "deadline"; on timeout
 * or error, leave it and return false. */
static bool wait_request(MPI_Request *req, double deadline)
{
	for (;;) {
		int flag = 0;
		if (MPI_Test(req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return false;
		if (flag)
			return true;
		if (ts_measure_now() > deadline)
			return false;
		nap();
	}
}

/* Send the text "s" with "tag" to "dst", done before "deadline"; on
 * failure "*keep" (may be NULL) receives the buffer MPI may still
 * read. */
static bool send_text(int dst, int tag, const char *s, double deadline,
	char **keep)
{
	MPI_Request req;
	int n = (int)strlen(s) + 1;

	if (MPI_Isend(s, n, MPI_CHAR, dst, tag, MPI_COMM_WORLD, &req) !=
	    MPI_SUCCESS)
		return false;
	if (wait_request(&req, deadline))
		return true;
	if (keep)
		*keep = (char *)s;
	return false;
}

/* Receive a message waiting from "src" with "tag" (found by a probe
 * that filled "st") before "deadline"; return its text or NULL. */
static char *recv_found(MPI_Status *st, double deadline)
{
	int n = 0;
	char *buf;
	MPI_Request req;

	if (MPI_Get_count(st, MPI_CHAR, &n) != MPI_SUCCESS || n < 0)
		return NULL;
	buf = ts_new_atomic(char, (size_t)n + 1);
	if (MPI_Irecv(buf, n, MPI_CHAR, st->MPI_SOURCE, st->MPI_TAG,
	    MPI_COMM_WORLD, &req) != MPI_SUCCESS)
		return NULL;
	if (!wait_request(&req, deadline))
		return NULL;
	buf[n] = '\0';
	return buf;
}

/* Wait for a message from "src" (or MPI_ANY_SOURCE) with "tag" (or
 * MPI_ANY_TAG) before "deadline"; return its text and fill "*st", or
 * NULL. */
static char *recv_text(int src, int tag, double deadline, MPI_Status *st)
{
	for (;;) {
		int flag = 0;
		if (MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, st) !=
		    MPI_SUCCESS)
			return NULL;
		if (flag)
			return recv_found(st, deadline + MESSAGE_S);
		if (ts_measure_now() > deadline)
			return NULL;
		nap();
	}
}

/* Whether this process was started by an MPI launcher with more than
 * one rank. */
static bool in_job(void)
{
	const char *n = getenv("OMPI_COMM_WORLD_SIZE");

	if (!n)
		n = getenv("PMI_SIZE");
	return n && atoi(n) > 1;
}

/* Read the test fault of rank "cl->rank" from TS_MPI_FAULT. */
static void read_fault(ts_cluster *cl)
{
	const char *f = getenv("TS_MPI_FAULT");
	char kind[16];
	int rank, after;

	if (!f || sscanf(f, "%d:%15[a-z]:%d", &rank, kind, &after) != 3 ||
	    rank != cl->rank)
		return;
	cl->fault_kind = !strcmp(kind, "exit") ? 1 : !strcmp(kind, "hang") ?
		2 : 0;
	cl->fault_after = after;
}

/* Seconds from the environment variable "name", or "dflt". */
static double env_seconds(const char *name, double dflt)
{
	const char *v = getenv(name);
	double s = v ? strtod(v, NULL) : 0;

	return s > 0 ? s : dflt;
}

/* Leave the MPI job (once).  Once a rank is lost, MPI_Finalize, which
 * waits for every rank, may wait for ever (Open MPI 4 does when a dead
 * rank's descendants lived on a moment), so the job is left without it:
 * Open MPI's launcher with --enable-recovery accepts that. */
static void finalize(ts_cluster *cl)
{
	if (!cl->finalized && !cl->abandon)
		MPI_Finalize();
	cl->finalized = true;
}

/* This machine's name. */
static char *host_name(void)
{
	char h[256] = "?";

	gethostname(h, sizeof(h) - 1);
	h[sizeof(h) - 1] = '\0';
	return ts_strdup(h);
}

/* Mark "r", rank "i" of "cl", lost for "why". */
static void rank_lose(ts_cluster *cl, int i, const char *why)
{
	struct rank *r = &cl->ranks[i];

	if (!r->alive)
		return;
	r->alive = false;
	cl->workers--;
	cl->lost++;
	ts_ctx_warn(cl->ctx, "mpi: rank %d (%s) %s: it is left out%s", i,
		r->host ? r->host : "?", why, r->job >= 0 ?
		", and its candidate is measured again elsewhere" : "");
	r->job = -1;
}

/* Meet rank "i" of "cl" on rank 0: read its HELLO, compare its key,
 * answer. */
static void meet(ts_cluster *cl, int i, double deadline)
{
	struct rank *r = &cl->ranks[i];
	MPI_Status st;
	char *hello = recv_text(i, TAG_HELLO, deadline, &st);
	char key[512] = "", host[256] = "?";
	int proto = 0;
	long pid = 0;
	const char *answer = "ok";

	r->job = -1;
	if (!hello || sscanf(hello, "%d %511s %255s %ld", &proto, key, host,
	    &pid) < 2) {
		r->host = ts_strdup("?");
		r->alive = true;
		cl->workers++;
		rank_lose(cl, i, "did not introduce itself");
		return;
	}
	r->host = ts_strdup(host);
	if (!strcmp(host, host_name()))
		r->pid = (pid_t)pid;
	if (proto != TS_CLUSTER_PROTOCOL)
		answer = ts_asprintf("refused: protocol %d, rank 0 speaks %d",
			proto, TS_CLUSTER_PROTOCOL);
	else if (strcmp(key, cl->key))
		answer = ts_asprintf("refused: its target is '%s', rank 0's "
			"is '%s'", key, cl->key);
	if (strcmp(answer, "ok"))
		ts_ctx_warn(cl->ctx, "mpi: rank %d (%s) %s: it measures "
			"nothing (every rank must describe the same target)",
			i, r->host, answer);
	r->refused = strcmp(answer, "ok") != 0;
	r->alive = send_text(i, TAG_WELCOME, answer, ts_measure_now() +
		MESSAGE_S, &r->pending) && !r->refused;
	cl->workers += r->alive;
}

/* ts_cluster_free for ts_ctx_on_free. */
static void cluster_cleanup(void *cl)
{
	ts_cluster_free(cl);
}

/* Join the job as "cl"'s rank: rank 0 meets the others, the others
 * introduce themselves. */
static ts_cluster *cluster_start(ts_cluster *cl)
{
	double deadline = ts_measure_now() + HELLO_S;

	if (cl->rank != 0) {
		char *hello = ts_asprintf("%d %s %s %ld", TS_CLUSTER_PROTOCOL,
			cl->key, host_name(), (long)getpid());
		send_text(0, TAG_HELLO, hello, deadline, NULL);
		return cl;
	}
	cl->ranks = ts_new_array(struct rank, cl->size);
	for (int i = 1; i < cl->size; i++)
		meet(cl, i, deadline);
	return cl;
}

/* Leave the launcher's core binding: every online CPU. */
static void unbind(void)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	for (long i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET((int)i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Join the MPI job this process runs in. */
ts_cluster *ts_cluster_join(ts_ctx *ctx, int *rank)
{
	ts_cluster *cl;
	int provided;

	*rank = 0;
	if (!in_job())
		return NULL;
	if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided) !=
	    MPI_SUCCESS)
		return ts_ctx_set_error(ctx, "mpi: MPI_Init failed"), NULL;
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	unbind();
	cl = ts_new(ts_cluster);
	cl->ctx = ctx;
	MPI_Comm_rank(MPI_COMM_WORLD, &cl->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &cl->size);
	*rank = cl->rank;
	cl->idle_s = env_seconds("TS_MPI_IDLE_TIMEOUT", 1800);
	read_fault(cl);
	if (cl->size < 2) {
		finalize(cl);
		return NULL;
	}
	if (cl->rank == 0)
		ts_ctx_on_free(cl->ctx, cluster_cleanup, cl);
	return cl;
}

/* Introduce the ranks of "cl" with the key "key". */
void ts_cluster_meet(ts_cluster *cl, const char *key)
{
	cl->key = ts_strdup(key);
	cluster_start(cl);
}

int ts_cluster_size(const ts_cluster *cl)
{
	return cl ? cl->size : 1;
}

int ts_cluster_workers(const ts_cluster *cl)
{
	return cl ? cl->workers : 0;
}

int ts_cluster_lost(const ts_cluster *cl)
{
	return cl ? cl->lost : 0;
}

/* Tell every rank but 0 to stop, and leave the job. */
void ts_cluster_free(ts_cluster *cl)
{
	if (!cl || cl->finalized)
		return;
	/* Lost ranks too: one that was only slow then leaves at once
	 * rather than at its idle timeout, which MPI_Finalize waits for. */
	cl->abandon = cl->lost > 0;
	for (int i = 1; cl->rank == 0 && cl->ranks && i < cl->size; i++)
		if (!cl->ranks[i].refused)
			send_text(i, TAG_STOP, cl->abandon ? "abandon" : "",
				ts_measure_now() +
				(cl->ranks[i].alive ? MESSAGE_S : 0.01),
				&cl->ranks[i].pending);
	finalize(cl);
}

/* Return a fresh DAG id of "cl". */
int ts_cluster_dag_id(ts_cluster *cl)
{
	return ++cl->next_dag;
}

/* Whether rank "r" has the DAG "id". */
static bool rank_has_dag(const struct rank *r, int id)
{
	for (int i = 0; i < r->dags.n; i++)
		if ((intptr_t)r->dags.v[i] == id)
			return true;
	return false;
}

/* The deadline of one candidate of options "o" (text of
 * ts_measure_options_encode), first of its DAG on its rank or not: the
 * rank's own timeouts, a restart of its worker, and a margin;
 * TS_MPI_TIMEOUT replaces it. */
static double candidate_deadline(const char *o, bool first)
{
	ts_measure_options mo;
	double s;

	if (ts_measure_options_decode(o, &mo) < 0)
		mo = ts_measure_options_default();
	s = 2 * mo.build_timeout_s + 3 * mo.run_timeout_s + mo.min_repeat_s +
		30 + (first ? 300 : 0);
	return ts_measure_now() + env_seconds("TS_MPI_TIMEOUT", s);
}

/* Give rank "i" the job of slot "slot" of the batch: the DAG "d" if it
 * lacks it, then the candidate "json". */
static void assign(ts_cluster *cl, int i, const struct ts_cluster_dag *d,
	int slot, const char *json, const char *fault)
{
	struct rank *r = &cl->ranks[i];
	bool first = !rank_has_dag(r, d->id);
	double deadline = ts_measure_now() + MESSAGE_S;
	char *msg;

	if (first) {
		msg = ts_asprintf("%d %llu %s\n%s", d->id,
			(unsigned long long)d->seed, d->options, d->text);
		if (!send_text(i, TAG_DAG, msg, deadline, &r->pending)) {
			rank_lose(cl, i, "could not be sent a DAG");
			return;
		}
		ts_vec_push(&r->dags, (void *)(intptr_t)d->id);
	}
	r->job = ++cl->next_job;
	r->slot = slot;
	r->deadline = candidate_deadline(d->options, first);
	msg = ts_asprintf("%d %d %s\n%s", r->job, d->id, fault, json);
	if (!send_text(i, TAG_MEASURE, msg, deadline, &r->pending))
		rank_lose(cl, i, "could not be sent a candidate");
}

/* Take the RESULT or LOST message "text" of rank "i" for the batch
 * "out"/"done"; return the slot it settled, or -1. */
static int settle(ts_cluster *cl, int i, int tag, const char *text,
	ts_measure_result *out, bool *done)
{
	struct rank *r = &cl->ranks[i];
	char *p;
	long job = strtol(text, &p, 10);
	int slot = r->slot;
	const char *nl;

	if (!r->alive || job != r->job)
		return -1;	/* late: its job went elsewhere */
	if (tag == TAG_LOST) {
		rank_lose(cl, i, ts_asprintf("could not measure:%s", p));
		return -1;
	}
	ts_measure_parse_result(p, &out[slot]);
	nl = strchr(p, '\n');
	out[slot].message = out[slot].error && nl && nl[1] ?
		ts_strdup(nl + 1) : NULL;
	if (out[slot].error)
		out[slot].median_s = 0;
	done[slot] = true;
	r->job = -1;
	r->measured++;
	return slot;
}

/* Whether the process of "r" is known to have ended: only a rank on
 * rank 0's machine can tell before its deadline. */
static bool rank_dead(const struct rank *r)
{
	return r->pid > 0 && kill(r->pid, 0) < 0 && errno == ESRCH;
}

/* Lose every busy rank of "cl" that died or is past its deadline. */
static void check_deadlines(ts_cluster *cl)
{
	double now = ts_measure_now();

	for (int i = 1; i < cl->size; i++) {
		struct rank *r = &cl->ranks[i];
		if (r->alive && r->job >= 0 && now > r->deadline)
			rank_lose(cl, i, "did not answer in time");
		else if (r->alive && r->job >= 0 && rank_dead(r))
			rank_lose(cl, i, "has died");
	}
}

/* The next slot of the batch that is neither done nor given to a rank,
 * from "from" on, or -1. */
static int next_slot(ts_cluster *cl, int n, const bool *done, int from)
{
	for (int s = from; s < n; s++) {
		bool taken = done[s];
		for (int i = 1; !taken && i < cl->size; i++)
			taken = cl->ranks[i].alive && cl->ranks[i].job >= 0 &&
				cl->ranks[i].slot == s;
		if (!taken)
			return s;
	}
	return -1;
}

/* Give a job to every idle rank while slots wait; return the number of
 * busy ranks. */
static int dispatch(ts_cluster *cl, const struct ts_cluster_dag *d, int n,
	char **json, const char *fault, const bool *done)
{
	int busy = 0;

	for (int i = 1; i < cl->size; i++) {
		struct rank *r = &cl->ranks[i];
		int s;
		if (r->alive && r->job < 0 &&
		    (s = next_slot(cl, n, done, 0)) >= 0)
			assign(cl, i, d, s, json[s], fault);
		busy += r->alive && r->job >= 0;
	}
	return busy;
}

/* Measure the batch "json" of "d" on the ranks of "cl". */
void ts_cluster_measure(ts_cluster *cl, ts_ctx *ctx,
	const struct ts_cluster_dag *d, int n, char **json, const char *fault,
	ts_measure_result *out, bool *done)
{
	cl->ctx = ctx;
	while (dispatch(cl, d, n, json, fault, done) > 0) {
		MPI_Status st;
		int flag = 0;
		char *text;
		if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
		    &flag, &st) != MPI_SUCCESS)
			flag = 0;
		if (!flag) {
			check_deadlines(cl);
			nap();
			continue;
		}
		text = recv_found(&st, ts_measure_now() + MESSAGE_S);
		if (st.MPI_SOURCE <= 0 || st.MPI_SOURCE >= cl->size)
			continue;
		if (!text)
			rank_lose(cl, st.MPI_SOURCE, "lost a message");
		else if (st.MPI_TAG == TAG_RESULT || st.MPI_TAG == TAG_LOST)
			settle(cl, st.MPI_SOURCE, st.MPI_TAG, text, out, done);
	}
}

/* What a measuring rank keeps of one DAG. */
struct served {
	int id;
	ts_dag *dag;
	ts_measurer *m;
};

/* Rebuild the DAG of the message "text" on a measuring rank: parse it,
 * make a measurer.  Return NULL with a message in "ctx". */
static struct served *serve_dag(ts_ctx *ctx, const char *text)
{
	struct served *s = ts_new(struct served);
	unsigned long long seed;
	const char *nl = strchr(text, '\n');
	ts_measure_options o;

	if (!nl || sscanf(text, "%d %llu", &s->id, &seed) != 2)
		return ts_ctx_set_error(ctx, "mpi: a malformed DAG message"),
			NULL;
	/* The options follow the id and the seed on the first line. */
	{
		const char *p = text;
		for (int k = 0; k < 2 && p; k++)
			p = strchr(p + 1, ' ');
		if (!p || ts_measure_options_decode(ts_strndup(p + 1,
		    (size_t)(nl - p - 1)), &o) < 0)
			return ts_ctx_set_error(ctx, "mpi: malformed measure "
				"options in a DAG message"), NULL;
	}
	s->dag = ts_parse_string(ctx, "measured.tsl", nl + 1);
	if (!s->dag)
		return NULL;
	s->m = ts_measurer_new(ctx, s->dag, &o, (uint64_t)seed);
	return s->m ? s : NULL;
}

/* The measuring rank's answer to the candidate "json" of "s": a RESULT
 * message for job "job". */
static char *serve_measure(ts_ctx *ctx, struct served *s, int job,
	const char *fault, const char *json)
{
	ts_schedule *sch = ts_schedule_from_json(ctx, s->dag, json);
	ts_measure_result r = { .error = TS_ERR_INVALID_SCHEDULE,
		.max_abs_err = NAN };
	ts_buf b;

	ts_measurer_set_fault(s->m, strcmp(fault, "none") ? fault : NULL);
	if (!sch) {
		r.message = ts_ctx_error(ctx);
		ts_ctx_clear_error(ctx);
	} else if (ts_measure(s->m, sch, &r) < 0) {
		return NULL;
	}
	ts_buf_init(&b);
	ts_buf_printf(&b, "%d %d %.17g %.17g %d", job, (int)r.error,
		r.max_abs_err, r.build_s, r.nsamples);
	for (int i = 0; i < r.nsamples; i++)
		ts_buf_printf(&b, " %.17g", r.samples[i]);
	ts_buf_printf(&b, "\n%s", r.message ? r.message : "");
	return b.s;
}

/* Misbehave as the test fault of "cl" says, after "count"
 * measurements. */
static void serve_fault(ts_cluster *cl, int count)
{
	if (!cl->fault_kind || count < cl->fault_after)
		return;
	if (cl->fault_kind == 1)
		_exit(1);
	sleep((unsigned)cl->idle_s);
	_exit(1);
}

/* Answer the MEASURE message "text" of a measuring rank. */
static void serve_one(ts_cluster *cl, ts_vec *dags, const char *text)
{
	int job = 0, id = 0;
	char fault[32] = "none";
	const char *nl = strchr(text, '\n');
	struct served *s = NULL;
	char *answer;

	if (nl)
		sscanf(text, "%d %d %31s", &job, &id, fault);
	for (int i = 0; i < dags->n; i++)
		if (((struct served *)dags->v[i])->id == id)
			s = dags->v[i];
	answer = s && nl ? serve_measure(cl->ctx, s, job, fault, nl + 1) :
		NULL;
	if (answer)
		send_text(0, TAG_RESULT, answer, ts_measure_now() + MESSAGE_S,
			NULL);
	else
		send_text(0, TAG_LOST, ts_asprintf("%d %s", job,
			ts_ctx_error(cl->ctx) ? ts_ctx_error(cl->ctx) :
			"no such DAG"), ts_measure_now() + MESSAGE_S, NULL);
}

/* Serve rank 0 on a measuring rank until it says stop. */
int ts_cluster_serve(ts_cluster *cl)
{
	MPI_Status st;
	char *text = recv_text(0, TAG_WELCOME, ts_measure_now() + HELLO_S +
		MESSAGE_S, &st);
	ts_vec dags = { 0 };
	int count = 0;

	if (!text || strcmp(text, "ok")) {
		finalize(cl);
		if (!text)
			return ts_ctx_set_error(cl->ctx, "mpi: rank %d: rank 0 "
				"did not answer", cl->rank), 1;
		/* Not an error exit: Open MPI's launcher would end the job
		 * of the other ranks. */
		ts_ctx_warn(cl->ctx, "mpi: rank %d %s", cl->rank, text);
		return 0;
	}
	while ((text = recv_text(0, MPI_ANY_TAG, ts_measure_now() +
	    cl->idle_s, &st)) && st.MPI_TAG != TAG_STOP) {
		ts_ctx_clear_error(cl->ctx);
		if (st.MPI_TAG == TAG_DAG) {
			struct served *s = serve_dag(cl->ctx, text);
			if (s)
				ts_vec_push(&dags, s);
		} else if (st.MPI_TAG == TAG_MEASURE) {
			serve_fault(cl, count++);
			serve_one(cl, &dags, text);
		}
	}
	for (int i = 0; i < dags.n; i++)
		ts_measurer_free(((struct served *)dags.v[i])->m);
	cl->abandon = !text || !strcmp(text, "abandon");
	finalize(cl);
	if (!text)
		return ts_ctx_set_error(cl->ctx, "mpi: rank %d: nothing from "
			"rank 0 for %g s", cl->rank, cl->idle_s), 1;
	return 0;
}

#else /* !TS_HAVE_MPI */

struct ts_cluster {
	int unused;
};

/* Without MPI: no job to join, and an error inside one. */
ts_cluster *ts_cluster_join(ts_ctx *ctx, int *rank)
{
	const char *n = getenv("OMPI_COMM_WORLD_SIZE");

	*rank = 0;
	if (!n)
		n = getenv("PMI_SIZE");
	if (n && atoi(n) > 1)
		return ts_ctx_set_error(ctx, "mpi: started by mpirun with %s "
			"ranks, but this Tessel was built without MPI "
			"(install libopenmpi-dev and configure again)", n),
			NULL;
	return NULL;
}

void ts_cluster_meet(ts_cluster *cl, const char *key)
{
}

int ts_cluster_serve(ts_cluster *cl)
{
	return 1;
}

int ts_cluster_size(const ts_cluster *cl)
{
	return 1;
}

int ts_cluster_workers(const ts_cluster *cl)
{
	return 0;
}

int ts_cluster_lost(const ts_cluster *cl)
{
	return 0;
}

void ts_cluster_free(ts_cluster *cl)
{
}

int ts_cluster_dag_id(ts_cluster *cl)
{
	return 0;
}

void ts_cluster_measure(ts_cluster *cl, ts_ctx *ctx,
	const struct ts_cluster_dag *d, int n, char **json, const char *fault,
	ts_measure_result *out, bool *done)
{
}

#endif
