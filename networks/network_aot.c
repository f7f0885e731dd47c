/* A whole network ahead of time: every task's object file (ts_build_aot)
 * and a generated C driver that calls them in order over one arena,
 * linked into one shared library with one entry point.  A driver in C
 * rather than one big ts_func keeps each task's code exactly what the
 * JIT ran and timed. */
#include <config.h>

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tessel/network.h>

#include "dsl/ir.h"
#include "backends/ir.h"
#include "support/support.h"

extern char **environ;


/* Write "text" to "path". */
static ts_status write_text(ts_ctx *ctx, const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		return ts_ctx_set_error(ctx, "cannot write '%s'", path);
	return TS_OK;
}

/* The header of the network's library: the entry point and the order of
 * its arguments. */
static char *header_source(const ts_dag *dag, const char *name)
{
	ts_buf b;

	ts_buf_init(&b);
	ts_buf_printf(&b, "/* %s.h: the network '%s' compiled by Tessel.\n"
		" *\n * int %s(inputs, outputs) runs it; it returns 0, or -1 when "
		"its\n * buffers cannot be allocated.  Every array is dense, "
		"C order, aligned\n * to 64 bytes.  The buffers belong to the "
		"calling thread and stay\n * between calls, with the weights "
		"converted into Tessel's layout:\n * they are converted again "
		"when a weight comes at another address,\n * not when it is "
		"changed in place; %s_release() frees the calling\n * thread's "
		"buffers (call it after changing a weight in place, and\n * "
		"before a thread that called it ends).\n *\n",
		name, dag->name ? dag->name : name, name, name);
	for (int i = 0; i < dag->ninputs + dag->noutputs; i++) {
		bool in = i < dag->ninputs;
		const ts_tensor *t = in ? dag->inputs[i]
			: dag->outputs[i - dag->ninputs];
		ts_buf_printf(&b, " *   %s[%d] %s %s[", in ? "inputs" :
			"outputs", in ? i : i - dag->ninputs, t->name,
			ts_dtype_name(t->dtype));
		for (int d = 0; d < t->ndim; d++)
			ts_buf_printf(&b, "%s%lld", d ? ", " : "",
				(long long)t->shape[d]);
		ts_buf_puts(&b, "]\n");
	}
	ts_buf_printf(&b, " */\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
		"int %s(const void *const *inputs, void *const *outputs);\n"
		"void %s_release(void);\n#ifdef __cplusplus\n}\n#endif\n",
		name, name);
	return b.s;
}

/* Run "argv" with its output in "log"; its exit status, or -1. */
static int run_logged(char *const *argv, const char *log)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status = -1;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log,
		O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Link the driver "src" and the "n" task objects "objs" into "so". */
static ts_status link_network(ts_ctx *ctx, const char *src,
	const char *const *objs, int n, const char *so)
{
	const char *cc = getenv("CC"), *rt = ts_runtime_path(TS_FILE_RUNTIME_LIB, NULL);
	const char *log = ts_asprintf("%s.log", so);
	char **argv = ts_new_array(char *, n + 12);
	int k = 0, rc;

	if (!rt)
		return ts_ctx_set_error(ctx, "libtessel_rt.a was not found (set "
			"TS_RUNTIME_LIB to its path)");
	argv[k++] = (char *)(cc && *cc && !strchr(cc, ' ') ? cc : "cc");
	argv[k++] = "-shared";
	argv[k++] = "-fPIC";
	argv[k++] = "-O2";
	argv[k++] = "-o";
	argv[k++] = (char *)so;
	argv[k++] = (char *)src;
	for (int i = 0; i < n; i++)
		argv[k++] = (char *)objs[i];
	argv[k++] = (char *)rt;
	argv[k++] = "-fopenmp";
	argv[k++] = "-lm";
	rc = run_logged(argv, log);
	unlink(log);
	if (rc != 0)
		return ts_ctx_set_error(ctx, "linking '%s' with '%s' failed "
			"(exit %d)", so, argv[0], rc);
	return TS_OK;
}

ts_status ts_network_build_aot(ts_ctx *ctx, const ts_network *net,
	const char *dir, const char *name)
{
	const ts_partition *p = ts_network_partition(net);
	const char **sym = ts_new_array(const char *, p->ntasks + 1);
	const char **obj = ts_new_array(const char *, p->ntasks + 1);
	const char *src = ts_asprintf("%s/%s_driver.c", dir, name);

	for (int t = 0; t < p->ntasks; t++) {
		ts_func *f = ts_new(ts_func);
		*f = *ts_network_task_func(net, t);
		f->name = ts_asprintf("%s_t%d", name, t);
		if (ts_build_aot(ctx, f, dir, NULL) < 0)
			return ts_ctx_set_error(ctx, "task %d (anchor '%s'): %s",
				t, p->tasks[t]->name, ts_ctx_error(ctx));
		sym[t] = ts_func_symbol(f);
		obj[t] = ts_asprintf("%s/%s.o", dir, sym[t]);
	}
	if (write_text(ctx, src, ts_network_driver_source(net, name, sym)) < 0
	    || write_text(ctx, ts_asprintf("%s/%s.h", dir, name),
	    header_source(p->dag, name)) < 0)
		return TS_ERROR;
	return link_network(ctx, src, obj, p->ntasks,
		ts_asprintf("%s/lib%s.so", dir, name));
}
