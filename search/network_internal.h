/* Shared by the network passes of search/: copying the stages of a DAG
 * onto other inputs.  Not installed. */
#ifndef TESSEL_SEARCH_NETWORK_INTERNAL_H
#define TESSEL_SEARCH_NETWORK_INTERNAL_H

#include <tessel/network.h>

/* Copy every stage of "src" in "ctx", reading "inputs"[i] wherever
 * src->inputs[i] was read (a tensor of the same shape and dtype); write
 * the copies of src->outputs into "outs". */
ts_status ts_dag_copy_stages(ts_ctx *ctx, const ts_dag *src,
	ts_tensor *const *inputs, ts_tensor **outs);

#endif
