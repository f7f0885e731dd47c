/* Describing the CPU this process runs on.
 *
 * x86-64: vendor, family, model, vector extensions and caches from cpuid
 * (leaf 4 on Intel, 0x8000001D on AMD), checked against what the operating
 * system enables (xgetbv).  Every host: cores from the affinity mask and
 * sysfs topology, caches from sysfs when cpuid gave none, the clock from
 * cpuid leaf 0x16, cpufreq or /proc/cpuinfo, and LLVM's names for the cpu,
 * its features and the triple.  What cannot be read (FMA units per core,
 * memory bandwidth) is a documented guess or left unknown (0); a JSON
 * description overrides it. */
#include <config.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define TS_X86 1
#endif

#include <tessel/target.h>

#include "support/support.h"
#include "target/target_internal.h"

/* Read the first line of the file "path" into "buf" of "size" bytes;
 * return false when it cannot be read. */
static bool read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/* Return the number of cpus in the list "s" ("0-3,8,10-11"). */
static int count_cpu_list(const char *s)
{
	int n = 0;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (end == s)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		n += (int)(b - a + 1);
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

/* Return the hardware threads per core of cpu 0 from sysfs, or 1. */
static int sysfs_threads_per_core(void)
{
	char buf[256];

	if (!read_line("/sys/devices/system/cpu/cpu0/topology/"
		       "thread_siblings_list", buf, sizeof(buf)))
		return 1;
	return TS_MAX(1, count_cpu_list(buf));
}

/* Return the cpus this process may run on. */
static int usable_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	return (int)TS_MAX(1, sysconf(_SC_NPROCESSORS_ONLN));
}

/* Parse a sysfs cache size ("48K", "2048K", "260M") into bytes. */
static int64_t parse_size(const char *s)
{
	char *end;
	int64_t v = strtoll(s, &end, 10);

	if (*end == 'K')
		v <<= 10;
	else if (*end == 'M')
		v <<= 20;
	else if (*end == 'G')
		v <<= 30;
	return v;
}

/* Store the data or unified cache of "level" with "size" bytes shared by
 * "shared_by" cores into "c"; levels other than 1 to 3 are ignored. */
static void store_cache(ts_target_cpu *c, int level, int64_t size,
	int shared_by, int ways)
{
	ts_target_cache *k = level == 1 ? &c->l1d : level == 2 ? &c->l2 :
		level == 3 ? &c->l3 : NULL;

	if (!k || size <= 0)
		return;
	k->size = size;
	k->shared_by = TS_MAX(1, shared_by);
	k->ways = ways > 0 ? ways : 0;
}

/* Read the data and unified caches under the sysfs folder "dir" into
 * "c"; return how many were read. */
int ts_target_sysfs_caches(ts_target_cpu *c, const char *dir)
{
	char buf[256];
	int n = 0;

	for (int i = 0; i < 16; i++) {
		int level, shared, ways;
		int64_t size;
		if (!read_line(ts_asprintf("%s/index%d/type", dir, i), buf,
			       sizeof(buf)))
			break;
		if (strcmp(buf, "Data") != 0 && strcmp(buf, "Unified") != 0)
			continue;
		if (!read_line(ts_asprintf("%s/index%d/level", dir, i), buf,
			       sizeof(buf)))
			continue;
		level = atoi(buf);
		if (!read_line(ts_asprintf("%s/index%d/size", dir, i), buf,
			       sizeof(buf)))
			continue;
		size = parse_size(buf);
		shared = 1;
		if (read_line(ts_asprintf("%s/index%d/shared_cpu_list", dir, i),
			      buf, sizeof(buf)))
			shared = count_cpu_list(buf) /
				TS_MAX(1, c->threads_per_core);
		ways = read_line(ts_asprintf("%s/index%d/ways_of_associativity",
			dir, i), buf, sizeof(buf)) ? atoi(buf) : 0;
		store_cache(c, level, size, shared, ways);
		n += level >= 1 && level <= 3 && size > 0;
		if (level == 1 && read_line(ts_asprintf(
			"%s/index%d/coherency_line_size", dir, i), buf,
			sizeof(buf)))
			c->line_bytes = atoi(buf);
	}
	return n;
}

/* Read the data caches of cpu 0 from sysfs into "c". */
static void sysfs_caches(ts_target_cpu *c)
{
	ts_target_sysfs_caches(c, "/sys/devices/system/cpu/cpu0/cache");
}

/* Return the clock of cpu 0 in GHz from cpufreq or /proc/cpuinfo, or 0. */
static double os_frequency(void)
{
	char buf[256];
	FILE *f;
	double mhz = 0;

	if (read_line("/sys/devices/system/cpu/cpu0/cpufreq/base_frequency",
		      buf, sizeof(buf)) ||
	    read_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
		      buf, sizeof(buf)))
		return atof(buf) / 1e6;
	f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "cpu MHz : %lf", &mhz) == 1)
			break;
	fclose(f);
	return mhz / 1e3;
}

#ifdef TS_X86
/* The cpuid facts the description needs. */
struct cpuid_facts {
	char vendor[13];
	char brand[49];
	int family, model;
	unsigned max_leaf, max_ext;
	bool avx, avx2, fma, avx512f;
	unsigned smt;		/* logical processors per core, 0: unknown */
};

/* Run cpuid "leaf", "sub" into "r"; zeros when the leaf is not there. */
static void cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
	r[0] = r[1] = r[2] = r[3] = 0;
	__get_cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3]);
}

/* Return the register XCR0: which vector states the OS saves. */
static uint64_t xcr0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

/* Read vendor, brand, family and model into "f". */
static void cpuid_identity(struct cpuid_facts *f)
{
	unsigned r[4];

	cpuid(0, 0, r);
	f->max_leaf = r[0];
	memcpy(f->vendor, &r[1], 4);
	memcpy(f->vendor + 4, &r[3], 4);
	memcpy(f->vendor + 8, &r[2], 4);
	cpuid(1, 0, r);
	f->family = (r[0] >> 8) & 0xf;
	f->model = (r[0] >> 4) & 0xf;
	if (f->family == 0xf)
		f->family += (r[0] >> 20) & 0xff;
	if (f->family >= 6)
		f->model |= ((r[0] >> 16) & 0xf) << 4;
	cpuid(0x80000000, 0, r);
	f->max_ext = r[0];
	for (unsigned i = 0; i < 3 && f->max_ext >= 0x80000004; i++) {
		cpuid(0x80000002 + i, 0, r);
		memcpy(f->brand + 16 * i, r, 16);
	}
}

/* Read the vector extensions that the cpu has and the OS enables. */
static void cpuid_features(struct cpuid_facts *f)
{
	unsigned r1[4], r7[4];
	bool osxsave;
	uint64_t x = 0;

	cpuid(1, 0, r1);
	cpuid(7, 0, r7);
	osxsave = (r1[2] >> 27) & 1;
	if (osxsave)
		x = xcr0();
	f->avx = osxsave && ((r1[2] >> 28) & 1) && (x & 6) == 6;
	f->fma = f->avx && ((r1[2] >> 12) & 1);
	f->avx2 = f->avx && f->max_leaf >= 7 && ((r7[1] >> 5) & 1);
	f->avx512f = f->avx && f->max_leaf >= 7 && ((r7[1] >> 16) & 1) &&
		(x & 0xe0) == 0xe0;
	if (f->max_leaf >= 0xb) {
		unsigned r[4];
		cpuid(0xb, 0, r);
		if (((r[2] >> 8) & 0xff) == 1)
			f->smt = r[1] & 0xffff;
	}
}

/* Read the data caches from cpuid leaf 4 (Intel) or 0x8000001D (AMD)
 * into "c"; return false when neither leaf is there. */
static bool cpuid_caches(const struct cpuid_facts *f, ts_target_cpu *c)
{
	unsigned leaf = 4, r[4];
	unsigned smt = f->smt ? f->smt : (unsigned)c->threads_per_core;

	if (!strcmp(f->vendor, "AuthenticAMD") ||
	    !strcmp(f->vendor, "HygonGenuine"))
		leaf = f->max_ext >= 0x8000001d ? 0x8000001d : 0;
	else if (f->max_leaf < 4)
		leaf = 0;
	if (!leaf)
		return false;
	for (unsigned i = 0; i < 16; i++) {
		unsigned type, level, sharing;
		int64_t size;
		cpuid(leaf, i, r);
		type = r[0] & 0x1f;
		if (type == 0)
			break;
		if (type == 2)
			continue;	/* instruction cache */
		level = (r[0] >> 5) & 7;
		sharing = ((r[0] >> 14) & 0xfff) + 1;
		size = (int64_t)(((r[1] >> 22) & 0x3ff) + 1) *
			(((r[1] >> 12) & 0x3ff) + 1) * ((r[1] & 0xfff) + 1) *
			((int64_t)r[2] + 1);
		/* A fully associative cache reports its ways like the
		 * others (EBX[31:22] + 1). */
		store_cache(c, (int)level, size, (int)(sharing / TS_MAX(1, smt)),
			(int)((r[1] >> 22) & 0x3ff) + 1);
		if (level == 1)
			c->line_bytes = (r[1] & 0xfff) + 1;
	}
	return c->l1d.size > 0;
}

/* Fill the x86 parts of "t" from cpuid. */
static void detect_x86(ts_target *t)
{
	struct cpuid_facts f;
	ts_target_cpu *c = &t->cpu;
	unsigned r[4];

	memset(&f, 0, sizeof(f));
	cpuid_identity(&f);
	cpuid_features(&f);
	c->simd_bytes = f.avx512f ? 64 : f.avx ? 32 : 16;
	c->vector_registers = f.avx512f ? 32 : 16;
	/* Two vector FMA pipes is the common case since Haswell and Zen 2;
	 * cpuid cannot tell a core with one.  Without FMA, count the
	 * multiply and the add as one unit. */
	c->fma_units = f.fma ? 2 : 1;
	if (!cpuid_caches(&f, c))
		sysfs_caches(c);
	if (f.max_leaf >= 0x16) {
		cpuid(0x16, 0, r);
		c->frequency_ghz = (r[0] & 0xffff) / 1e3;
	}
	t->description = ts_asprintf("%s (%s family %d model %d%s%s%s)",
		f.brand[0] == ' ' ? f.brand + strspn(f.brand, " ") : f.brand,
		f.vendor, f.family, f.model, f.avx2 ? ", AVX2" : "",
		f.fma ? ", FMA" : "", f.avx512f ? ", AVX-512" : "");
}
#endif

/* Fill the parts of "t" that no cpuid gives: 128-bit vectors (NEON on
 * aarch64; SVE is not used), 32 registers, two FMA pipes. */
static void detect_generic(ts_target *t)
{
	ts_target_cpu *c = &t->cpu;

	c->simd_bytes = 16;
	c->vector_registers = !strcmp(c->arch, "x86_64") ? 16 : 32;
	c->fma_units = 2;
	sysfs_caches(c);
	t->description = ts_asprintf("%s host", c->arch);
}

/* Keep only the enabled ("+") entries of LLVM's feature list "all". */
static char *enabled_features(const char *all)
{
	ts_buf b;
	const char *p = all;

	ts_buf_init(&b);
	while (p && *p) {
		size_t n = strcspn(p, ",");
		if (*p == '+') {
			if (b.len)
				ts_buf_putc(&b, ',');
			ts_buf_puts(&b, ts_strndup(p, n));
		}
		p += n + (p[n] == ',');
	}
	return b.s;
}

/* Fill the LLVM names of "c": triple, arch, cpu and enabled features. */
static void detect_llvm(ts_target_cpu *c)
{
	char *triple = LLVMGetDefaultTargetTriple();
	char *cpu = LLVMGetHostCPUName();
	char *features = LLVMGetHostCPUFeatures();

	c->triple = ts_strdup(triple);
	c->arch = ts_strndup(triple, strcspn(triple, "-"));
	c->llvm_cpu = ts_strdup(cpu);
	c->llvm_features = enabled_features(features);
	LLVMDisposeMessage(triple);
	LLVMDisposeMessage(cpu);
	LLVMDisposeMessage(features);
}

/* Fill the caches a detection left out of "c" with conservative
 * defaults, so that the description stays consistent. */
static void fill_missing(ts_target_cpu *c)
{
	if (!c->line_bytes)
		c->line_bytes = 64;
	if (!c->l1d.size)
		store_cache(c, 1, 32 << 10, 1, 0);
	if (!c->l2.size || c->l2.size <= c->l1d.size)
		store_cache(c, 2, TS_MAX(c->l1d.size * 2, 256 << 10), 1, 0);
	if (c->l3.size && c->l3.size <= c->l2.size)
		c->l3.size = 0;
}

/* Describe the cpu this process runs on. */
ts_target *ts_target_host(ts_ctx *ctx)
{
	ts_target *t = ts_new(ts_target);
	ts_target_cpu *c = &t->cpu;

	t->kind = TS_TARGET_CPU;
	t->name = "host";
	detect_llvm(c);
	c->threads_per_core = sysfs_threads_per_core();
	c->cores = TS_MAX(1, usable_cpus() / c->threads_per_core);
#ifdef TS_X86
	if (!strcmp(c->arch, "x86_64") || !strcmp(c->arch, "i386"))
		detect_x86(t);
	else
#endif
		detect_generic(t);
	fill_missing(c);
	if (!c->frequency_ghz)
		c->frequency_ghz = os_frequency();
	c->peak_gflops_f32_core = c->fma_units * (c->simd_bytes / 4) * 2.0 *
		c->frequency_ghz;
	c->peak_gflops_f32 = c->peak_gflops_f32_core * c->cores;
	ts_target_finish(t);
	if (ts_target_check(ctx, t, "host") < 0)
		return NULL;
	return t;
}
