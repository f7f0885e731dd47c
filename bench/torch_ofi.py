"""PyTorch's torch.jit.optimize_for_inference for the benchmark scripts.

The module, in eval mode, is traced on an example input with
torch.jit.trace (so the result holds for that input's shape only);
torch.jit.optimize_for_inference freezes the trace (torch.jit.freeze:
parameters and buffers become constants of the graph) and rewrites the
graph for inference (convolutions with batch norms folded in, MKL-DNN
layouts where PyTorch was built with it).  The first calls of the result
go through the JIT's profiling executor, which records shapes and then
compiles the graph again: they are made here, before anything is timed.
"""
import warnings

import torch

# Calls made before the module is handed back: one profiling call, one
# that compiles the profiled graph, and one more of the compiled graph.
WARM_UP = 3


def optimize(module, x, calls=WARM_UP):
    """torch.jit.optimize_for_inference of module traced on x, and the
    outputs of its first calls on x (all under torch.no_grad()), to be
    compared with the module's own.  The tracer's and the optimiser's
    exceptions (of many kinds) propagate."""
    with torch.no_grad(), warnings.catch_warnings():
        # The tracer's warnings about values taken as constants: the trace
        # is only ever called on inputs of x's shape.
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        traced = torch.jit.trace(module.eval(), x)
        ofi = torch.jit.optimize_for_inference(traced)
        outs = [ofi(x) for _ in range(max(calls, 1))]
    return ofi, outs
