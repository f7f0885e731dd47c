#!/usr/bin/python3
"""Cases of the convolutions, pools and quantized operators that ONNX's
node tests miss.

Writes, under the folder given, one ONNX-style test folder per case
(model.onnx, test_data_set_0/input_K.pb and output_K.pb), the outputs
computed here by plain loops over NumPy arrays, so that
tests/onnx/conformance runs them like ONNX's own:

    python3 tests/onnx/nn_cases.py DIR && tests/onnx/conformance DIR/
"""
import itertools
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

rng = np.random.default_rng(7)

DTYPES = {np.float32: TensorProto.FLOAT, np.int8: TensorProto.INT8,
          np.uint8: TensorProto.UINT8, np.int64: TensorProto.INT64,
          np.int32: TensorProto.INT32}


def write(root, name, node, inputs, outputs, opset=13):
    """A one-node model over "inputs" (name -> array), expecting
    "outputs" (name -> array)."""
    def info(k, a):
        return helper.make_tensor_value_info(k, DTYPES[a.dtype.type],
                                             a.shape)
    graph = helper.make_graph(
        [node], name, [info(k, a) for k, a in inputs.items()],
        [info(k, a) for k, a in outputs.items()])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)])
    d = os.path.join(root, "test_" + name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, arrays in (("input", inputs), ("output", outputs)):
        for i, (k, a) in enumerate(arrays.items()):
            t = numpy_helper.from_array(a, k)
            with open(os.path.join(d, "test_data_set_0",
                                   "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(t.SerializeToString())


def out_extent(n, k, s, d, pb, pe, ceil=False):
    span = (k - 1) * d + 1
    num = n + pb + pe - span
    o = (-(-num // s) if ceil else num // s) + 1
    if ceil and (o - 1) * s >= n + pb:
        o -= 1
    return o


def conv(x, w, b, group, s, d, pb, pe):
    nsp = x.ndim - 2
    m, cg = w.shape[0], w.shape[1]
    mg = m // group
    out = [out_extent(x.shape[2 + j], w.shape[2 + j], s[j], d[j], pb[j],
                      pe[j]) for j in range(nsp)]
    y = np.zeros([x.shape[0], m] + out, np.float64)
    for idx in itertools.product(*[range(e) for e in y.shape]):
        n, o, sp = idx[0], idx[1], idx[2:]
        g = o // mg
        acc = 0.0
        for c in range(cg):
            for r in itertools.product(*[range(k) for k in w.shape[2:]]):
                p = [sp[j] * s[j] + r[j] * d[j] - pb[j] for j in range(nsp)]
                if all(0 <= p[j] < x.shape[2 + j] for j in range(nsp)):
                    acc += float(x[(n, g * cg + c) + tuple(p)]) * \
                        float(w[(o, c) + tuple(r)])
        y[idx] = acc + (b[o] if b is not None else 0)
    return y


def conv_transpose(x, w, b, group, s, d, pb, out):
    nsp = x.ndim - 2
    c, mg = w.shape[0], w.shape[1]
    cg = c // group
    y = np.zeros([x.shape[0], mg * group] + out, np.float64)
    for idx in itertools.product(*[range(e) for e in x.shape]):
        n, ci, sp = idx[0], idx[1], idx[2:]
        g = ci // cg
        for oc in range(mg):
            for r in itertools.product(*[range(k) for k in w.shape[2:]]):
                p = [sp[j] * s[j] + r[j] * d[j] - pb[j] for j in range(nsp)]
                if all(0 <= p[j] < out[j] for j in range(nsp)):
                    y[(n, g * mg + oc) + tuple(p)] += \
                        float(x[idx]) * float(w[(ci, oc) + tuple(r)])
    if b is not None:
        y += b.reshape([1, -1] + [1] * nsp)
    return y


def pool(x, kind, k, s, d, pb, pe, ceil=False, cip=0, p=2, order=0):
    nsp = x.ndim - 2
    ins = x.shape[2:]
    out = [out_extent(ins[j], k[j], s[j], d[j], pb[j], pe[j], ceil)
           for j in range(nsp)]
    y = np.zeros(list(x.shape[:2]) + out, np.float64)
    ind = np.zeros(y.shape, np.int64)
    for idx in itertools.product(*[range(e) for e in y.shape]):
        n, c, sp = idx[0], idx[1], idx[2:]
        vals, flat, count = [], [], 0
        for r in itertools.product(*[range(kk) for kk in k]):
            q = [sp[j] * s[j] + r[j] * d[j] - pb[j] for j in range(nsp)]
            if all(-pb[j] <= q[j] < ins[j] + pe[j] for j in range(nsp)):
                count += 1
            if all(0 <= q[j] < ins[j] for j in range(nsp)):
                vals.append(float(x[(n, c) + tuple(q)]))
                if order == 0:
                    f = int(np.ravel_multi_index(q, ins))
                else:
                    f = int(np.ravel_multi_index(q[::-1], ins[::-1]))
                flat.append((n * x.shape[1] + c) * int(np.prod(ins)) + f)
        if kind == "max":
            i = int(np.argmax(vals))
            y[idx], ind[idx] = vals[i], flat[i]
        elif kind == "avg":
            y[idx] = sum(vals) / (count if cip else len(vals))
        else:
            y[idx] = sum(abs(v) ** p for v in vals) ** (1.0 / p)
    return y, ind


def f32(a):
    return np.asarray(a).astype(np.float32)


def conv_case(root, name, xs, ws, bias=True, opset=13, **attrs):
    x = f32(rng.standard_normal(xs))
    w = f32(rng.standard_normal(ws))
    nsp = len(xs) - 2
    group = attrs.get("group", 1)
    s = attrs.get("strides", [1] * nsp)
    d = attrs.get("dilations", [1] * nsp)
    pads = attrs.get("pads", [0] * 2 * nsp)
    pb, pe = list(pads[:nsp]), list(pads[nsp:])
    ap = attrs.get("auto_pad", "NOTSET")
    if ap.startswith("SAME"):
        for j in range(nsp):
            o = -(-xs[2 + j] // s[j])
            tot = max(0, (o - 1) * s[j] + (ws[2 + j] - 1) * d[j] + 1 -
                      xs[2 + j])
            pb[j] = tot // 2 if ap == "SAME_UPPER" else tot - tot // 2
            pe[j] = tot - pb[j]
    ins = {"x": x, "w": w}
    b = None
    if bias:
        b = f32(rng.standard_normal(ws[0]))
        ins["b"] = b
    y = f32(conv(x, w, b, group, s, d, pb, pe))
    node = helper.make_node("Conv", list(ins), ["y"], **attrs)
    write(root, name, node, ins, {"y": y}, opset)


def main(root):
    conv_case(root, "nn_conv_group_bias", [2, 4, 6, 5], [6, 2, 3, 3],
              group=2, pads=[1, 0, 2, 1], strides=[2, 1],
              dilations=[1, 2])
    conv_case(root, "nn_conv_depthwise_multiplier", [1, 3, 7, 7],
              [6, 1, 3, 3], bias=False, group=3, auto_pad="SAME_LOWER",
              strides=[2, 2])
    conv_case(root, "nn_conv_depthwise", [1, 4, 6, 6], [4, 1, 3, 3],
              group=4, pads=[1, 1, 1, 1])
    conv_case(root, "nn_conv_1d", [1, 2, 9], [3, 2, 4], pads=[2, 1],
              dilations=[2])
    conv_case(root, "nn_conv_3d_same_upper", [1, 2, 4, 5, 4],
              [2, 2, 2, 3, 2], auto_pad="SAME_UPPER", strides=[1, 2, 1])
    conv_case(root, "nn_conv_1x1_stride2", [1, 4, 5, 5], [8, 4, 1, 1],
              strides=[2, 2])
    conv_case(root, "nn_conv_opset11_valid", [1, 3, 6, 5], [2, 3, 2, 2],
              opset=11, auto_pad="VALID", strides=[2, 2])

    # ConvTranspose with groups, bias, asymmetric pads, output_padding
    # and dilations.
    x = f32(rng.standard_normal([1, 4, 3, 4]))
    w = f32(rng.standard_normal([4, 3, 3, 2]))
    b = f32(rng.standard_normal(6))
    s, d, pads, op = [2, 3], [1, 2], [1, 0, 0, 1], [1, 0]
    out = [s[j] * (x.shape[2 + j] - 1) + op[j] + (w.shape[2 + j] - 1) *
           d[j] + 1 - pads[j] - pads[j + 2] for j in range(2)]
    y = f32(conv_transpose(x, w, b, 2, s, d, pads[:2], out))
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"],
                            group=2, strides=s, dilations=d, pads=pads,
                            output_padding=op)
    write(root, "nn_convtranspose_group_bias", node,
          {"x": x, "w": w, "b": b}, {"y": y})

    # Global pools at a recent opset.
    x = f32(rng.standard_normal([2, 3, 4, 5]))
    for op, y in (("GlobalAveragePool", x.mean(axis=(2, 3), keepdims=True)),
                  ("GlobalMaxPool", x.max(axis=(2, 3), keepdims=True)),
                  ("GlobalLpPool", np.sqrt((x.astype(np.float64) ** 2).sum(
                      axis=(2, 3), keepdims=True)))):
        write(root, "nn_" + op.lower(), helper.make_node(op, ["x"], ["y"]),
              {"x": x}, {"y": f32(y)})
    y = (np.abs(x.astype(np.float64)) ** 3).sum(axis=(2, 3),
                                                 keepdims=True) ** (1 / 3)
    write(root, "nn_globallppool_p3",
          helper.make_node("GlobalLpPool", ["x"], ["y"], p=3),
          {"x": x}, {"y": f32(y)})

    # LpPool.
    x = f32(rng.standard_normal([1, 2, 6, 7]))
    for p in (1, 2, 3):
        y, _ = pool(x, "lp", [3, 2], [2, 2], [1, 1], [1, 0], [1, 1], p=p)
        write(root, "nn_lppool_p%d" % p, helper.make_node(
            "LpPool", ["x"], ["y"], kernel_shape=[3, 2], strides=[2, 2],
            pads=[1, 0, 1, 1], p=p), {"x": x}, {"y": f32(y)})

    # AveragePool, ceil mode and padding, with and without the pads in
    # the count; a last window that would start in the padding is
    # dropped.
    x = f32(rng.standard_normal([1, 2, 6, 7]))
    for cip in (0, 1):
        y, _ = pool(x, "avg", [3, 3], [2, 2], [1, 1], [1, 1], [1, 1],
                    ceil=True, cip=cip)
        write(root, "nn_averagepool_ceil_pads_cip%d" % cip,
              helper.make_node("AveragePool", ["x"], ["y"],
                               kernel_shape=[3, 3], strides=[2, 2],
                               pads=[1, 1, 1, 1], ceil_mode=1,
                               count_include_pad=cip),
              {"x": x}, {"y": f32(y)})
    x = f32(rng.standard_normal([1, 1, 5, 5]))
    y, _ = pool(x, "avg", [2, 2], [2, 2], [1, 1], [1, 1], [1, 1], ceil=True)
    write(root, "nn_averagepool_ceil_drop_last", helper.make_node(
        "AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2],
        pads=[1, 1, 1, 1], ceil_mode=1), {"x": x}, {"y": f32(y)})

    # MaxPool: Indices in 3-D with padding, in both storage orders with
    # dilations and ceil mode, and an int8 input padded by -128.
    x = f32(rng.standard_normal([2, 2, 5, 4, 6]))
    y, ind = pool(x, "max", [2, 3, 2], [2, 1, 2], [1, 1, 1], [1, 1, 0],
                  [0, 1, 1])
    write(root, "nn_maxpool_3d_indices", helper.make_node(
        "MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 3, 2],
        strides=[2, 1, 2], pads=[1, 1, 0, 0, 1, 1]),
        {"x": x}, {"y": f32(y), "i": ind})
    x = f32(rng.standard_normal([1, 3, 7, 6]))
    for order in (0, 1):
        y, ind = pool(x, "max", [2, 2], [2, 1], [2, 1], [1, 0], [0, 1],
                      ceil=True, order=order)
        write(root, "nn_maxpool_indices_order%d" % order, helper.make_node(
            "MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2],
            strides=[2, 1], dilations=[2, 1], pads=[1, 0, 0, 1],
            ceil_mode=1, storage_order=order),
            {"x": x}, {"y": f32(y), "i": ind})
    x = rng.integers(-128, 128, [1, 2, 5, 5]).astype(np.int8)
    y, _ = pool(x, "max", [3, 3], [2, 2], [1, 1], [1, 1], [1, 1])
    write(root, "nn_maxpool_int8_pads", helper.make_node(
        "MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
        pads=[1, 1, 1, 1]), {"x": x}, {"y": y.astype(np.int8)})


def requant(acc, xs, ws, ys, yz, t):
    """round(f32(acc) * (xs * ws / ys)) + yz in f32, half to even,
    saturated to "t"."""
    m = (np.float32(xs) * np.float32(ws)) / np.float32(ys)
    y = np.rint(acc.astype(np.float32) * m.astype(np.float32)) + \
        np.float32(yz)
    info = np.iinfo(t)
    return np.clip(y, info.min, info.max).astype(t)


def quant_cases(root):
    # QuantizeLinear per axis to int8: halves round to even, saturation.
    x = f32(rng.standard_normal([2, 3, 4]) * 100)
    x[0, 0, :4] = [2.5, 3.5, -2.5, -0.5]
    s = f32([1.0, 0.5, 2.0])
    z = np.array([0, -3, 10], np.int8)
    y = np.clip(np.rint(x / s.reshape(1, 3, 1)) + z.reshape(1, 3, 1),
                -128, 127).astype(np.int8)
    write(root, "nn_quantizelinear_axis_int8", helper.make_node(
        "QuantizeLinear", ["x", "s", "z"], ["y"], axis=-2),
        {"x": x, "s": s, "z": z}, {"y": y})
    # DequantizeLinear of int32 without a zero point.
    x = rng.integers(-1000, 1000, [3, 4]).astype(np.int32)
    s = np.array(np.float32(0.25))
    write(root, "nn_dequantizelinear_int32", helper.make_node(
        "DequantizeLinear", ["x", "s"], ["y"]), {"x": x, "s": s},
        {"y": f32(x.astype(np.float32) * s)})

    # MatMulInteger, int8, zero points per row of A and column of B.
    a = rng.integers(-128, 128, [2, 3, 5]).astype(np.int8)
    b = rng.integers(-128, 128, [5, 4]).astype(np.int8)
    az = rng.integers(-5, 5, [3]).astype(np.int8)
    bz = rng.integers(-5, 5, [4]).astype(np.int8)
    y = np.matmul(a.astype(np.int32) - az.reshape(3, 1),
                  b.astype(np.int32) - bz).astype(np.int32)
    write(root, "nn_matmulinteger_int8_per_row_col", helper.make_node(
        "MatMulInteger", ["a", "b", "az", "bz"], ["y"]),
        {"a": a, "b": b, "az": az, "bz": bz}, {"y": y}, opset=10)

    # QLinearMatMul, b quantized per column.
    a = rng.integers(0, 256, [3, 6]).astype(np.uint8)
    b = rng.integers(0, 256, [6, 4]).astype(np.uint8)
    ins = {"a": a, "as": f32([0.02]), "az": np.array([120], np.uint8),
           "b": b, "bs": f32([0.01, 0.03, 0.005, 0.02]),
           "bz": np.array([128, 100, 130, 90], np.uint8),
           "ys": f32([0.6]), "yz": np.array([5], np.int8)}
    acc = np.matmul(a.astype(np.int32) - 120,
                    b.astype(np.int32) - ins["bz"].astype(np.int32))
    y = requant(acc, ins["as"][0], ins["bs"], ins["ys"][0], 5, np.int8)
    write(root, "nn_qlinearmatmul_per_column", helper.make_node(
        "QLinearMatMul", list(ins), ["y"]), ins, {"y": y}, opset=10)

    # ConvInteger and QLinearConv: int8, groups, padding, strides, w per
    # output channel, bias.
    x = rng.integers(-128, 128, [1, 4, 6, 5]).astype(np.int8)
    w = rng.integers(-128, 128, [6, 2, 3, 3]).astype(np.int8)
    xz = np.int8(-7)
    wz = rng.integers(-3, 3, [6]).astype(np.int8)
    attrs = dict(group=2, pads=[1, 0, 1, 2], strides=[2, 1])
    acc = conv((x.astype(np.int32) - xz).astype(np.float64),
               (w.astype(np.int32) - wz.reshape(6, 1, 1, 1)).astype(
                   np.float64), None, 2, [2, 1], [1, 1], [1, 0], [1, 2])
    acc = acc.astype(np.int32)
    write(root, "nn_convinteger_group_per_channel", helper.make_node(
        "ConvInteger", ["x", "w", "xz", "wz"], ["y"], **attrs),
        {"x": x, "w": w, "xz": np.array(xz), "wz": wz}, {"y": acc},
        opset=10)
    bias = rng.integers(-2000, 2000, [6]).astype(np.int32)
    ws = f32(rng.uniform(0.001, 0.01, [6]))
    ins = {"x": x, "xs": np.array(np.float32(0.05)), "xz": np.array(xz),
           "w": w, "ws": ws, "wz": wz, "ys": np.array(np.float32(0.3)),
           "yz": np.array(np.uint8(128)), "b": bias}
    y = requant(acc + bias.reshape(1, 6, 1, 1), np.float32(0.05),
                ws.reshape(1, 6, 1, 1), np.float32(0.3), 128, np.uint8)
    write(root, "nn_qlinearconv_group_per_channel_bias", helper.make_node(
        "QLinearConv", list(ins), ["y"], **attrs), ins, {"y": y},
        opset=10)


if __name__ == "__main__":
    main(sys.argv[1])
    quant_cases(sys.argv[1])
