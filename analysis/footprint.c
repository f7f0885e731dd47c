/* Footprints in closed form.  The box hull of the elements that a tile of
 * a stage touches is computed by isl on the image of a tile whose origin
 * is a vector of parameters (isl_set_get_simple_fixed_box_hull gives an
 * offset affine in the origin and a fixed size).  Probing a few tile sizes
 * gives the coefficients of ts_box_dim; one more size checks the closed
 * form, and a dimension that does not fit it is marked whole. */
#include <config.h>

#include "dsl/ir.h"
#include "analysis/internal.h"

/* The box hull of one tensor dimension for one tile size. */
struct box1 {
	bool ok;		/* isl gave an affine offset and a fixed size */
	int64_t cst;
	int64_t coef[TS_MAX_AXES];	/* of the origin */
	int64_t size;
};

/* Return the name of the origin parameter of axis "a". */
static const char *origin_name(int a)
{
	static const char *names[TS_MAX_AXES] = {
		"o0", "o1", "o2", "o3", "o4", "o5", "o6", "o7",
		"o8", "o9", "o10", "o11", "o12", "o13", "o14", "o15",
	};
	return names[a];
}

/* Add "sign" * (x[a] - o[a]) + "cst" >= 0 to "set". */
static __isl_give isl_set *tile_bound(__isl_take isl_set *set,
	__isl_keep isl_local_space *ls, int a, int sign, int64_t cst)
{
	isl_constraint *c = isl_inequality_alloc(isl_local_space_copy(ls));

	c = isl_constraint_set_coefficient_si(c, isl_dim_set, a, sign);
	c = isl_constraint_set_coefficient_si(c, isl_dim_param, a, -sign);
	c = isl_constraint_set_constant_si(c, cst);
	return isl_set_add_constraint(set, c);
}

/* Return the tile of sizes "size" of the instances of "m" at the
 * parametric origin o: o[a] <= x[a] < o[a] + size[a]. */
static __isl_give isl_set *tile_set(struct ts_stage_model *m, const int64_t *size)
{
	isl_space *space = isl_space_copy(m->space);
	isl_local_space *ls;
	isl_set *set;

	space = isl_space_add_dims(space, isl_dim_param, m->naxes);
	for (int a = 0; a < m->naxes; a++)
		space = isl_space_set_dim_name(space, isl_dim_param, a,
			origin_name(a));
	set = isl_set_universe(isl_space_copy(space));
	ls = isl_local_space_from_space(space);
	for (int a = 0; a < m->naxes; a++) {
		set = tile_bound(set, ls, a, 1, 0);
		set = tile_bound(set, ls, a, -1, size[a] - 1);
	}
	isl_local_space_free(ls);
	return set;
}

/* Store the integer value of "v" in "out"; return false when "v" is not
 * an integer.  Take "v". */
static bool val_int(__isl_take isl_val *v, int64_t *out)
{
	bool ok = v && isl_val_is_int(v) == isl_bool_true;

	if (ok)
		*out = isl_val_get_num_si(v);
	isl_val_free(v);
	return ok;
}

/* Read the offset "aff" (affine in the origin parameters) into "b". */
static void read_offset(__isl_keep isl_aff *aff, int naxes, struct box1 *b)
{
	b->ok = aff && isl_aff_dim(aff, isl_dim_div) == 0 &&
		val_int(isl_aff_get_constant_val(aff), &b->cst);
	for (int a = 0; b->ok && a < naxes; a++) {
		int pos = isl_aff_find_dim_by_name(aff, isl_dim_param,
			origin_name(a));
		b->coef[a] = 0;
		if (pos >= 0)
			b->ok = val_int(isl_aff_get_coefficient_val(aff,
				isl_dim_param, pos), &b->coef[a]);
	}
}

/* Compute the box hull of dimension "d" of "image" into "b". */
static void dim_box(__isl_keep isl_set *image, int d, int naxes,
	struct box1 *b)
{
	int nd = isl_set_dim(image, isl_dim_set);
	isl_set *s = isl_set_project_out(isl_set_copy(image), isl_dim_set,
		d + 1, nd - d - 1);
	isl_fixed_box *box;
	isl_multi_aff *off;
	isl_aff *aff;

	s = isl_set_project_out(s, isl_dim_set, 0, d);
	/* The image of a box under an affine map reaches its bounds at
	 * integer vertices: the rational shadow has the same hull, and isl
	 * finds a fixed box on it where the lattice set defeats it. */
	s = isl_set_remove_divs(s);
	box = isl_set_get_simple_fixed_box_hull(s);
	isl_set_free(s);
	b->ok = false;
	if (isl_fixed_box_is_valid(box) == isl_bool_true) {
		off = isl_fixed_box_get_offset(box);
		aff = isl_multi_aff_get_at(off, 0);
		read_offset(aff, naxes, b);
		b->ok = b->ok && val_int(isl_multi_val_get_at(
			isl_fixed_box_get_size(box), 0), &b->size);
		isl_aff_free(aff);
		isl_multi_aff_free(off);
	}
	isl_fixed_box_free(box);
}

/* Compute in "b" (one per tensor dimension) the box hull of the image of
 * the tile of sizes "size" under "u". */
static void probe(struct ts_stage_model *m, __isl_keep isl_map *u, int ndim,
	const int64_t *size, struct box1 *b)
{
	isl_set *image = isl_set_apply(tile_set(m, size), isl_map_copy(u));

	for (int d = 0; d < ndim; d++) {
		b[d].ok = false;
		if (image)
			dim_box(image, d, m->naxes, &b[d]);
	}
	isl_set_free(image);
}

/* Return the union of the raw relations of the accesses of "m" to "t", or
 * NULL when the stage does not access "t". */
static __isl_give isl_map *accesses_to(struct ts_stage_model *m, const ts_tensor *t)
{
	isl_map *u = NULL;

	for (int i = 0; i < m->nacc; i++) {
		if (m->acc[i].tensor != t)
			continue;
		if (!u)
			u = isl_map_copy(m->acc[i].raw);
		else
			u = isl_map_union(u, isl_map_copy(m->acc[i].raw));
	}
	return u;
}

/* Return whether the box "b" has the origin coefficients of "base". */
static bool same_origin(const struct box1 *b, const struct box1 *base, int n)
{
	if (!b->ok)
		return false;
	for (int a = 0; a < n; a++)
		if (b->coef[a] != base->coef[a])
			return false;
	return true;
}

/* Return whether "bd" evaluated at sizes "size" gives the box "b". */
static bool closed_form_holds(const ts_box_dim *bd, const struct box1 *b,
	int n, const int64_t *size)
{
	int64_t lo = bd->cst, ext = 1;

	for (int a = 0; a < n; a++) {
		lo += bd->size_shift[a] * (size[a] - 1);
		ext += bd->size_coef[a] * (size[a] - 1);
	}
	return lo == b->cst && ext == b->size;
}

/* Mark "bd" as the whole dimension. */
static void box_dim_whole(ts_box_dim *bd)
{
	memset(bd, 0, sizeof(*bd));
	bd->whole = true;
}

/* Derive dimension "d" of the footprint of "u" into "bd" from the boxes of
 * unit tiles "base", of tiles of size 2 along one axis "step", and check
 * it on "check" (tile sizes "csize"). */
static void derive_dim(int n, int d, struct box1 *base, struct box1 **step,
	struct box1 *check, const int64_t *csize, ts_box_dim *bd)
{
	memset(bd, 0, sizeof(*bd));
	if (!base[d].ok || base[d].size != 1)
		return box_dim_whole(bd);
	bd->cst = base[d].cst;
	bd->naxes = n;
	for (int a = 0; a < n; a++) {
		bd->origin_coef[a] = base[d].coef[a];
		if (!same_origin(&step[a][d], &base[d], n))
			return box_dim_whole(bd);
		bd->size_shift[a] = step[a][d].cst - base[d].cst;
		bd->size_coef[a] = step[a][d].size - 1;
	}
	if (!same_origin(&check[d], &base[d], n) ||
	    !closed_form_holds(bd, &check[d], n, csize))
		box_dim_whole(bd);
}

/* Fill "fp" from the accesses "u" of the model "m". */
static void footprint_fill(struct ts_stage_model *m, __isl_keep isl_map *u,
	ts_footprint *fp)
{
	int n = m->naxes, nd = fp->ndim;
	int64_t size[TS_MAX_AXES] = { 0 }, csize[TS_MAX_AXES] = { 0 };
	struct box1 base[TS_MAX_DIMS], check[TS_MAX_DIMS];
	struct box1 steps[TS_MAX_AXES][TS_MAX_DIMS], *step[TS_MAX_AXES];

	for (int a = 0; a < n; a++) {
		size[a] = 1;
		csize[a] = 3 + a % 3;
	}
	probe(m, u, nd, size, base);
	for (int a = 0; a < n; a++) {
		size[a] = 2;
		probe(m, u, nd, size, steps[a]);
		step[a] = steps[a];
		size[a] = 1;
	}
	probe(m, u, nd, csize, check);
	for (int d = 0; d < nd; d++)
		derive_dim(n, d, base, step, check, csize, &fp->dim[d]);
}

/* Whether "e" is axis "*a" of "s" // B or % B ("mod"), B > 1 into "*b". */
static bool block_index(const ts_stage *s, const ts_expr *e, int *a,
	int64_t *b, bool *mod)
{
	const ts_axis *axis = ts_block_index(e, b, mod);

	*a = axis ? ts_axis_pos(s, axis) : -1;
	return *a >= 0;
}

/* Whether every load of "t" in "e" indexes dimension "d" like "bd" (a
 * block index); "*n" counts the loads. */
static bool loads_blocked(const ts_stage *s, const ts_expr *e,
	const ts_tensor *t, int d, ts_box_dim *bd, int *n)
{
	if (!e)
		return true;
	if (e->kind == TS_EXPR_LOAD && e->tensor == t) {
		int a;
		int64_t b;
		bool mod;
		if (!block_index(s, e->args[d], &a, &b, &mod))
			return false;
		if ((*n)++ == 0) {
			bd->block = b;
			bd->block_axis = a;
			bd->block_mod = mod;
		}
		return bd->block == b && bd->block_axis == a &&
			bd->block_mod == mod;
	}
	if (e->kind == TS_EXPR_LOAD) {
		for (int i = 0; i < e->nargs; i++)
			if (!loads_blocked(s, e->args[i], t, d, bd, n))
				return false;
		return true;
	}
	return loads_blocked(s, e->a, t, d, bd, n) &&
		loads_blocked(s, e->b, t, d, bd, n) &&
		loads_blocked(s, e->c, t, d, bd, n);
}

/* Give the dimensions of "fp" that isl could not bound but that every
 * load of "s" indexes by a block of one axis their closed form. */
static void footprint_blocks(const ts_stage *s, ts_footprint *fp)
{
	for (int d = 0; d < fp->ndim; d++) {
		ts_box_dim bd = { 0 };
		int n = 0;
		if (fp->dim[d].whole &&
		    loads_blocked(s, s->body, fp->tensor, d, &bd, &n) && n > 0)
			fp->dim[d] = bd;
	}
}

/* Whether every load of "t" in "e" indexes dimension "d" by the same
 * quasi-affine terms, into "bd"; "*n" counts the loads. */
static bool loads_quasi(const ts_stage *s, const ts_expr *e,
	const ts_tensor *t, int d, ts_box_dim *bd, int *n)
{
	if (!e)
		return true;
	if (e->kind == TS_EXPR_LOAD && e->tensor == t) {
		ts_box_dim q;
		if (!ts_quasi_of(s, e->args[d], &q))
			return false;
		if ((*n)++ == 0)
			*bd = q;
		return ts_quasi_equal(bd, &q);
	}
	if (e->kind == TS_EXPR_LOAD) {
		for (int i = 0; i < e->nargs; i++)
			if (!loads_quasi(s, e->args[i], t, d, bd, n))
				return false;
		return true;
	}
	return loads_quasi(s, e->a, t, d, bd, n) &&
		loads_quasi(s, e->b, t, d, bd, n) &&
		loads_quasi(s, e->c, t, d, bd, n);
}

/* The lowest and highest index along dimension "d" of the image under
 * "u" of the tile "origin", "size" of "m", from isl; false if isl has
 * no answer. */
static bool isl_range(struct ts_stage_model *m, __isl_keep isl_map *u, int d,
	const int64_t *origin, const int64_t *size, int64_t *lo, int64_t *hi)
{
	isl_set *tile = tile_set(m, size), *img;
	isl_val *mn, *mx;
	int nd;

	for (int a = 0; a < m->naxes; a++)
		tile = isl_set_fix_si(tile, isl_dim_param, a, origin[a]);
	img = isl_set_apply(tile, isl_map_copy(u));
	nd = isl_set_dim(img, isl_dim_set);
	img = isl_set_project_out(img, isl_dim_set, d + 1, nd - d - 1);
	img = isl_set_project_out(img, isl_dim_set, 0, d);
	img = isl_set_project_out(img, isl_dim_param, 0, m->naxes);
	mn = isl_set_dim_min_val(isl_set_copy(img), 0);
	mx = isl_set_dim_max_val(img, 0);
	return val_int(mn, lo) & val_int(mx, hi);
}

/* Whether the quasi-affine "bd" gives isl's range of dimension "d" of
 * the accesses "u" of "m" on a few tiles, aligned or not. */
static bool quasi_holds(struct ts_stage_model *m, __isl_keep isl_map *u, int d,
	const ts_box_dim *bd)
{
	int64_t origin[TS_MAX_AXES], size[TS_MAX_AXES], lo, ext, ilo, ihi;

	for (int k = 0; k < 4; k++) {
		for (int a = 0; a < m->naxes; a++) {
			origin[a] = k == 0 ? 0 : (int64_t)((3 * k + 5 * a) % 11);
			size[a] = 1 + (int64_t)((k + 2 * a) % 5) * (k != 3) +
				(k == 2 ? 16 : 0);
		}
		ts_quasi_eval(bd, origin, size, &lo, &ext);
		if (!isl_range(m, u, d, origin, size, &ilo, &ihi) ||
		    ilo != lo || ihi != lo + ext - 1)
			return false;
	}
	return true;
}

/* Give the dimensions of "fp" that are still whole a quasi-affine
 * closed form when every access of "m" indexes them by the same
 * floor divisions and remainders and isl agrees with it. */
static void footprint_quasi(struct ts_stage_model *m, __isl_keep isl_map *u,
	ts_footprint *fp)
{
	for (int d = 0; d < fp->ndim; d++) {
		ts_box_dim bd;
		int n = 0;
		if (fp->dim[d].whole &&
		    loads_quasi(m->stage, m->stage->body, fp->tensor, d, &bd,
			&n) && n > 0 && quasi_holds(m, u, d, &bd))
			fp->dim[d] = bd;
	}
}

/* The first index and extent of blocked dimension "bd" for a tile of
 * "size" at "origin" (not negative) along its axis: exact, so that a
 * tile across a block boundary touches two blocks, and its remainders
 * wrap round to the whole block. */
static void block_box(const ts_box_dim *bd, int64_t origin, int64_t size,
	int64_t *lo, int64_t *ext)
{
	int64_t b = bd->block;

	if (bd->block_mod && origin % b + size <= b) {
		*lo = origin % b;
		*ext = size;
	} else if (bd->block_mod) {
		*lo = 0;
		*ext = b;
	} else {
		*lo = origin / b;
		*ext = (origin + size - 1) / b - origin / b + 1;
	}
}

/* A footprint computed for a stage, kept with it. */
struct ts_footprint_memo {
	const ts_tensor *tensor;
	ts_footprint *fp;
	struct ts_footprint_memo *next;
};

/* Return the footprint of stage "s" on tensor "t" (an input it reads or
 * its own output), or NULL with an error when "s" does not access "t".
 * It is computed once per stage and tensor (isl probes the accesses at a
 * few tile sizes) and shared: callers do not change it. */
ts_footprint *ts_stage_footprint(ts_ctx *ctx, const ts_stage *s,
	const ts_tensor *t)
{
	struct ts_stage_model *m;
	struct ts_footprint_memo *memo;
	ts_footprint *fp;
	isl_map *u;

	if (!s || !t)
		return NULL;
	for (memo = s->footprints; memo; memo = memo->next)
		if (memo->tensor == t)
			return memo->fp;
	m = ts_stage_model_build(ctx, s);
	if (!m)
		return NULL;
	u = accesses_to(m, t);
	if (!u) {
		ts_ctx_set_error(ctx, "stage '%s' does not access tensor '%s'",
			s->name, t->name);
		ts_stage_model_free(m);
		return NULL;
	}
	fp = ts_new(ts_footprint);
	fp->tensor = t;
	fp->ndim = t->ndim;
	footprint_fill(m, u, fp);
	footprint_blocks(s, fp);
	footprint_quasi(m, u, fp);
	isl_map_free(u);
	ts_stage_model_free(m);
	memo = ts_new(struct ts_footprint_memo);
	memo->tensor = t;
	memo->fp = fp;
	memo->next = s->footprints;
	((ts_stage *)s)->footprints = memo;
	return fp;
}

/* Write the box of "fp" for the tile "origin", "size" into "lo", "extent". */
void ts_footprint_eval(const ts_footprint *fp, const int64_t *origin,
	const int64_t *size, int64_t *lo, int64_t *extent)
{
	for (int d = 0; d < fp->ndim; d++) {
		const ts_box_dim *bd = &fp->dim[d];
		int64_t l = bd->cst, e = 1;

		if (bd->whole) {
			lo[d] = 0;
			extent[d] = fp->tensor->shape[d];
			continue;
		}
		if (bd->block) {
			block_box(bd, origin[bd->block_axis],
				size[bd->block_axis], &lo[d], &extent[d]);
			continue;
		}
		if (bd->nterms) {
			ts_quasi_eval(bd, origin, size, &lo[d], &extent[d]);
			continue;
		}
		for (int a = 0; a < bd->naxes; a++) {
			if (!bd->origin_coef[a] && !bd->size_shift[a] &&
			    !bd->size_coef[a])
				continue;
			l += bd->origin_coef[a] * origin[a] +
				bd->size_shift[a] * (size[a] - 1);
			e += bd->size_coef[a] * (size[a] - 1);
		}
		lo[d] = l;
		extent[d] = e;
	}
}

/* Return the extent along dimension "d" of the box of "fp" for tiles of
 * sizes "size". */
int64_t ts_footprint_extent(const ts_footprint *fp, int d,
	const int64_t *size)
{
	const ts_box_dim *bd = &fp->dim[d];
	int64_t e = 1;

	if (bd->whole)
		return fp->tensor->shape[d];
	if (bd->nterms) {
		for (int t = 0; t < bd->nterms; t++)
			e += ts_box_term_span(&bd->term[t], size, size);
		return e;
	}
	if (bd->block) {
		/* A tile aligned to the block. */
		int64_t lo;
		block_box(bd, 0, size[bd->block_axis], &lo, &e);
		return e;
	}
	for (int a = 0; a < bd->naxes; a++)
		if (bd->size_coef[a])
			e += bd->size_coef[a] * (size[a] - 1);
	return e;
}

/* Return the number of elements in the box of "fp" for tiles of sizes
 * "size" (the box does not depend on the origin). */
int64_t ts_footprint_volume(const ts_footprint *fp, const int64_t *size)
{
	int64_t v = 1;

	for (int d = 0; d < fp->ndim; d++)
		v *= ts_footprint_extent(fp, d, size);
	return v;
}
