/* Whole networks written with compute only, at any size: a LeNet-like
 * network, an MLP, ResNet-18 (inference: batch norm folded into the
 * convolutions' weights and biases) and a transformer encoder layer
 * (BERT-base shape: attention with softmax, layer norms, GELU MLP).
 *
 * Each builder writes the network as .tsl text (the *_source functions,
 * text in malloc'd memory the caller frees) and parses it, so the files
 * examples/resnet18.tsl and examples/transformer.tsl are exactly the
 * real-size text.  Builders return NULL with a message in "ctx" for bad
 * sizes.  Not installed. */
#ifndef TESSEL_EXAMPLES_NETWORKS_H
#define TESSEL_EXAMPLES_NETWORKS_H

#include <tessel/dsl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* LeNet-like on "batch" 1x28x28 images (examples/lenet.tsl at batch 1). */
char *ts_network_lenet_source(int batch);
ts_dag *ts_network_lenet(ts_ctx *ctx, int batch);

/* MLP 784-512-512-10 with relu (examples/mlp.tsl at batch 1). */
char *ts_network_mlp_source(int batch);
ts_dag *ts_network_mlp(ts_ctx *ctx, int batch);

/* ResNet-18 on "batch" 3x"image"x"image" images, "width" channels in
 * the first stage (64 in the real network), "classes" outputs (1000).
 * "image" must be a multiple of 32. */
char *ts_network_resnet18_source(int batch, int image, int width,
	int classes);
ts_dag *ts_network_resnet18(ts_ctx *ctx, int batch, int image, int width,
	int classes);

/* One transformer encoder layer on "seq" tokens of "hidden" features,
 * "heads" heads (hidden divisible by heads), MLP of "ffn" features
 * (real: 128, 768, 12, 3072). */
char *ts_network_transformer_source(int seq, int hidden, int heads,
	int ffn);
ts_dag *ts_network_transformer(ts_ctx *ctx, int seq, int hidden, int heads,
	int ffn);

#ifdef __cplusplus
}
#endif

#endif
