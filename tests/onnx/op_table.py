#!/usr/bin/python3
"""The per-operator table of ONNX's backend node tests for doc/onnx.md.

Runs tests/onnx/conformance with --table on the node tests, reads each
test folder's model with python3-onnx to find its operator, and prints a
markdown table per operator (passed, wrong, errors, unsupported and the
reasons), then the figure the importer is held to: the single-node tests
(not _expanded) of the operators Tessel lowers, and their _expanded
variants.

    tests/onnx/op_table.py BUILDDIR [DATA] > table.md
"""
import collections
import os
import subprocess
import sys
import tempfile

import onnx

# The operators the importer is held to (ONNX's names).
HELD = """Add Sub Mul Div Pow Mod Max Min Sum Mean Neg Abs Reciprocal Sqrt Exp
Log Floor Ceil Round Sign Equal Less Greater LessOrEqual GreaterOrEqual And Or
Xor Not Relu LeakyRelu Elu Selu Sigmoid HardSigmoid Tanh Gelu Erf Softplus
Clip Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh MatMul Gemm Conv
ConvTranspose MaxPool AveragePool LpPool GlobalAveragePool GlobalMaxPool
GlobalLpPool BatchNormalization LayerNormalization InstanceNormalization
Softmax LogSoftmax ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd
ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceSumSquare ArgMax ArgMin
Transpose Reshape Flatten Squeeze Unsqueeze Concat Split Slice Gather Pad
Expand Tile Where Cast Resize DepthToSpace SpaceToDepth Einsum QuantizeLinear
DequantizeLinear QLinearConv QLinearMatMul MatMulInteger ConvInteger Shape
""".split()


def main():
    build = sys.argv[1]
    data = sys.argv[2] if len(sys.argv) > 2 else \
        "/usr/share/libonnx-testdata/data/node"
    with tempfile.NamedTemporaryFile(suffix=".md") as f:
        subprocess.run([os.path.join(build, "tests/onnx/conformance"),
                        "--quiet", "--table", f.name, data],
                       stdout=subprocess.DEVNULL, check=False)
        rows = [line.split(" | ") for line in open(f.name)
                if line.startswith("| test_")]
    result = {}
    for r in rows:
        name, verdict, why = r[0][2:], r[1], r[2].rstrip(" |\n")
        result[name] = (verdict, why)
    by_op = collections.defaultdict(list)
    for name, (verdict, why) in sorted(result.items()):
        try:
            m = onnx.load(os.path.join(data, name, "model.onnx"))
            ops = sorted({n.op_type for n in m.graph.node})
        except Exception:
            ops = ["?"]
        op = ops[0] if len(ops) == 1 else "(several: %s)" % ", ".join(ops)
        expanded = "_expanded" in name
        by_op[op if not expanded else op + " (expanded)"].append(
            (name, verdict, why, expanded, ops))
    held = collections.Counter()
    for name, (verdict, why) in result.items():
        pass
    print("| operator | tests | passed | wrong | errors | unsupported: why |")
    print("|---|---|---|---|---|---|")
    for op in sorted(by_op):
        tests = by_op[op]
        c = collections.Counter(t[1] for t in tests)
        whys = sorted({t[2] for t in tests if t[1] == "unsupported"})
        why = "; ".join(w[:110] for w in whys[:2]) + \
            (" (and %d more)" % (len(whys) - 2) if len(whys) > 2 else "")
        print("| %s | %d | %d | %d | %d | %d%s |" % (
            op, len(tests), c["passed"], c["wrong"], c["error"],
            c["unsupported"], ": " + why if why else ""))
    single = [(n, v) for n, (v, w) in result.items()
              if "_expanded" not in n and
              len(by_op_ops(data, n)) == 1 and by_op_ops(data, n)[0] in HELD]
    expanded = [(n, v) for n, (v, w) in result.items()
                if "_expanded" in n and
                os.path.isdir(os.path.join(data, n.replace("_expanded", "")))
                and by_op_ops(data, n.replace("_expanded", "")) and
                by_op_ops(data, n.replace("_expanded", ""))[0] in HELD]
    for label, group in (("single-node tests of the operators above",
                          single),
                         ("their _expanded variants", expanded)):
        c = collections.Counter(v for n, v in group)
        print("\n%s: %d of %d passed (%.1f%%), %d wrong, %d errors, %d "
              "unsupported" % (label.capitalize(), c["passed"], len(group),
                               100.0 * c["passed"] / max(len(group), 1),
                               c["wrong"], c["error"], c["unsupported"]))
    total = collections.Counter(v for v, w in result.values())
    print("\nAll %d node tests: %d passed, %d wrong, %d errors, %d "
          "unsupported." % (len(result), total["passed"], total["wrong"],
                            total["error"], total["unsupported"]))


_ops = {}


def by_op_ops(data, name):
    if name not in _ops:
        try:
            m = onnx.load(os.path.join(data, name, "model.onnx"))
            _ops[name] = sorted({n.op_type for n in m.graph.node})
        except Exception:
            _ops[name] = []
    return _ops[name]


if __name__ == "__main__":
    main()
