/* Whole networks as .tsl text at any size, parsed by the front end. */
#include <config.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "examples/networks.h"

/* Parse the malloc'd text "src" as "name" in "ctx" and free it. */
static ts_dag *parse_owned(ts_ctx *ctx, const char *name, char *src)
{
	ts_dag *dag;

	if (!src) {
		ts_ctx_set_error(ctx, "%s: bad sizes", name);
		return NULL;
	}
	dag = ts_parse_string(ctx, name, src);
	free(src);
	return dag;
}

/* Close the stream "f" over "*buf" and return the text (the stream
 * sets "*buf" when it is closed). */
static char *finish_text(FILE *f, char **buf)
{
	if (fclose(f) != 0) {
		free(*buf);
		return NULL;
	}
	return *buf;
}

/* Softmax over the "n" columns of L[i, k] into output "Y". */
static void softmax_text(FILE *f, int rows, int n)
{
	fprintf(f, "M[i: %d] = max(k: %d) L[i, k]\n", rows, n);
	fprintf(f, "E[i: %d] = sum(k: %d) exp(L[i, k] - M[i])\n", rows, n);
	fprintf(f, "output Y[i: %d, j: %d] = exp(L[i, j] - M[i]) / E[i]\n",
		rows, n);
}

char *ts_network_lenet_source(int batch)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (batch < 1 || !(f = open_memstream(&buf, &len)))
		return NULL;
	fprintf(f, "# LeNet-like, batch %d: conv 5x5 (20), relu, max pool; "
		"conv 5x5 (50),\n# relu, max pool; dense 500, relu; dense 10; "
		"softmax.\nlet N = %d\n", batch, batch);
	fprintf(f, "input X: f32[N, 1, 28, 28]\nweight W1: f32[20, 1, 5, 5]\n"
		"weight B1: f32[20]\nweight W2: f32[50, 20, 5, 5]\n"
		"weight B2: f32[50]\nweight W3: f32[500, 50, 4, 4]\n"
		"weight B3: f32[500]\nweight W4: f32[10, 500]\n"
		"weight B4: f32[10]\n\n");
	fprintf(f, "C1[n: N, k: 20, h: 24, w: 24] = sum(rc: 1, r: 5, s: 5) "
		"X[n, rc, h + r, w + s] * W1[k, rc, r, s]\n"
		"R1[n: N, k: 20, h: 24, w: 24] = max(C1[n, k, h, w] + B1[k], 0.0)\n"
		"P1[n: N, c: 20, h: 12, w: 12] = max(r: 2, s: 2) "
		"R1[n, c, h * 2 + r, w * 2 + s]\n"
		"C2[n: N, k: 50, h: 8, w: 8] = sum(rc: 20, r: 5, s: 5) "
		"P1[n, rc, h + r, w + s] * W2[k, rc, r, s]\n"
		"R2[n: N, k: 50, h: 8, w: 8] = max(C2[n, k, h, w] + B2[k], 0.0)\n"
		"P2[n: N, c: 50, h: 4, w: 4] = max(r: 2, s: 2) "
		"R2[n, c, h * 2 + r, w * 2 + s]\n"
		"D1[n: N, o: 500] = sum(c: 50, h: 4, w: 4) P2[n, c, h, w] * "
		"W3[o, c, h, w]\n"
		"F1[i: N, o: 500] = max(D1[i, o] + B3[o], 0.0)\n"
		"D2[i: N, o: 10] = sum(k: 500) F1[i, k] * W4[o, k]\n"
		"L[i: N, o: 10] = D2[i, o] + B4[o]\n");
	softmax_text(f, batch, 10);
	return finish_text(f, &buf);
}

ts_dag *ts_network_lenet(ts_ctx *ctx, int batch)
{
	return parse_owned(ctx, "lenet", ts_network_lenet_source(batch));
}

char *ts_network_mlp_source(int batch)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (batch < 1 || !(f = open_memstream(&buf, &len)))
		return NULL;
	fprintf(f, "# MLP 784-512-512-10 with relu, batch %d.\nlet N = %d\n"
		"input X: f32[N, 784]\nweight W1: f32[512, 784]\n"
		"weight B1: f32[512]\nweight W2: f32[512, 512]\n"
		"weight B2: f32[512]\nweight W3: f32[10, 512]\n"
		"weight B3: f32[10]\n\n",
		batch, batch);
	fprintf(f, "D1[i: N, o: 512] = sum(k: 784) X[i, k] * W1[o, k]\n"
		"H1[i: N, o: 512] = max(D1[i, o] + B1[o], 0.0)\n"
		"D2[i: N, o: 512] = sum(k: 512) H1[i, k] * W2[o, k]\n"
		"H2[i: N, o: 512] = max(D2[i, o] + B2[o], 0.0)\n"
		"D3[i: N, o: 10] = sum(k: 512) H2[i, k] * W3[o, k]\n"
		"output Y[i: N, o: 10] = D3[i, o] + B3[o]\n");
	return finish_text(f, &buf);
}

ts_dag *ts_network_mlp(ts_ctx *ctx, int batch)
{
	return parse_owned(ctx, "mlp", ts_network_mlp_source(batch));
}

/* A feature map being written: its tensor name, channels and size. */
struct fmap {
	char name[32];
	int c, h;
};

/* Write a zero padding of "in" by "pad" on each side as "name". */
static void pad_text(FILE *f, const char *name, const struct fmap *in,
	int pad)
{
	int hp = in->h + 2 * pad;

	fprintf(f, "%s[n: N, c: %d, h: %d, w: %d] = select(h >= %d && "
		"h < %d && w >= %d && w < %d, %s[n, c, h - %d, w - %d], 0.0)\n",
		name, in->c, hp, hp, pad, in->h + pad, pad, in->h + pad,
		in->name, pad, pad);
}

/* Write conv "pre" (weights <pre>_W, bias <pre>_B) of "in" into "out":
 * "k" filters of "r"x"r", stride "s", padding "pad", then the bias, the
 * residual "skip" (or NULL) and a relu when "relu".  Inputs are declared
 * into "decl". */
static void conv_text(FILE *f, FILE *decl, const char *pre,
	const struct fmap *in, int k, int r, int s, int pad,
	const char *skip, bool relu, struct fmap *out)
{
	char src[40];
	int ho = (in->h + 2 * pad - r) / s + 1;

	fprintf(decl, "weight %s_W: f32[%d, %d, %d, %d]\nweight %s_B: f32[%d]\n",
		pre, k, in->c, r, r, pre, k);
	snprintf(src, sizeof(src), "%s", in->name);
	if (pad) {
		snprintf(src, sizeof(src), "%s_P", pre);
		pad_text(f, src, in, pad);
	}
	fprintf(f, "%s_C[n: N, k: %d, h: %d, w: %d] = sum(rc: %d, r: %d, "
		"s: %d) %s[n, rc, h * %d + r, w * %d + s] * %s_W[k, rc, r, s]\n",
		pre, k, ho, ho, in->c, r, r, src, s, s, pre);
	snprintf(out->name, sizeof(out->name), "%s_O", pre);
	out->c = k;
	out->h = ho;
	fprintf(f, "%s[n: N, k: %d, h: %d, w: %d] = ", out->name, k, ho, ho);
	if (relu)
		fprintf(f, "max(");
	fprintf(f, "%s_C[n, k, h, w] + %s_B[k]", pre, pre);
	if (skip)
		fprintf(f, " + %s[n, k, h, w]", skip);
	fprintf(f, relu ? ", 0.0)\n" : "\n");
}

/* Write basic block "pre" of ResNet: two 3x3 convs and the shortcut (a
 * strided 1x1 conv when the shape changes). */
static void block_text(FILE *f, FILE *decl, const char *pre,
	struct fmap *x, int k, int s)
{
	char a[24], b[24], d[24];
	struct fmap y, z, sc = *x;

	snprintf(a, sizeof(a), "%s_A", pre);
	snprintf(b, sizeof(b), "%s_B", pre);
	snprintf(d, sizeof(d), "%s_D", pre);
	if (s != 1 || k != x->c)
		conv_text(f, decl, d, x, k, 1, s, 0, NULL, false, &sc);
	conv_text(f, decl, a, x, k, 3, s, 1, NULL, true, &y);
	conv_text(f, decl, b, &y, k, 3, 1, 1, sc.name, true, &z);
	*x = z;
}

/* Write the stem, the four stages and the classifier of ResNet-18. */
static void resnet_body(FILE *f, FILE *decl, int image, int width,
	int classes)
{
	struct fmap x = { "X", 3, image }, m;
	int hm;

	conv_text(f, decl, "S", &x, width, 7, 2, 3, NULL, true, &x);
	pad_text(f, "SP", &x, 1);
	hm = (x.h + 2 - 3) / 2 + 1;
	fprintf(f, "MP[n: N, c: %d, h: %d, w: %d] = max(r: 3, s: 3) "
		"SP[n, c, h * 2 + r, w * 2 + s]\n", width, hm, hm);
	m = (struct fmap){ "MP", width, hm };
	for (int st = 0; st < 4; st++)
		for (int bl = 0; bl < 2; bl++) {
			char pre[16];
			snprintf(pre, sizeof(pre), "L%d%c", st + 1, 'a' + bl);
			block_text(f, decl, pre, &m, width << st,
				st > 0 && bl == 0 ? 2 : 1);
		}
	fprintf(f, "G[n: N, c: %d] = sum(h: %d, w: %d) %s[n, c, h, w] / %d.0\n",
		m.c, m.h, m.h, m.name, m.h * m.h);
	fprintf(decl, "weight FC_W: f32[%d, %d]\nweight FC_B: f32[%d]\n",
		classes, m.c, classes);
	fprintf(f, "FC[n: N, o: %d] = sum(c: %d) G[n, c] * FC_W[o, c]\n"
		"output Y[n: N, o: %d] = FC[n, o] + FC_B[o]\n", classes, m.c,
		classes);
}

char *ts_network_resnet18_source(int batch, int image, int width,
	int classes)
{
	char *buf = NULL, *body = NULL, *decl = NULL;
	size_t len = 0, blen = 0, dlen = 0;
	FILE *f, *fb, *fd;

	if (batch < 1 || image < 32 || image % 32 || width < 1 || classes < 1)
		return NULL;
	fb = open_memstream(&body, &blen);
	fd = open_memstream(&decl, &dlen);
	if (!fb || !fd)
		return NULL;
	resnet_body(fb, fd, image, width, classes);
	fclose(fb);
	fclose(fd);
	f = open_memstream(&buf, &len);
	if (f) {
		fprintf(f, "# ResNet-18 for inference (batch norm folded into "
			"the convolutions),\n# batch %d, %dx%d images, width %d, "
			"%d classes.\nlet N = %d\ninput X: f32[N, 3, %d, %d]\n"
			"%s\n%s", batch, image, image, width, classes, batch,
			image, image, decl, body);
	}
	free(body);
	free(decl);
	return f ? finish_text(f, &buf) : NULL;
}

ts_dag *ts_network_resnet18(ts_ctx *ctx, int batch, int image, int width,
	int classes)
{
	return parse_owned(ctx, "resnet18", ts_network_resnet18_source(batch,
		image, width, classes));
}

/* Write a dense layer "name" = "x" (rows x "in") times "w"^T plus "b". */
static void dense_text(FILE *f, const char *name, const char *x,
	const char *w, const char *b, int rows, int in, int out)
{
	fprintf(f, "%s_M[i: %d, o: %d] = sum(k: %d) %s[i, k] * %s[o, k]\n"
		"%s[i: %d, o: %d] = %s_M[i, o] + %s[o]\n", name, rows, out, in,
		x, w, name, rows, out, name, b);
}

/* Write a layer norm "name" of "x" (rows x "d") with gain "g", bias
 * "b"; "out" marks it as the output. */
static void layernorm_text(FILE *f, const char *name, const char *x,
	const char *g, const char *b, int rows, int d, bool out)
{
	fprintf(f, "%s_Mu[i: %d] = (sum(k: %d) %s[i, k]) / %d.0\n", name,
		rows, d, x, d);
	fprintf(f, "%s_Var[i: %d] = (sum(k: %d) (%s[i, k] - %s_Mu[i]) * "
		"(%s[i, k] - %s_Mu[i])) / %d.0\n", name, rows, d, x, name, x,
		name, d);
	fprintf(f, "%s%s[i: %d, j: %d] = (%s[i, j] - %s_Mu[i]) * "
		"rsqrt(%s_Var[i] + 1e-5) * %s[j] + %s[j]\n", out ? "output " : "",
		name, rows, d, x, name, name, g, b);
}

/* Write the attention of the transformer layer. */
static void attention_text(FILE *f, int seq, int hidden, int heads)
{
	int dh = hidden / heads;

	dense_text(f, "Q", "X", "Wq", "Bq", seq, hidden, hidden);
	dense_text(f, "K", "X", "Wk", "Bk", seq, hidden, hidden);
	dense_text(f, "V", "X", "Wv", "Bv", seq, hidden, hidden);
	fprintf(f, "S0[h: %d, i: %d, j: %d] = sum(d: %d) Q[i, h * %d + d] * "
		"K[j, h * %d + d]\n", heads, seq, seq, dh, dh, dh);
	fprintf(f, "S[h: %d, i: %d, j: %d] = S0[h, i, j] * %.9g\n", heads, seq,
		seq, 1.0 / sqrt((double)dh));
	fprintf(f, "SM[h: %d, i: %d] = max(j: %d) S[h, i, j]\n", heads, seq,
		seq);
	fprintf(f, "SE[h: %d, i: %d] = sum(j: %d) exp(S[h, i, j] - SM[h, i])\n",
		heads, seq, seq);
	fprintf(f, "P[h: %d, i: %d, j: %d] = exp(S[h, i, j] - SM[h, i]) / "
		"SE[h, i]\n", heads, seq, seq);
	fprintf(f, "Ctx[h: %d, i: %d, d: %d] = sum(j: %d) P[h, i, j] * "
		"V[j, h * %d + d]\n", heads, seq, dh, seq, dh);
	fprintf(f, "Att[i: %d, o: %d] = sum(h: %d, d: %d) Ctx[h, i, d] * "
		"Wo[o, h * %d + d]\n", seq, hidden, heads, dh, dh);
	fprintf(f, "A1[i: %d, o: %d] = Att[i, o] + Bo[o] + X[i, o]\n", seq,
		hidden);
}

/* Write the GELU MLP and the second residual of the transformer layer. */
static void mlp_text(FILE *f, int seq, int hidden, int ffn)
{
	fprintf(f, "H0[i: %d, o: %d] = sum(k: %d) N1[i, k] * W1[o, k]\n",
		seq, ffn, hidden);
	fprintf(f, "H[i: %d, o: %d] = 0.5 * (H0[i, o] + B1[o]) * (1.0 + "
		"erf((H0[i, o] + B1[o]) * 0.707106781))\n", seq, ffn);
	fprintf(f, "F0[i: %d, o: %d] = sum(k: %d) H[i, k] * W2[o, k]\n",
		seq, hidden, ffn);
	fprintf(f, "A2[i: %d, o: %d] = F0[i, o] + B2[o] + N1[i, o]\n", seq,
		hidden);
}

char *ts_network_transformer_source(int seq, int hidden, int heads,
	int ffn)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (seq < 1 || heads < 1 || hidden < heads || hidden % heads ||
	    ffn < 1 || !(f = open_memstream(&buf, &len)))
		return NULL;
	fprintf(f, "# One transformer encoder layer (post-norm, BERT-base "
		"shape): %d tokens,\n# hidden %d, %d heads, MLP %d with GELU.\n",
		seq, hidden, heads, ffn);
	fprintf(f, "input X: f32[%d, %d]\n", seq, hidden);
	for (const char *w = "qkvo"; *w; w++)
		fprintf(f, "weight W%c: f32[%d, %d]\nweight B%c: f32[%d]\n", *w,
			hidden, hidden, *w, hidden);
	fprintf(f, "weight G1: f32[%d]\nweight E1: f32[%d]\n"
		"weight W1: f32[%d, %d]\nweight B1: f32[%d]\n"
		"weight W2: f32[%d, %d]\nweight B2: f32[%d]\n"
		"weight G2: f32[%d]\nweight E2: f32[%d]\n\n", hidden, hidden, ffn,
		hidden, ffn, hidden, ffn, hidden, hidden, hidden);
	attention_text(f, seq, hidden, heads);
	layernorm_text(f, "N1", "A1", "G1", "E1", seq, hidden, false);
	mlp_text(f, seq, hidden, ffn);
	layernorm_text(f, "Y", "A2", "G2", "E2", seq, hidden, true);
	return finish_text(f, &buf);
}

ts_dag *ts_network_transformer(ts_ctx *ctx, int seq, int hidden, int heads,
	int ffn)
{
	return parse_owned(ctx, "transformer",
		ts_network_transformer_source(seq, hidden, heads, ffn));
}
