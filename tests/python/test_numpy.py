"""The tessel package on NumPy arrays: every example compiled and checked
against the reference interpreter, arrays passed without copying, bad
arguments refused with their message, library errors as tessel.Error,
records and tuning."""

import glob
import os
import tempfile
import unittest

import numpy as np

import tessel

SRC = os.environ.get("TS_SRCDIR", os.path.join(os.path.dirname(__file__),
                                               "..", ".."))
MATMUL = """
input A: f32[16, 16]
input B: f32[16, 16]
output C[i: 16, j: 16] = sum(k: 16) A[i, k] * B[k, j]
"""


def assert_matches(test, got, want, what):
    """"got" equals the interpreter's "want": exactly for integers,
    within float rounding of a reordered sum otherwise."""
    test.assertEqual(got.dtype, want.dtype, what)
    test.assertEqual(got.shape, want.shape, what)
    if np.issubdtype(want.dtype, np.floating):
        scale = max(1.0, float(np.max(np.abs(want.astype(np.float64)))))
        np.testing.assert_allclose(got.astype(np.float64),
                                   want.astype(np.float64), rtol=1e-3,
                                   atol=1e-4 * scale, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


class Examples(unittest.TestCase):
    def test_every_example__compiled_matches_interpreter(self):
        files = sorted(glob.glob(os.path.join(SRC, "examples", "*.tsl")))
        self.assertGreater(len(files), 10)
        for path in files:
            with self.subTest(example=os.path.basename(path)):
                prog = tessel.load(path)
                ins = prog.random_inputs(seed=1)
                want = prog.eval(*ins)
                got = prog.compile()(*ins)
                if len(prog.outputs) == 1:
                    got, want = (got,), (want,)
                for spec, g, w in zip(prog.outputs, got, want):
                    assert_matches(self, g, w, "%s: %s" % (path, spec.name))


class Calls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.prog = tessel.parse(MATMUL, name="mm.tsl")
        cls.kernel = cls.prog.compile()
        rng = np.random.default_rng(1)
        cls.a = rng.standard_normal((16, 16)).astype(np.float32)
        cls.b = rng.standard_normal((16, 16)).astype(np.float32)

    def test_call__matches_numpy_and_interpreter(self):
        c = self.kernel(self.a, self.b)
        self.assertIsInstance(c, np.ndarray)
        np.testing.assert_allclose(c, self.a @ self.b, rtol=1e-5, atol=1e-5)
        assert_matches(self, c, self.prog.eval(self.a, self.b), "C")

    def test_specs__name_dtype_shape(self):
        self.assertEqual(self.prog.inputs[0],
                         tessel.TensorSpec("A", np.dtype(np.float32),
                                           (16, 16)))
        self.assertEqual([s.name for s in self.prog.outputs], ["C"])

    def test_unaligned_array__used_in_place(self):
        # A view 4 bytes into a buffer: aligned to its elements only.
        buf = np.zeros(16 * 16 + 1, np.float32)
        a = buf[1:].reshape(16, 16)
        a[...] = self.a
        self.assertNotEqual(a.ctypes.data % 64, 0)
        np.testing.assert_allclose(self.kernel(a, self.b),
                                   self.a @ self.b, rtol=1e-5, atol=1e-5)

    def test_input_is_not_copied(self):
        # The kernel reads the caller's memory: a change between calls is
        # seen, with no conversion in between.
        a = self.a.copy()
        c1 = self.kernel(a, self.b)
        a[0, 0] += 1
        c2 = self.kernel(a, self.b)
        np.testing.assert_allclose(c2[0] - c1[0], self.b[0], rtol=1e-5)

    def test_python_path__same_as_c_path(self):
        ptrs, outs = self.kernel._pointers((self.a, self.b))
        tessel.lib.ts_module_call(self.kernel._module, ptrs)
        np.testing.assert_array_equal(outs[0], self.kernel(self.a, self.b))

    def check_error(self, args, *parts):
        with self.assertRaises(tessel.Error) as cm:
            self.kernel(*args)
        for p in parts:
            self.assertIn(p, str(cm.exception))

    def test_wrong_dtype__error_names_argument(self):
        self.check_error((self.a.astype(np.float64), self.b),
                         "argument 'A'", "expected a C-contiguous float32 "
                         "array of shape (16, 16)", "given dtype float64")

    def test_wrong_shape__error_names_argument(self):
        self.check_error((self.a, self.b[:8]), "argument 'B'",
                         "given shape (8, 16)")

    def test_non_contiguous__error_names_argument(self):
        self.check_error((self.a.T, self.b), "argument 'A'",
                         "non-contiguous array (strides (4, 64)")

    def test_not_an_array__error(self):
        self.check_error(([[1.0]], self.b), "argument 'A'", "given list")

    def test_wrong_count__error(self):
        self.check_error((self.a,), "takes 2 inputs (A, B), 1 given")

    def test_unknown_target__error(self):
        with self.assertRaises(tessel.Error) as cm:
            self.prog.compile(target="pdp11")
        self.assertIn("no target description named 'pdp11'",
                      str(cm.exception))

    def test_gpu_target__error(self):
        with self.assertRaises(tessel.Error) as cm:
            self.prog.compile(target="h100")
        self.assertIn("target 'h100' is a gpu", str(cm.exception))

    def test_bad_source__located_error(self):
        with self.assertRaises(tessel.Error) as cm:
            tessel.parse("input A: f32[4]\noutput B[i: 4] = A[i] + X[i]\n",
                         name="bad.tsl")
        self.assertIn("bad.tsl:2:25: error: unknown tensor 'X'",
                      str(cm.exception))
        self.assertIn("^", str(cm.exception))

    def test_missing_file__error(self):
        with self.assertRaises(tessel.Error) as cm:
            tessel.load("/nonexistent/x.tsl")
        self.assertIn("/nonexistent/x.tsl", str(cm.exception))

    def test_schedules__static_naive_target_json(self):
        st = self.prog.schedule(seed=1)
        self.assertEqual(st.hash, self.prog.schedule(seed=1).hash)
        for k in (self.prog.compile(schedule="naive"),
                  self.prog.compile(schedule=st),
                  tessel.parse(MATMUL).compile(target="host", threads=1)):
            np.testing.assert_allclose(k(self.a, self.b), self.a @ self.b,
                                       rtol=1e-5, atol=1e-5)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.json")
            with open(path, "w") as f:
                f.write(st.json)
            self.assertEqual(self.prog.schedule(schedule=path).hash, st.hash)
        zen3 = self.prog.schedule(target="zen3")
        self.assertTrue(zen3.hash)

    def test_kernel_time__from_c(self):
        t = self.kernel.time(self.a, self.b, min_time=0.01)
        self.assertGreater(t, 0)
        self.assertLess(t, 0.1)

    def test_build__library_and_header(self):
        with tempfile.TemporaryDirectory() as d:
            files = self.prog.build(d)
            self.assertTrue(any(f.endswith(".h") for f in files))
            for f in files:
                self.assertTrue(os.path.exists(f), f)


class Tuning(unittest.TestCase):
    def test_tune__records_curve_and_kernel(self):
        prog = tessel.parse(MATMUL, name="mm.tsl")
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "mm.jsonl")
            t = prog.tune(trials=8, batch=4, log=log, quiet=True)
            self.assertGreater(t.trials, 0)
            self.assertLessEqual(t.best_s, t.static_s)
            self.assertTrue(os.path.exists(os.path.join(d, "mm.svg")))
            self.assertTrue(os.path.exists(log))
            a = np.ones((16, 16), np.float32)
            np.testing.assert_allclose(t.compile()(a, a), a @ a)
            k = prog.compile(records=log)
            np.testing.assert_allclose(k(a, a), a @ a)
            self.assertIn("static schedule", prog.records_choice)

    def test_tune_options__bad_value_error(self):
        prog = tessel.parse(MATMUL)
        with self.assertRaises(tessel.Error) as cm:
            prog.tune(trials=0, quiet=True)
        self.assertIn("tuning option trials: bad value '0'",
                      str(cm.exception))


if __name__ == "__main__":
    unittest.main()
