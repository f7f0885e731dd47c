# Models for the forms of operators that ONNX's backend tests leave out
# (attribute forms of older opsets, shape inputs given as initializers,
# corner cases), written as test folders like ONNX's with the expected
# outputs computed here with numpy.  Usage: forms.py DIR
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

out_dir = sys.argv[1]
rng = np.random.default_rng(0)


def case(name, opset, op, inputs, outputs, attrs=None, inits=None):
    """inputs, outputs: lists of (name, array); inits: name -> array."""
    inits = inits or {}
    names = [n for n, _ in inputs]
    node = helper.make_node(op, names + list(inits),
                            [n for n, _ in outputs], **(attrs or {}))
    def vi(n, a):
        return helper.make_tensor_value_info(
            n, helper.np_dtype_to_tensor_dtype(a.dtype)
            if hasattr(helper, 'np_dtype_to_tensor_dtype') else
            __import__('onnx').mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype],
            a.shape)
    graph = helper.make_graph(
        [node], name, [vi(n, a) for n, a in inputs],
        [vi(n, a) for n, a in outputs],
        [numpy_helper.from_array(a, n) for n, a in inits.items()])
    model = helper.make_model(graph, producer_name='forms',
                              opset_imports=[helper.make_opsetid('', opset)])
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, 'test_data_set_0'), exist_ok=True)
    save(model, os.path.join(d, 'model.onnx'))
    for k, (n, a) in enumerate(inputs):
        with open(os.path.join(d, 'test_data_set_0', 'input_%d.pb' % k),
                  'wb') as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    for k, (n, a) in enumerate(outputs):
        with open(os.path.join(d, 'test_data_set_0', 'output_%d.pb' % k),
                  'wb') as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())


x = rng.standard_normal((3, 4, 5)).astype(np.float32)

# Slice before opset 10: starts, ends, axes as attributes.
case('test_forms_slice_opset9', 9, 'Slice', [('x', x)], [('y', x[:, 1:-1, -3:])],
     dict(starts=[1, -3], ends=[-1, 1000], axes=[1, 2]))
# Slice with negative steps and ends past the start.
big = np.iinfo(np.int64)
case('test_forms_slice_neg_steps', 13, 'Slice', [('x', x)],
     [('y', x[::-2, 3:0:-1, :])],
     inits={'starts': np.array([-1, 3], np.int64),
            'ends': np.array([big.min, 0], np.int64),
            'axes': np.array([0, 1], np.int64),
            'steps': np.array([-2, -1], np.int64)})

# Pad before opset 11: pads and value as attributes; a negative pad crops.
case('test_forms_pad_opset10', 10, 'Pad', [('x', x)],
     [('y', np.pad(x[:, :, 1:], ((0, 0), (2, 1), (0, 2)),
                   constant_values=1.5))],
     dict(pads=[0, 2, -1, 0, 1, 2], value=1.5))
case('test_forms_pad_reflect', 13, 'Pad', [('x', x)],
     [('y', np.pad(x, ((1, 2), (3, 0), (0, 4)), mode='reflect'))],
     dict(mode='reflect'),
     inits={'pads': np.array([1, 3, 0, 2, 0, 4], np.int64)})
case('test_forms_pad_edge', 13, 'Pad', [('x', x)],
     [('y', np.pad(x, ((0, 0), (5, 1), (2, 6)), mode='edge'))],
     dict(mode='edge'),
     inits={'pads': np.array([0, 5, 2, 0, 1, 6], np.int64)})

# Split before opset 13: split as an attribute.
case('test_forms_split_opset11', 11, 'Split', [('x', x)],
     [('a', x[:, :, :1]), ('b', x[:, :, 1:5])], dict(axis=-1, split=[1, 4]))

# Gather of i32 indices, negative ones counting from the end.
ind = np.array([[-1, 0], [2, -3]], np.int32)
case('test_forms_gather_i32', 13, 'Gather', [('x', x), ('i', ind)],
     [('y', np.take(x, ind, axis=1))], dict(axis=1))

# Concat with an input of extent 0.
case('test_forms_concat_empty', 13, 'Concat',
     [('a', x), ('b', np.zeros((3, 0, 5), np.float32)), ('c', x[:, :2])],
     [('y', np.concatenate([x, x[:, :2]], axis=1))], dict(axis=1))

# Upsample: scales as an attribute (opset 7) and as an input (opset 9);
# asymmetric coordinates, nearest rounding down.
img = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
case('test_forms_upsample_opset7', 7, 'Upsample', [('x', img)],
     [('y', img.repeat(2, axis=2).repeat(3, axis=3))],
     dict(mode='nearest', scales=[1.0, 1.0, 2.0, 3.0]))


def linear_asym(a, axis, scale):
    n = a.shape[axis]
    m = int(np.floor(n * scale))
    xo = np.arange(m) / scale
    lo = np.floor(xo).astype(np.int64)
    w = (xo - lo).astype(np.float32)
    hi = np.minimum(lo + 1, n - 1)
    lo = np.minimum(lo, n - 1)
    shape = [1] * a.ndim
    shape[axis] = m
    w = w.reshape(shape)
    return np.take(a, lo, axis) * (1 - w) + np.take(a, hi, axis) * w


case('test_forms_upsample_linear_opset9', 9, 'Upsample', [('x', img)],
     [('y', linear_asym(linear_asym(img, 2, 2.0), 3, 2.5)
       .astype(np.float32))], dict(mode='linear'),
     inits={'scales': np.array([1, 1, 2, 2.5], np.float32)})
case('test_forms_resize_opset10', 10, 'Resize', [('x', img)],
     [('y', img.repeat(3, axis=2)[:, :, :, [0, 0, 1, 1, 2, 2, 3, 3]])],
     dict(mode='nearest'),
     inits={'scales': np.array([1, 1, 3, 2], np.float32)})

# ConstantFill (experimental, PyTorch's export of zero states at opsets 7
# and 8): the shape held by an input, or an input's own shape with
# extra_shape and another dtype.
case('test_forms_constantfill_as_shape_opset7', 7, 'ConstantFill', [],
     [('y', np.full((2, 3), 0.5, np.float32))],
     dict(input_as_shape=1, value=0.5),
     inits={'s': np.array([2, 3], np.int64)})
case('test_forms_constantfill_like_opset8', 8, 'ConstantFill', [('x', x)],
     [('y', np.full((3, 4, 5, 2), 3, np.int64))],
     dict(dtype=TensorProto.INT64, value=3.0, extra_shape=[2]))
