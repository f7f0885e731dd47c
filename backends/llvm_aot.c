/* Ahead-of-time compilation: an object file for any target LLVM knows, a
 * C header, and for the host's architecture a shared library linked with
 * the system's C compiler (and libtessel_rt.a when the function has
 * parallel loops). */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dsl/ir.h"
#include "backends/ir.h"
#include "backends/llvm_internal.h"

extern char **environ;

/* The C type of an element of dtype "t" in the header. */
static const char *c_type(ts_dtype t)
{
	static const char *names[TS_DTYPE_COUNT] = {
		[TS_BOOL] = "uint8_t", [TS_I8] = "int8_t", [TS_U8] = "uint8_t",
		[TS_I16] = "int16_t", [TS_U16] = "uint16_t",
		[TS_I32] = "int32_t", [TS_U32] = "uint32_t",
		[TS_I64] = "int64_t", [TS_U64] = "uint64_t",
		/* The bits of the halves: C has no type for them. */
		[TS_F16] = "uint16_t", [TS_BF16] = "uint16_t",
		[TS_F32] = "float", [TS_F64] = "double",
	};

	return (unsigned)t < TS_DTYPE_COUNT ? names[t] : "void";
}

/* "name" made a C identifier (GC string). */
static char *c_ident(const char *name)
{
	char *s = ts_asprintf("%s%s", isdigit((unsigned char)*name) ? "_" : "",
		name);

	for (char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			*p = '_';
	return s;
}

/* The header declaring "f" as "sym", with its layout documented. */
static char *header_text(const ts_func *f, const char *sym)
{
	char *guard = ts_asprintf("TESSEL_%s_H", sym);
	ts_buf b;

	for (char *p = guard; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	ts_buf_init(&b);
	ts_buf_printf(&b, "/* %s.h: the kernel '%s', compiled by Tessel.\n *\n"
		" * Every argument is a dense array in C order (row-major), "
		"aligned to 64 bytes,\n * not overlapping any other argument.  "
		"bool is one byte holding 0 or 1;\n * f16 is IEEE binary16 held "
		"in uint16_t.  Parallel loops run on OpenMP\n * threads "
		"(OMP_NUM_THREADS).\n *\n", sym, f->name);
	for (int i = 0; i < f->nargs; i++) {
		const ts_tensor *t = f->args[i];
		ts_buf_printf(&b, " *   %-10s %s %s[", c_ident(t->name),
			i < f->ninputs ? "input " : "output", ts_dtype_name(t->dtype));
		for (int k = 0; k < t->ndim; k++)
			ts_buf_printf(&b, "%s%lld", k ? ", " : "",
				(long long)t->shape[k]);
		ts_buf_puts(&b, "]\n");
	}
	ts_buf_printf(&b, " *\n * %s_packed(args) takes the same pointers in an "
		"array.\n */\n#ifndef %s\n#define %s\n\n#include <stdint.h>\n\n"
		"#ifdef __cplusplus\nextern \"C\" {\n#define TS_RESTRICT "
		"__restrict\n#else\n#define TS_RESTRICT restrict\n#endif\n\n"
		"void %s(", sym, guard, guard, sym);
	for (int i = 0; i < f->nargs; i++)
		ts_buf_printf(&b, "%s%s%s *TS_RESTRICT %s", i ? ",\n\t" : "",
			i < f->ninputs ? "const " : "", c_type(f->args[i]->dtype),
			c_ident(f->args[i]->name));
	ts_buf_printf(&b, "%s);\nvoid %s_packed(void **args);\n\n"
		"#undef TS_RESTRICT\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n",
		f->nargs ? "" : "void", sym);
	return b.s;
}

/* Write "text" to "path". */
static ts_status write_file(ts_ctx *ctx, const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	bool ok;

	if (!fp)
		return ts_ctx_set_error(ctx, "cannot write '%s': %s", path,
			strerror(errno));
	ok = fputs(text, fp) >= 0;
	ok = fclose(fp) == 0 && ok;
	if (!ok)
		return ts_ctx_set_error(ctx, "cannot write '%s': %s", path,
			strerror(errno));
	return TS_OK;
}

/* Create the directory "dir" unless it exists. */
static ts_status make_dir(ts_ctx *ctx, const char *dir)
{
	struct stat sb;

	if (!dir || !*dir)
		return ts_ctx_set_error(ctx, "no output directory given");
	if (mkdir(dir, 0777) == 0 || (errno == EEXIST && stat(dir, &sb) == 0 &&
	    S_ISDIR(sb.st_mode)))
		return TS_OK;
	return ts_ctx_set_error(ctx, "cannot create the directory '%s': %s",
		dir, strerror(errno));
}


/* The words of $CC (default "cc") followed by "extra", NULL-ended. */
static char **compiler_argv(const char *const *extra, int nextra)
{
	const char *cc = getenv("CC");
	char *words = ts_strdup(cc && *cc ? cc : "cc"), *save = NULL, *w;
	char **argv = ts_new_array(char *, strlen(words) + nextra + 2);
	int n = 0;

	for (w = strtok_r(words, " \t", &save); w; w = strtok_r(NULL, " \t",
	     &save))
		argv[n++] = w;
	for (int i = 0; i < nextra; i++)
		if (extra[i])
			argv[n++] = (char *)extra[i];
	argv[n] = NULL;
	return argv;
}

/* The contents of "path" (at most 4 KiB), for messages. */
static const char *read_log(const char *path)
{
	char *s = ts_new_atomic(char, 4097);
	FILE *fp = fopen(path, "r");
	size_t n = 0;

	if (fp) {
		n = fread(s, 1, 4096, fp);
		fclose(fp);
	}
	s[n] = '\0';
	return s;
}

/* Run "argv" with its output in "log"; return its exit status or -1. */
static int run_quiet(char **argv, const char *log)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status = -1, rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log,
		O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Link "obj" into the shared library "so", with the runtime when "f" has
 * parallel loops. */
static ts_status link_shared(ts_ctx *ctx, const ts_func *f, const char *obj,
	const char *so)
{
	const char *rt = NULL, *log = ts_asprintf("%s.log", so);
	bool par = ts_func_has_parallel(f);
	char **argv;
	int rc;

	if (par && !(rt = ts_runtime_path(TS_FILE_RUNTIME_LIB, NULL)))
		return ts_ctx_set_error(ctx, "'%s' has parallel loops but "
			"libtessel_rt.a was not found (set TS_RUNTIME_LIB to its "
			"path)", f->name);
	argv = compiler_argv((const char *[]){ "-shared", "-o", so, obj, rt,
		par ? "-fopenmp" : NULL, "-lm" }, 7);
	rc = run_quiet(argv, log);
	if (rc != 0) {
		ts_ctx_set_error(ctx, "linking '%s' with '%s' failed (%s): %s",
			so, argv[0], rc < 0 ? "could not run it"
			: ts_asprintf("exit %d", rc), read_log(log));
		unlink(log);
		return TS_ERROR;
	}
	unlink(log);
	return TS_OK;
}

/* Write the object file of "f" built for "target" to "path". */
static ts_status write_object(ts_ctx *ctx, const ts_func *f,
	const ts_compile_options *opt, const struct ts_llvm_target *target,
	const char *path)
{
	LLVMContextRef c = LLVMContextCreate();
	LLVMModuleRef m = ts_llvm_build(ctx, c, f, opt, target);
	char *msg = NULL;
	ts_status st = m ? TS_OK : TS_ERROR;

	if (m && LLVMTargetMachineEmitToFile(target->tm, m, (char *)path,
			LLVMObjectFile, &msg)) {
		st = ts_ctx_set_error(ctx, "writing '%s' for %s: %s", path,
			target->triple, msg ? msg : "(no message)");
		LLVMDisposeMessage(msg);
	}
	if (m)
		LLVMDisposeModule(m);
	LLVMContextDispose(c);
	return st;
}

/* Write the object, header and (host architecture) library of "f" in "dir". */
ts_status ts_build_aot(ts_ctx *ctx, const ts_func *f, const char *dir,
	const ts_compile_options *opt)
{
	ts_compile_options storage;
	struct ts_llvm_target target;
	const char *sym, *obj;
	ts_status st;

	opt = ts_llvm_options(opt, &storage);
	if (!f || !f->body)
		return ts_ctx_set_error(ctx, "no function to compile");
	if (make_dir(ctx, dir) < 0 || ts_llvm_target(ctx, opt, false,
			&target) < 0)
		return TS_ERROR;
	sym = ts_func_symbol(f);
	obj = ts_asprintf("%s/%s.o", dir, sym);
	st = write_object(ctx, f, opt, &target, obj);
	LLVMDisposeTargetMachine(target.tm);
	if (st == TS_OK)
		st = write_file(ctx, ts_asprintf("%s/%s.h", dir, sym),
			header_text(f, sym));
	if (st < 0)
		return st;
	if (!target.host_arch) {
		/* A library left by an earlier build is not this one. */
		unlink(ts_asprintf("%s/lib%s.so", dir, sym));
		ts_ctx_warn(ctx, "%s: wrote %s for %s; lib%s.so needs a cross "
			"linker for that target", f->name, obj, target.triple,
			sym);
		return TS_OK;
	}
	return link_shared(ctx, f, obj, ts_asprintf("%s/lib%s.so", dir, sym));
}
