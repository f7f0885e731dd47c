#!/usr/bin/python3
"""Node tests in the layout of ONNX's backend tests, for cases of the
reductions, normalisations and Einsum that ONNX's own tests miss: the
opsets before 13 (axes as attributes, Softmax over a flattened tail),
integer reductions, ties, the defaults no test uses, and Einsum's
implicit outputs, traces, uppercase letters, ellipses and broadcasting.  The expected outputs are NumPy's, written the way
ONNX's reference writes them.

    reduce_cases.py OUTDIR     writes OUTDIR/test_*/
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

rng = np.random.default_rng(7)
ELEM = {np.dtype(np.float32): onnx.TensorProto.FLOAT,
        np.dtype(np.float64): onnx.TensorProto.DOUBLE,
        np.dtype(np.int32): onnx.TensorProto.INT32,
        np.dtype(np.int64): onnx.TensorProto.INT64}


def case(out, name, op, inputs, outputs, opset=13, **attrs):
    """One node "op" on the arrays "inputs", expected "outputs"."""
    ins = ['x%d' % i for i in range(len(inputs))]
    outs = ['y%d' % i for i in range(len(outputs))]
    node = helper.make_node(op, ins, outs, **attrs)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(n, ELEM[a.dtype], a.shape)
         for n, a in zip(ins, inputs)],
        [helper.make_tensor_value_info(n, ELEM[a.dtype], a.shape)
         for n, a in zip(outs, outputs)])
    model = helper.make_model(
        graph, producer_name='reduce_cases',
        opset_imports=[helper.make_opsetid('', opset)])
    d = os.path.join(out, 'test_' + name)
    os.makedirs(os.path.join(d, 'test_data_set_0'), exist_ok=True)
    onnx.save(model, os.path.join(d, 'model.onnx'))
    for prefix, arrays in (('input', inputs), ('output', outputs)):
        for i, a in enumerate(arrays):
            t = numpy_helper.from_array(np.asarray(a), prefix + str(i))
            with open(os.path.join(d, 'test_data_set_0',
                                   '%s_%d.pb' % (prefix, i)), 'wb') as f:
                f.write(t.SerializeToString())


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def softmax_2d(x, axis, log=False, hard=False):
    """Softmax before opset 13: x as a matrix split at "axis"."""
    m = x.reshape(int(np.prod(x.shape[:axis])), -1)
    if hard:
        y = np.zeros_like(m)
        y[np.arange(m.shape[0]), np.argmax(m, axis=1)] = 1
    else:
        t = m - m.max(axis=1, keepdims=True)
        s = np.exp(t).sum(axis=1, keepdims=True)
        y = t - np.log(s) if log else np.exp(t) / s
    return y.reshape(x.shape)


def main(out):
    x = f32(2, 3, 4)
    case(out, 'softmax_opset11_axis1', 'Softmax', [x],
         [softmax_2d(x, 1)], opset=11, axis=1)
    case(out, 'softmax_opset11_default', 'Softmax', [x],
         [softmax_2d(x, 1)], opset=11)
    case(out, 'logsoftmax_opset11_axis0', 'LogSoftmax', [x],
         [softmax_2d(x, 0, log=True)], opset=11, axis=0)
    # Ties: the first maximum of the flattened row wins.
    xt = rng.integers(0, 3, (2, 3, 4)).astype(np.float32)
    case(out, 'hardmax_opset11_ties', 'Hardmax', [xt],
         [softmax_2d(xt, 1, hard=True)], opset=11)
    case(out, 'hardmax_ties', 'Hardmax', [xt],
         [softmax_2d(np.moveaxis(xt, 1, 2), 2, hard=True)
          .transpose(0, 2, 1)], axis=1)

    case(out, 'reduce_sum_opset11_axes', 'ReduceSum', [x],
         [x.sum(axis=(0, 2))], opset=11, axes=[0, -1], keepdims=0)
    case(out, 'reduce_mean_all_scalar', 'ReduceMean', [x],
         [np.array(x.mean(), dtype=np.float32)], keepdims=0)
    xi = rng.integers(-50, 50, (3, 4, 5)).astype(np.int32)
    case(out, 'reduce_max_int32', 'ReduceMax', [xi],
         [xi.max(axis=1, keepdims=True)], axes=[1])
    case(out, 'reduce_min_int32', 'ReduceMin', [xi],
         [xi.min(axis=(0, 2))], axes=[0, 2], keepdims=0)
    case(out, 'reduce_l1_int32', 'ReduceL1', [xi],
         [np.abs(xi).sum(axis=2).astype(np.int32)], axes=[2], keepdims=0)
    case(out, 'reduce_sum_square_int32', 'ReduceSumSquare', [xi],
         [(xi * xi).sum(axis=0, keepdims=True).astype(np.int32)],
         axes=[0])
    xp = rng.integers(-3, 4, (3, 4)).astype(np.int64)
    case(out, 'reduce_prod_int64', 'ReduceProd', [xp],
         [xp.prod(axis=1)], axes=[1], keepdims=0)
    xl = np.array([[0, 1, 2], [1000, 1001, 1002],
                   [-np.inf, -np.inf, -np.inf]], dtype=np.float32)
    with np.errstate(divide='ignore'):
        lse = np.log(np.exp(xl.astype(np.float64) - [[0], [1002], [0]])
                     .sum(axis=1)) + [0, 1002, 0]
    case(out, 'reduce_log_sum_exp_extremes', 'ReduceLogSumExp', [xl],
         [lse.astype(np.float32)], axes=[1], keepdims=0)

    xa = rng.integers(0, 3, (3, 5)).astype(np.int32)
    case(out, 'argmin_int32_last', 'ArgMin', [xa],
         [(4 - np.argmin(xa[:, ::-1], axis=1)).astype(np.int64)],
         axis=1, keepdims=0, select_last_index=1)
    case(out, 'argmax_int32_first', 'ArgMax', [xa],
         [np.argmax(xa, axis=0)[None, :].astype(np.int64)])

    for p in (1, 2):
        xn = f32(3, 4)
        norm = np.linalg.norm(xn, ord=p, axis=0, keepdims=True)
        case(out, 'lpnorm_p%d_axis0' % p, 'LpNormalization', [xn],
             [(xn / norm).astype(np.float32)], axis=0, p=p)
    xn = f32(3, 4)
    case(out, 'lpnorm_default', 'LpNormalization', [xn],
         [(xn / np.linalg.norm(xn, axis=-1, keepdims=True))
          .astype(np.float32)])

    xn = f32(2, 3, 4)
    w = f32(4)
    mu = xn.mean(axis=2, keepdims=True)
    var = ((xn - mu) ** 2).mean(axis=2, keepdims=True)
    case(out, 'layer_norm_no_bias', 'LayerNormalization', [xn, w],
         [((xn - mu) / np.sqrt(var + 1e-5) * w).astype(np.float32)],
         opset=17)

    xb = f32(4, 3)
    s, b, m = f32(3), f32(3), f32(3)
    v = np.abs(f32(3)) + 0.5
    case(out, 'batchnorm_opset9_rank2', 'BatchNormalization',
         [xb, s, b, m, v], [(s * (xb - m) / np.sqrt(v + 1e-5) + b)
                             .astype(np.float32)], opset=9)

    xm = f32(2, 3, 4)
    mu = xm.mean(axis=(1,), keepdims=True)
    sd = np.sqrt((xm ** 2).mean(axis=(1,), keepdims=True) - mu ** 2)
    case(out, 'mvn_axes1', 'MeanVarianceNormalization', [xm],
         [((xm - mu) / (sd + 1e-9)).astype(np.float32)], axes=[1])

    xr = f32(2, 6, 3)
    size, alpha, beta, bias = 4, 1e-2, 0.6, 1.5
    sq = np.zeros_like(xr)
    for c in range(6):
        lo = max(0, c - (size - 1) // 2)
        hi = min(5, c + (size - 1) - (size - 1) // 2)
        sq[:, c] = (xr[:, lo:hi + 1] ** 2).sum(axis=1)
    case(out, 'lrn_even_size', 'LRN', [xr],
         [(xr / (bias + alpha / size * sq) ** beta).astype(np.float32)],
         size=size, alpha=alpha, beta=beta, bias=bias)

    einsums = [
        ('matmul_implicit', 'ij,jk', [(2, 3), (3, 4)]),
        ('outer', 'i,j->ij', [(3,), (4,)]),
        ('trace', 'ii', [(4, 4)]),
        ('diagonal', 'ii->i', [(4, 4)]),
        ('three', 'abc,cd,de->abe', [(2, 3, 4), (4, 5), (5, 2)]),
        ('permute', 'ijk->kji', [(2, 3, 4)]),
        ('upper', 'Ab,bA->', [(3, 4), (4, 3)]),
        ('ellipsis_bcast', '...ij,...jk->...ik', [(2, 1, 3, 4), (5, 4, 2)]),
        ('ellipsis_front', 'i...->...', [(3, 2, 4)]),
        ('ellipsis_implicit', '...ij', [(2, 3, 4)]),
        ('spaces', ' ij , jk -> ki ', [(2, 3), (3, 4)]),
    ]
    for name, eq, shapes in einsums:
        args = [f32(*sh).astype(np.float64) for sh in shapes]
        case(out, 'einsum_' + name, 'Einsum', args,
             [np.asarray(np.einsum(eq.replace(' ', ''), *args))],
             opset=12, equation=eq)
    xi = rng.integers(-5, 5, (3, 4)).astype(np.int64)
    yi = rng.integers(-5, 5, (4,)).astype(np.int64)
    case(out, 'einsum_int64', 'Einsum', [xi, yi],
         [np.einsum('ij,j->i', xi, yi)], opset=12, equation='ij,j->i')


if __name__ == '__main__':
    main(sys.argv[1])
