#!/usr/bin/python3
"""Cases of the losses, scatters, sorting, windows and recurrent layers
that ONNX's node tests miss.

Writes, under the folder given, one ONNX-style test folder per case
(model.onnx, test_data_set_0/input_K.pb and output_K.pb), the outputs
computed here by plain loops over NumPy arrays, so that
tests/onnx/conformance runs them like ONNX's own:

    python3 tests/onnx/misc_cases.py DIR && tests/onnx/conformance DIR/
"""
import itertools
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

rng = np.random.default_rng(11)

DTYPES = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
          np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8,
          np.int64: TensorProto.INT64, np.int32: TensorProto.INT32,
          np.bool_: TensorProto.BOOL}


def write(root, name, node, inputs, outputs, opset=13, inits=None):
    """A one-node model (or one of the nodes of a list) over "inputs"
    (name -> array), expecting "outputs" (name -> array); "inits" are
    initializers."""
    def info(k, a):
        return helper.make_tensor_value_info(k, DTYPES[a.dtype.type],
                                             a.shape)
    inits = inits or {}
    graph = helper.make_graph(
        node if isinstance(node, list) else [node], name,
        [info(k, a) for k, a in inputs.items()],
        [info(k, a) for k, a in outputs.items()],
        [numpy_helper.from_array(a, k) for k, a in inits.items()])
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


def f32(a):
    return np.asarray(a, np.float32)


def nll(logp, t, w, reduction, ii):
    """NegativeLogLikelihoodLoss by loops, in float64."""
    n, c = logp.shape[:2]
    loss = np.zeros(t.shape, np.float64)
    wsum = 0.0
    for idx in itertools.product(*[range(e) for e in t.shape]):
        k = int(t[idx])
        if ii is not None and k == ii:
            continue
        wk = 1.0 if w is None else float(w[k])
        loss[idx] = -float(logp[(idx[0], k) + idx[1:]]) * wk
        wsum += wk
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.array(loss.sum())
    return np.array(loss.sum() / wsum)


def loss_cases(root):
    # f64 scores, i32 targets, a weight, ignore_index inside the range.
    x = rng.standard_normal([3, 4, 2])
    t = rng.integers(0, 4, [3, 2]).astype(np.int32)
    t[1, 1] = 2
    w = rng.uniform(0.5, 2, [4])
    write(root, "misc_nllloss_f64_i32_weight_ii", helper.make_node(
        "NegativeLogLikelihoodLoss", ["x", "t", "w"], ["y"],
        ignore_index=2), {"x": x, "t": t, "w": w},
        {"y": nll(x, t, w, "mean", 2)})
    # SoftmaxCrossEntropyLoss, 4-D, sum, no weight, i32 targets.
    x = f32(rng.standard_normal([2, 3, 2, 2]))
    t = rng.integers(0, 3, [2, 2, 2]).astype(np.int32)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    logp = np.log(e / e.sum(1, keepdims=True))
    write(root, "misc_sce_4d_sum_i32", helper.make_node(
        "SoftmaxCrossEntropyLoss", ["x", "t"], ["y", "lp"],
        reduction="sum"), {"x": x, "t": t},
        {"y": f32(nll(logp, t, None, "sum", None)), "lp": f32(logp)})


def scatter_nd(data, ind, upd, red):
    out = data.copy()
    k = ind.shape[-1]
    for j in itertools.product(*[range(e) for e in ind.shape[:-1]]):
        pos = tuple(int(v) for v in ind[j])
        if red == "add":
            out[pos] += upd[j]
        elif red == "mul":
            out[pos] *= upd[j]
        else:
            out[pos] = upd[j]
    return out


def scatter_elements(data, ind, upd, axis, red):
    out = data.copy()
    for j in itertools.product(*[range(e) for e in ind.shape]):
        pos = list(j)
        pos[axis] = int(ind[j])
        pos = tuple(pos)
        if red == "add":
            out[pos] += upd[j]
        elif red == "mul":
            out[pos] *= upd[j]
        else:
            out[pos] = upd[j]
    return out


def scatter_cases(root):
    # ScatterND with indices of rank 1: one update of a slice.
    data = f32(rng.standard_normal([4, 3]))
    ind = np.array([-2], np.int64)
    upd = f32(rng.standard_normal([3]))
    write(root, "misc_scatternd_rank1_indices", helper.make_node(
        "ScatterND", ["d", "i", "u"], ["y"]), {"d": data, "i": ind,
        "u": upd}, {"y": scatter_nd(data, ind, upd, None)})
    # ScatterND, indices of rank 3 (i32, negative), k = 2, no reduction;
    # add and mul with repeated positions.
    data = f32(rng.standard_normal([3, 4, 2]))
    ind = np.array([[[0, 1], [-1, 3]], [[1, -4], [2, 2]]], np.int32)
    upd = f32(rng.standard_normal([2, 2, 2]))
    write(root, "misc_scatternd_rank3_indices", helper.make_node(
        "ScatterND", ["d", "i", "u"], ["y"]), {"d": data, "i": ind,
        "u": upd}, {"y": scatter_nd(data, ind, upd, None)})
    ind = np.array([[[0, 1], [-3, 1]], [[1, -4], [0, 1]]], np.int32)
    for red in ("add", "mul"):
        write(root, "misc_scatternd_repeated_" + red, helper.make_node(
            "ScatterND", ["d", "i", "u"], ["y"], reduction=red),
            {"d": data, "i": ind, "u": upd},
            {"y": scatter_nd(data, ind, upd, red)}, opset=16)
    # ScatterElements with indices smaller than the data off the axis,
    # i32 and negative; integer data with mul.
    data = rng.integers(-5, 5, [4, 5]).astype(np.int32)
    ind = np.array([[1, -1, 0], [1, 2, -4]], np.int32)
    upd = rng.integers(-3, 4, [2, 3]).astype(np.int32)
    for red in ("none", "mul"):
        write(root, "misc_scatter_elements_partial_" + red,
              helper.make_node("ScatterElements", ["d", "i", "u"], ["y"],
                               axis=0, reduction=red),
              {"d": data, "i": ind, "u": upd},
              {"y": scatter_elements(data, ind, upd, 0, red)}, opset=16)
    # bool data, axis 1 (negative).
    data = rng.integers(0, 2, [3, 4]).astype(np.bool_)
    ind = np.array([[3], [0], [-1]], np.int64)
    upd = np.array([[True], [False], [True]])
    write(root, "misc_scatter_elements_bool", helper.make_node(
        "ScatterElements", ["d", "i", "u"], ["y"], axis=-1),
        {"d": data, "i": ind, "u": upd},
        {"y": scatter_elements(data, ind % 4, upd, 1, None)})


def topk(x, k, axis, largest):
    """Indices and values, equal elements by their index."""
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    ind = np.take(order, range(k), axis=axis)
    return np.take_along_axis(x, ind, axis=axis), ind.astype(np.int64)


def topk_cases(root):
    # Opset 9 (k an attribute), i32 with ties, axis 0 of a 3-D input.
    x = rng.integers(-3, 3, [5, 2, 3]).astype(np.int32)
    v, i = topk(x, 3, 0, True)
    write(root, "misc_topk_opset9_ties", helper.make_node(
        "TopK", ["x"], ["v", "i"], k=3, axis=0), {"x": x},
        {"v": v, "i": i}, opset=9)
    # The smallest, f64, only the indices wanted, k an initializer.
    x = rng.integers(-4, 4, [2, 6]).astype(np.float64)
    v, i = topk(x, 4, 1, False)
    write(root, "misc_topk_smallest_indices_only", helper.make_node(
        "TopK", ["x", "k"], ["", "i"], largest=0), {"x": x}, {"i": i},
        opset=11, inits={"k": np.array([4], np.int64)})


def small_cases(root):
    # BitShift of u8, broadcast, shifts of the width and beyond.
    x = rng.integers(0, 256, [2, 5]).astype(np.uint8)
    y = np.array([0, 3, 7, 8, 9], np.uint8)
    for d in ("LEFT", "RIGHT"):
        z = [[(int(a) << int(b) if d == "LEFT" else int(a) >> int(b)) & 255
              for a, b in zip(row, y)] for row in x]
        write(root, "misc_bitshift_broadcast_" + d.lower(),
              helper.make_node("BitShift", ["x", "y"], ["z"], direction=d),
              {"x": x, "y": y}, {"z": np.array(z, np.uint8)}, opset=11)
    # ReverseSequence, 3-D, i32 lengths, the defaults (time 0, batch 1).
    x = f32(rng.standard_normal([4, 3, 2]))
    lens = np.array([4, 1, 3], np.int32)
    y = x.copy()
    for b, n in enumerate(lens):
        y[:n, b] = x[:n, b][::-1]
    write(root, "misc_reversesequence_3d", helper.make_node(
        "ReverseSequence", ["x", "l"], ["y"]), {"x": x, "l": lens},
        {"y": y}, opset=10)
    # MaxUnpool, 1-D with pads and stride 3, indices anywhere in the
    # output (another channel's too).
    x = f32(rng.standard_normal([1, 2, 3]))
    ind = np.array([[[0, 4, 8], [9, 3, 15]]], np.int64)
    out = np.zeros([1, 2, 8], np.float32)
    out.reshape(-1)[ind.reshape(-1)] = x.reshape(-1)
    write(root, "misc_maxunpool_1d_pads", helper.make_node(
        "MaxUnpool", ["x", "i"], ["y"], kernel_shape=[3], strides=[3],
        pads=[1, 0]), {"x": x, "i": ind}, {"y": out}, opset=11)
    # Compress along axis 1 with a shorter condition; flattened 3-D.
    x = f32(rng.standard_normal([2, 4, 3]))
    c = np.array([1, 0, 1], np.bool_)
    write(root, "misc_compress_short_condition", helper.make_node(
        "Compress", ["x", "c"], ["y"], axis=1), {"x": x},
        {"y": np.compress(c, x, axis=1)}, opset=11, inits={"c": c})
    c = rng.integers(0, 2, [20]).astype(np.bool_)
    write(root, "misc_compress_flat_3d", helper.make_node(
        "Compress", ["x", "c"], ["y"]), {"x": x},
        {"y": np.compress(c, x)}, opset=11, inits={"c": c})
    # NonZero of a known 3-D i32, its result feeding an Add.
    v = rng.integers(-1, 2, [2, 3, 2]).astype(np.int32)
    nz = np.array(np.nonzero(v), np.int64)
    one = np.ones(nz.shape, np.int64)
    graph = helper.make_graph(
        [helper.make_node("NonZero", ["v"], ["nz"]),
         helper.make_node("Add", ["nz", "one"], ["y"])],
        "misc_nonzero_known",
        [helper.make_tensor_value_info("one", TensorProto.INT64,
                                       one.shape)],
        [helper.make_tensor_value_info("y", TensorProto.INT64, nz.shape)],
        [numpy_helper.from_array(v, "v")])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 13)])
    d = os.path.join(root, "test_misc_nonzero_known")
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, a, k in (("input", one, "one"), ("output", nz + 1, "y")):
        with open(os.path.join(d, "test_data_set_0", kind + "_0.pb"),
                  "wb") as f:
            f.write(numpy_helper.from_array(a, k).SerializeToString())


ACTS = {
    "Tanh": lambda x, a, b: np.tanh(x),
    "Sigmoid": lambda x, a, b: 1 / (1 + np.exp(-x)),
    "Relu": lambda x, a, b: np.maximum(x, 0),
    "HardSigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
    "LeakyRelu": lambda x, a, b: np.where(x >= 0, x, a * x),
}


def recurrent(kind, x, w, r, b, h0, c0, p, acts, alphas, betas, dirs,
              clip=None, lbr=0):
    """RNN, GRU, LSTM in float64, layout 0: Y, Y_h, Y_c."""
    seq, batch, _ = x.shape
    hid = r.shape[2]
    nd = len(dirs)
    y = np.zeros([seq, nd, batch, hid])
    yh = np.zeros([nd, batch, hid])
    yc = np.zeros([nd, batch, hid])
    na = len(acts) // nd

    def act(d, k, v):
        if clip is not None:
            v = np.clip(v, -clip, clip)
        name, a, bb = acts[d * na + k], alphas[d * na + k], betas[d * na + k]
        return ACTS[name](v, a, bb)
    for d, rev in enumerate(dirs):
        h = h0[d].astype(np.float64)
        c = c0[d].astype(np.float64)
        wb, rb = np.split(b[d].astype(np.float64), 2)
        for s in range(seq):
            t = seq - 1 - s if rev else s
            xt = x[t].astype(np.float64)
            if kind == "RNN":
                h = act(d, 0, xt @ w[d].T + h @ r[d].T + wb + rb)
            elif kind == "GRU":
                H = hid
                g = xt @ w[d].T + wb
                z = act(d, 0, g[:, :H] + h @ r[d][:H].T + rb[:H])
                rr = act(d, 0, g[:, H:2 * H] + h @ r[d][H:2 * H].T +
                         rb[H:2 * H])
                if lbr:
                    cand = g[:, 2 * H:] + rr * (h @ r[d][2 * H:].T +
                                                rb[2 * H:])
                else:
                    cand = g[:, 2 * H:] + (rr * h) @ r[d][2 * H:].T + \
                        rb[2 * H:]
                h = (1 - z) * act(d, 1, cand) + z * h
            else:
                H = hid
                g = xt @ w[d].T + h @ r[d].T + wb + rb
                pi, po, pf = np.split(p[d].astype(np.float64), 3)
                i = act(d, 0, g[:, :H] + pi * c)
                f = act(d, 0, g[:, 2 * H:3 * H] + pf * c)
                c = f * c + i * act(d, 1, g[:, 3 * H:])
                o = act(d, 0, g[:, H:2 * H] + po * c)
                hf = ACTS[acts[d * na + 2]]
                h = o * hf(c, alphas[d * na + 2], betas[d * na + 2])
            y[t, d] = h
        yh[d] = h
        yc[d] = c
    return f32(y), f32(yh), f32(yc)


def recurrent_cases(root):
    for kind, gates, layout, dirs, acts, ab, extra in (
            # Bidirectional GRU, linear_before_reset, clip, initial_h.
            ("GRU", 3, 0, [False, True], ["Sigmoid", "Tanh"] * 2,
             [(0, 0)] * 4, dict(linear_before_reset=1, clip=1.5)),
            # Reverse LSTM, peepholes, initial states, Y_c, batch-first.
            ("LSTM", 4, 1, [True], ["Sigmoid", "Tanh", "Tanh"],
             [(0, 0)] * 3, {}),
            # Bidirectional RNN with other activations per direction.
            ("RNN", 1, 0, [False, True], ["Relu", "LeakyRelu"],
             [(0, 0), (0.3, 0)], {}),
            # GRU with HardSigmoid gates, reverse.
            ("GRU", 3, 0, [True], ["HardSigmoid", "Tanh"],
             [(0.3, 0.4), (0, 0)], {})):
        seq, batch, inp, hid = 4, 2, 3, 5
        nd = len(dirs)
        x = f32(rng.standard_normal([seq, batch, inp]))
        w = f32(rng.standard_normal([nd, gates * hid, inp]) * 0.5)
        r = f32(rng.standard_normal([nd, gates * hid, hid]) * 0.5)
        b = f32(rng.standard_normal([nd, 2 * gates * hid]) * 0.5)
        h0 = f32(rng.standard_normal([nd, batch, hid]))
        c0 = f32(rng.standard_normal([nd, batch, hid]))
        p = f32(rng.standard_normal([nd, 3 * hid]) * 0.5)
        y, yh, yc = recurrent(kind, x, w, r, b, h0, c0, p, acts,
                              [a for a, _ in ab], [bb for _, bb in ab],
                              dirs, extra.get("clip"),
                              extra.get("linear_before_reset", 0))
        ins = {"x": x, "w": w, "r": r, "b": b}
        names = ["x", "w", "r", "b", ""]
        outs = {"y": y, "yh": yh}
        if layout:
            ins["x"] = np.ascontiguousarray(np.swapaxes(x, 0, 1))
            outs = {"y": np.ascontiguousarray(y.transpose(2, 0, 1, 3)),
                    "yh": np.ascontiguousarray(yh.transpose(1, 0, 2))}
        ins["h0"] = h0 if not layout else \
            np.ascontiguousarray(h0.transpose(1, 0, 2))
        names.append("h0")
        if kind == "LSTM":
            ins["c0"] = c0 if not layout else \
                np.ascontiguousarray(c0.transpose(1, 0, 2))
            ins["p"] = p
            names += ["c0", "p"]
            outs["yc"] = yc if not layout else \
                np.ascontiguousarray(yc.transpose(1, 0, 2))
        direction = "bidirectional" if nd == 2 else \
            "reverse" if dirs[0] else "forward"
        attrs = dict(hidden_size=hid, direction=direction,
                     activations=acts, **extra)
        alphas = [a for (a, _), n in zip(ab, acts)
                  if n in ("LeakyRelu", "HardSigmoid")]
        betas = [bb for (_, bb), n in zip(ab, acts) if n == "HardSigmoid"]
        if alphas:
            attrs["activation_alpha"] = alphas
        if betas:
            attrs["activation_beta"] = betas
        if layout:
            attrs["layout"] = 1
        write(root, "misc_%s_%s_%s" % (kind.lower(), direction,
                                       "_".join(acts[:2]).lower()),
              helper.make_node(kind, names, list(outs), **attrs), ins,
              outs, opset=14)


def gs_reflect(x, lo, hi):
    rng_ = hi - lo
    if x < lo:
        d = lo - x
        k = int(d / rng_)
        r = d - k * rng_
        return lo + r if k % 2 == 0 else hi - r
    if x > hi:
        d = x - hi
        k = int(d / rng_)
        r = d - k * rng_
        return hi - r if k % 2 == 0 else lo + r
    return x


def grid_sample(x, grid, mode, pad, align):
    """GridSample as ONNX Runtime computes it, in float64."""
    n_, c_, h_, w_ = x.shape
    ho, wo = grid.shape[1:3]
    y = np.zeros([n_, c_, ho, wo])
    lo = [0.0, 0.0] if align else [-0.5, -0.5]
    hi = [w_ - 1.0, h_ - 1.0] if align else [w_ - 0.5, h_ - 0.5]

    def pixel(n, c, r, col):
        if pad == "zeros":
            if 0 <= r < h_ and 0 <= col < w_:
                return x[n, c, r, col]
            return 0.0
        if pad == "border":
            return x[n, c, min(max(r, 0), h_ - 1), min(max(col, 0), w_ - 1)]
        r = int(gs_reflect(float(r), lo[1], hi[1]))
        col = int(gs_reflect(float(col), lo[0], hi[0]))
        return x[n, c, r, col]
    for n, i, j in itertools.product(range(n_), range(ho), range(wo)):
        pos = []
        for k, ln in ((0, w_), (1, h_)):
            g = float(grid[n, i, j, k])
            v = (g + 1) / 2 * (ln - 1) if align else ((g + 1) * ln - 1) / 2
            if mode == "nearest":
                v = float(np.round(v))
            if v < lo[k] or v > hi[k]:
                if pad == "border":
                    v = min(max(v, 0.0), ln - 1.0)
                elif pad == "reflection":
                    v = gs_reflect(v, lo[k], hi[k])
            pos.append(v)
        px, py = pos
        for c in range(c_):
            if mode == "nearest":
                y[n, c, i, j] = pixel(n, c, int(py), int(px))
                continue
            x1, y1 = int(np.floor(px)), int(np.floor(py))
            dx1, dy1 = px - x1, py - y1
            y[n, c, i, j] = (1 - dy1) * ((1 - dx1) * pixel(n, c, y1, x1) +
                                         dx1 * pixel(n, c, y1, x1 + 1)) + \
                dy1 * ((1 - dx1) * pixel(n, c, y1 + 1, x1) +
                       dx1 * pixel(n, c, y1 + 1, x1 + 1))
    return f32(y)


def grid_sample_cases(root):
    # Positions well outside, several ranges away, for each padding.
    x = f32(rng.standard_normal([2, 2, 3, 4]))
    grid = f32(rng.uniform(-4, 4, [2, 3, 5, 2]))
    for mode, pad, align in (("bilinear", "reflection", 1),
                             ("bilinear", "reflection", 0),
                             ("nearest", "border", 0),
                             ("nearest", "reflection", 1),
                             ("bilinear", "zeros", 1)):
        write(root, "misc_gridsample_%s_%s_%d" % (mode, pad, align),
              helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode,
                               padding_mode=pad, align_corners=align),
              {"x": x, "g": grid},
              {"y": grid_sample(x, grid, mode, pad, align)}, opset=16)


def broadcast_cases(root):
    # Where and the variadic operators with the rank growing from one
    # input to the next (a causal mask [t, t] selecting among scores
    # [b, h, t, t], as PyTorch exports masked_fill).
    c = rng.standard_normal([3, 4]) > 0
    y = f32(rng.standard_normal([2, 2, 3, 4]))
    write(root, "misc_where_rank_grows", helper.make_node(
        "Where", ["c", "x", "y"], ["z"]),
        {"c": c, "x": f32(-np.inf * np.ones([])), "y": y},
        {"z": np.where(c, f32(-np.inf), y)})
    a, b, d = (f32(rng.standard_normal(sh)) for sh in ([4], [2, 1, 4],
                                                       [3, 1]))
    for op, f in (("Max", np.maximum), ("Sum", np.add),
                  ("Mean", lambda p, q: p + q)):
        want = f(f(a, b), d)
        if op == "Mean":
            want = want / 3
        write(root, "misc_%s_rank_grows" % op.lower(), helper.make_node(
            op, ["a", "b", "d"], ["z"]), {"a": a, "b": b, "d": d},
            {"z": f32(want)})


def if_cases(root):
    # If on whether dimension 1 is 1, as PyTorch exports squeeze(1) of a
    # dimension it does not know: the shapes fix the condition at import.
    # The branch reads x from around it and has an initializer of its
    # own; the branch not taken (squeezing a dimension of 2) is never
    # lowered.
    one = np.array(1, np.int64)
    for d in (1, 2):
        x = f32(rng.standard_normal([3, d, 4]))
        then = helper.make_graph(
            [helper.make_node("Squeeze", ["x", "axes"], ["sq"])],
            "then", [], [helper.make_tensor_value_info(
                "sq", TensorProto.FLOAT, None)],
            [numpy_helper.from_array(np.array([1], np.int64), "axes")])
        other = helper.make_graph(
            [helper.make_node("Identity", ["x"], ["same"])],
            "else", [], [helper.make_tensor_value_info(
                "same", TensorProto.FLOAT, None)])
        write(root, "misc_if_known_condition_%d" % d, [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "one"], ["d"], axis=0),
            helper.make_node("Equal", ["d", "one"], ["c"]),
            helper.make_node("If", ["c"], ["y"], then_branch=then,
                             else_branch=other),
            helper.make_node("Neg", ["y"], ["z"])],
            {"x": x}, {"z": -x.reshape(3, 4) if d == 1 else -x},
            inits={"one": one})


def main(root):
    loss_cases(root)
    scatter_cases(root)
    topk_cases(root)
    small_cases(root)
    recurrent_cases(root)
    grid_sample_cases(root)
    if_cases(root)
    broadcast_cases(root)


if __name__ == "__main__":
    main(sys.argv[1])
