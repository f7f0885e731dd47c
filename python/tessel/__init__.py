"""Tessel from Python: declare a tensor program, schedule it, call it on
NumPy arrays.

Every operation is a call into libtessel (the installed library, by its
soname): parsing, ONNX import, static scheduling, records, tuning,
compilation through LLVM, the reference interpreter.  This package only
moves arrays in and out and turns the library's errors into
tessel.Error.

    import numpy as np, tessel
    prog = tessel.parse('''
    input A: f32[64, 64]
    input B: f32[64, 64]
    output C[i: 64, j: 64] = sum(k: 64) A[i, k] * B[k, j]
    ''')
    kernel = prog.compile()            # static schedule for this machine
    a = np.random.rand(64, 64).astype(np.float32)
    c = kernel(a, a)                   # a NumPy array

See doc/python.md for the whole API.
"""

import ctypes
import importlib.util
import json
import math
import os
import shutil
import sys
import tempfile
import warnings
from collections import namedtuple

import numpy as np

from . import _capi
from ._capi import lib

__all__ = ["Error", "Program", "Kernel", "Schedule", "Tuning", "TensorSpec",
           "parse", "load", "from_torch", "version", "target_json"]

# NumPy's dtype of each ts_dtype, in the enum's order (include/tessel/dsl.h);
# bf16 has none.
_DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float16,
           np.float32, np.float64, np.int16, np.uint16, np.uint32,
           np.uint64, None]
# The buffer-protocol codes of each, for the C call path.
_FORMATS = ["?", "b", "B", "i", "lq", "e", "f", "d", "h", "H", "I", "LQ", ""]


def _load_call_path():
    """The C call path (python/call.c), or None: from the package, or
    from the file TESSEL_CALL_MODULE names (the build tree's, for the
    tests)."""
    path = os.environ.get("TESSEL_CALL_MODULE")
    try:
        if not path:
            from . import _call
            return _call
        spec = importlib.util.spec_from_file_location("tessel._call", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    except ImportError:
        return None


_call = _load_call_path()


class Error(Exception):
    """Every failure of the library, with its message (file:line:col and
    a caret for a declaration), and every argument that does not fit."""


def version():
    """The version of the loaded libtessel (ts_version)."""
    return lib.ts_version().decode()


def _text(b):
    return b.decode() if b is not None else None


class _Context:
    """A ts_ctx, which also keeps alive the collector's objects this
    package holds (ts_ctx_keep), freed when nothing refers to it."""

    def __init__(self, seed=1):
        self.ptr = lib.ts_ctx_alloc()
        if not self.ptr:
            raise Error("out of memory")
        lib.ts_ctx_set_seed(self.ptr, seed)

    def keep(self, p):
        """Return "p" (a pointer of the collector), kept alive."""
        addr = ctypes.cast(p, ctypes.c_void_p).value
        if addr:
            lib.ts_ctx_keep(self.ptr, addr)
        return p

    def error(self, what=None):
        """The context's message as an Error (cleared); "what" when the
        library left none."""
        msg = _text(lib.ts_ctx_error(self.ptr))
        lib.ts_ctx_clear_error(self.ptr)
        return Error(msg or what or "tessel: unknown error")

    def check(self, p, what=None):
        """Return "p", kept, or raise the context's error when NULL."""
        if not p:
            raise self.error(what)
        self.warn()
        return self.keep(p)

    def status(self, st):
        if st < 0:
            raise self.error()
        self.warn()

    def warn(self):
        w = lib.ts_ctx_warnings(self.ptr)
        if w:
            for line in _text(w).splitlines():
                warnings.warn(line, stacklevel=3)
            lib.ts_ctx_clear_warnings(self.ptr)

    def __del__(self):
        if getattr(self, "ptr", None) and lib is not None:
            lib.ts_ctx_free(self.ptr)
            self.ptr = None


TensorSpec = namedtuple("TensorSpec", "name dtype shape")
TensorSpec.__doc__ = """An input or output of a program: its name, NumPy
dtype and shape, as declared."""


def _spec(t):
    """The TensorSpec of the ts_tensor "t"."""
    name, dtype = _text(lib.ts_tensor_name(t)), lib.ts_tensor_dtype(t)
    dt = _DTYPES[dtype]
    if dt is None:
        raise Error("tensor '%s' is %s, which NumPy has no dtype for"
                    % (name, _text(lib.ts_dtype_name(dtype))))
    return TensorSpec(name, np.dtype(dt),
                      tuple(lib.ts_tensor_dim(t, k)
                            for k in range(lib.ts_tensor_ndim(t))))


def _describe(spec):
    return "%s array of shape %s" % (spec.dtype, spec.shape)


def _to_array(ctx, spec, a):
    """A new ts_array holding a copy of the NumPy array "a" (for the
    interpreter)."""
    a = np.ascontiguousarray(a, dtype=spec.dtype)
    shape = (ctypes.c_int64 * max(1, len(spec.shape)))(*spec.shape)
    arr = ctx.check(lib.ts_array_alloc(ctx.ptr, _DTYPES.index(spec.dtype.type),
                                       len(spec.shape), shape))
    ctypes.memmove(arr.contents.data, a.ctypes.data, a.nbytes)
    return arr


def _from_array(arr):
    """A NumPy copy of the ts_array "arr"."""
    a = arr.contents
    dt = np.dtype(_DTYPES[a.dtype])
    shape = tuple(a.shape[k] for k in range(a.ndim))
    out = np.empty(shape, dt)
    ctypes.memmove(out.ctypes.data, a.data, out.nbytes)
    return out


def _target(ctx, target):
    """The ts_target "target" names: None or "host" (this machine), a
    shipped name (zen3) or a JSON file, as the command line's --target."""
    if target is None or target == "host":
        return ctx.check(lib.ts_target_host(ctx.ptr))
    if not isinstance(target, (str, os.PathLike)):
        raise Error("target: expected a name or a JSON file, got %r"
                    % (target,))
    return ctx.check(lib.ts_target_lookup(ctx.ptr, os.fsencode(target)))


def _cpu_target(ctx, target):
    """The CPU target "target" for code that runs here, checked."""
    tg = _target(ctx, target)
    kind = ctypes.cast(tg, ctypes.POINTER(ctypes.c_int))[0]
    if kind != 0:
        raise Error("target '%s' is a %s: Python runs kernels on this CPU"
                    % (target, _text(lib.ts_target_kind_name(kind))))
    why = ctypes.c_char_p()
    host = ctx.check(lib.ts_target_host(ctx.ptr))
    if target not in (None, "host") and not lib.ts_target_runs_on(
            tg, host, ctypes.byref(why)):
        raise Error("this machine cannot run the code of target '%s': %s"
                    % (target, _text(why.value)))
    return tg


def target_json(target=None):
    """The hardware description "target" names (None: this machine; a
    shipped name such as "zen3"; a JSON file) as a dict, as tessel hw
    --json prints it."""
    ctx = _Context()
    return json.loads(_text(lib.ts_target_to_json(_target(ctx, target))))


class Schedule:
    """A schedule of a program: steps per stage, as data.  str() prints
    the steps; .json is the text tessel run --schedule FILE reads; .hash
    the schedule's hash, as tessel run --json and the records say."""

    def __init__(self, program, ptr):
        self.program = program
        self._ptr = ptr

    @property
    def json(self):
        """The schedule as JSON text (ts_schedule_to_json)."""
        return _text(lib.ts_schedule_to_json(self._ptr))

    @property
    def hash(self):
        """The schedule's hash (ts_schedule_hash)."""
        return _text(lib.ts_schedule_hash(self._ptr))

    def __str__(self):
        return _text(lib.ts_schedule_to_string(self._ptr))

    def compile(self, threads=0):
        """Compile the program under this schedule: a Kernel."""
        return self.program._compile(self, None, threads)


class Program:
    """A declared program: a .tsl text or file, or an ONNX model.

    .inputs and .outputs list TensorSpec (name, dtype, shape); an ONNX
    model's weights are not inputs: they are bound to every kernel
    compiled from it.  Calling a Program compiles it once with the static
    schedule for this machine and calls that kernel.
    """

    def __init__(self, dag, ctx, model=None, name=None):
        self._ctx = ctx
        self._dag = dag
        self._model = model
        self.name = name or _text(lib.ts_dag_name(dag)) or "program"
        nin = lib.ts_dag_ninputs(dag)
        self._args = [_spec(lib.ts_dag_input(dag, i)) for i in range(nin)]
        self._weights = {}
        for i in range(nin):
            t = lib.ts_dag_input(dag, i)
            if model and lib.ts_tensor_is_weight(t):
                w = lib.ts_onnx_find_weight(model, lib.ts_tensor_name(t))
                if w:
                    self._weights[i] = ctx.keep(w)
        self.inputs = [s for i, s in enumerate(self._args)
                       if i not in self._weights]
        self.outputs = [_spec(lib.ts_dag_output(dag, i))
                        for i in range(lib.ts_dag_noutputs(dag))]
        self._default = None

    @property
    def source(self):
        """The program's .tsl text where the library has it (an ONNX
        model's, as imported), else None."""
        return _text(lib.ts_onnx_source(self._model)) if self._model \
            else None

    @property
    def hash(self):
        """The workload's hash, as records key it (ts_dag_hash)."""
        return _text(lib.ts_dag_hash(self._dag))

    def _dag_inputs(self, arrays):
        """The ts_array of every input of the DAG: "arrays" for the
        inputs, the model's for its weights."""
        given = iter(arrays)
        ptrs = (ctypes.POINTER(_capi.Array) * (len(self._args) + 1))()
        for i, spec in enumerate(self._args):
            ptrs[i] = self._weights[i] if i in self._weights else \
                _to_array(self._ctx, spec, next(given))
        return ptrs

    def eval(self, *inputs):
        """Run the reference interpreter (ts_eval) on the NumPy arrays
        "inputs" (converted as needed): one array per output, a tuple
        when there are several."""
        _check_count(self.name, self.inputs, inputs)
        ins = self._dag_inputs(inputs)
        outs = (ctypes.POINTER(_capi.Array) * (len(self.outputs) + 1))()
        self._ctx.status(lib.ts_eval(self._ctx.ptr, self._dag, ins, outs))
        res = tuple(_from_array(outs[j]) for j in range(len(self.outputs)))
        return res[0] if len(res) == 1 else res

    def random_inputs(self, seed=1):
        """The inputs tessel run --seed SEED uses: a list of NumPy arrays,
        values suited to how each input is used."""
        if self._model:
            arr = lib.ts_onnx_inputs(self._ctx.ptr, self._model, seed)
        else:
            arr = lib.ts_dag_random_inputs(self._ctx.ptr, self._dag, seed)
        self._ctx.check(arr)
        return [_from_array(arr[i]) for i in range(len(self._args))
                if i not in self._weights]

    def schedule(self, target=None, threads=0, seed=1, records=None,
                 schedule="static"):
        """A Schedule: the static schedule (tessel run --schedule static)
        for "target" (None: this machine; a shipped name; a JSON file)
        with "threads" threads (0: all cores) and "seed"; "naive"; a JSON
        file; or, with "records", the best record of that log when it
        beats the static schedule timed alongside it here."""
        ctx = self._ctx
        lib.ts_ctx_set_seed(ctx.ptr, seed)
        if records is not None:
            why = ctypes.c_char_p()
            p = ctx.check(lib.ts_records_choose(
                ctx.ptr, self._dag, os.fsencode(records), threads,
                ctypes.byref(why)))
            self.records_choice = _text(why.value)
        elif schedule == "naive":
            p = ctx.check(lib.ts_schedule_naive(ctx.ptr, self._dag))
        elif schedule == "static":
            tg = _target(ctx, target)
            p = ctx.check(lib.ts_static_baseline(ctx.ptr, self._dag, tg,
                                                 threads))
        else:
            try:
                with open(schedule) as f:
                    text = f.read()
            except OSError as e:
                raise Error("cannot read '%s': %s" % (schedule, e.strerror))
            p = ctx.check(lib.ts_schedule_from_json(ctx.ptr, self._dag,
                                                    text.encode()))
        return Schedule(self, p)

    def compile(self, schedule="static", target=None, threads=0, seed=1,
                records=None):
        """Compile for this machine: a Kernel.  "schedule" is "static"
        (the default), "naive", a JSON file or a Schedule; "target",
        "threads", "seed" and "records" mean what tessel run's --target,
        --threads, --seed and --records mean (a target must be one this
        machine can run the code of)."""
        tg = _cpu_target(self._ctx, target) if target is not None else None
        if not isinstance(schedule, Schedule):
            schedule = self.schedule(target, threads, seed, records, schedule)
        return self._compile(schedule, tg, threads)

    def _func(self, schedule):
        return self._ctx.check(lib.ts_lower(self._ctx.ptr, self._dag,
                                            schedule._ptr))

    def _compile(self, schedule, tg, threads):
        f = self._func(schedule)
        opt = lib.ts_compile_options_for(tg)
        opt.threads = threads
        opt.unaligned_args = True
        m = lib.ts_module_compile(self._ctx.ptr, f, ctypes.byref(opt))
        if not m:
            raise self._ctx.error()
        return Kernel(self, schedule, f, m)

    def build(self, out, schedule="static", target=None, threads=0, seed=1,
              records=None):
        """Compile ahead of time into the folder "out" as tessel build
        does: OUT/<name>.o, OUT/<name>.h and, for this machine's
        architecture, OUT/lib<name>.so.  "target" (a shipped name or JSON
        file) says what to schedule and generate code for; the other
        arguments are compile()'s.  Return the list of files written."""
        ctx = self._ctx
        if not isinstance(schedule, Schedule):
            schedule = self.schedule(target, threads, seed, records, schedule)
        tg = _target(ctx, target) if target is not None else None
        opt = lib.ts_compile_options_for(None)
        if tg is not None:
            opt = lib.ts_compile_options_for(tg)
            opt.triple = ctypes.cast(tg, ctypes.POINTER(_TargetHead)
                                     ).contents.triple
        opt.threads = threads
        os.makedirs(out, exist_ok=True)
        f = self._func(schedule)
        ctx.status(lib.ts_build_aot(ctx.ptr, f, os.fsencode(out),
                                    ctypes.byref(opt)))
        sym = _text(lib.ts_func_symbol(f))
        files = [os.path.join(out, sym + ext) for ext in (".h", ".o")]
        so = os.path.join(out, "lib%s.so" % sym)
        return files + ([so] if os.path.exists(so) else [])

    def tune(self, trials=200, log=None, threads=1, seed=1, target="host",
             topk=None, batch=16, verify=4, quiet=False):
        """Tune by measurement as tessel tune does, with the same options
        and defaults: "trials" measurements, "topk" (measure only the
        static model's k best), "batch", "verify", "seed", "threads" (of
        the kernels), the records "log" (resumed from, appended to; the
        tuning curve is written next to it as LOG.csv and LOG.svg).  A
        progress bar goes to standard error unless "quiet".  Return a
        Tuning, whose compile() gives the kernel of the best schedule."""
        ctx = self._ctx
        tg = _cpu_target(ctx, target)
        opts = ctx.check(lib.ts_tune_options_new(ctx.ptr, tg))
        settings = {"trials": trials, "topk": topk, "batch": batch,
                    "verify": verify, "seed": seed, "threads": threads,
                    "log": os.fspath(log) if log is not None else None}
        for name, value in settings.items():
            if value is not None:
                ctx.status(lib.ts_tune_options_set(
                    ctx.ptr, opts, name.encode(), str(value).encode()))
        lib.ts_ctx_set_seed(ctx.ptr, seed)
        tuner = lib.ts_tuner_new(ctx.ptr, self._dag, tg, opts)
        if not tuner:
            raise ctx.error()
        try:
            cb = _capi.PROGRESS_FN(0) if quiet else \
                _capi.PROGRESS_FN(_progress_bar)
            st = lib.ts_tuner_run(tuner, cb, None)
            if not quiet:
                sys.stderr.write("\n")
            if st < 0:
                raise ctx.error()
            result = Tuning(self, tuner, threads)
        finally:
            lib.ts_tuner_free(tuner)
        if log is not None:
            base = os.path.splitext(os.fspath(log))[0]
            result.write_curve(base + ".svg", base + ".csv")
        return result

    def __call__(self, *inputs):
        """Compile once with the static schedule for this machine, then
        call that kernel on "inputs"."""
        if self._default is None:
            self._default = self.compile()
        return self._default(*inputs)

    def __repr__(self):
        return "<tessel.Program %s: %s -> %s>" % (
            self.name, ", ".join("%s %s%s" % (s.name, s.dtype, list(s.shape))
                                 for s in self.inputs),
            ", ".join(s.name for s in self.outputs))


class _TargetHead(ctypes.Structure):
    """The head of struct ts_target up to the CPU's triple
    (include/tessel/target.h): kind, name, description, then the CPU."""
    _fields_ = [("kind", ctypes.c_int), ("name", ctypes.c_char_p),
                ("description", ctypes.c_char_p),
                ("triple", ctypes.c_char_p)]


def _progress_bar(p, data):
    """Draw the tuner's progress "p" on standard error, as tessel tune."""
    p = p.contents
    width = 30
    fill = width * p.trials // p.total if p.total else width
    line = "\r%s [%s%s] %d/%d" % (_text(p.task), "#" * fill,
                                  "." * (width - fill), p.trials, p.total)
    if math.isfinite(p.best_s):
        line += "  best %.4f ms" % (p.best_s * 1e3)
    line += "  %.1f trials/s  %d errors  " % (p.trials_per_s, p.errors)
    sys.stderr.write(line)
    sys.stderr.flush()


class Tuning:
    """What tuning found: .schedule (the best, never slower than the
    static choice), .best_s and .static_s (seconds, measured again side
    by side), .kept_static, .trials, .resumed, .curve (best time after
    each trial)."""

    def __init__(self, program, tuner, threads):
        self.program = program
        self.threads = threads
        ctx = program._ctx
        best = lib.ts_tuner_best_schedule(tuner)
        self.schedule = Schedule(program, ctx.keep(best)) if best else None
        self.static_schedule = Schedule(
            program, ctx.keep(lib.ts_tuner_static_schedule(tuner)))
        self.best_s = lib.ts_tuner_best_time(tuner)
        self.static_s = lib.ts_tuner_static_time(tuner)
        self.kept_static = bool(lib.ts_tuner_kept_static(tuner, None))
        self.trials = lib.ts_tuner_trials(tuner)
        self.resumed = lib.ts_tuner_resumed(tuner)
        hist = ctypes.POINTER(ctypes.c_double)()
        n = lib.ts_tuner_history(tuner, ctypes.byref(hist))
        self.curve = [hist[i] for i in range(n)]

    def write_curve(self, svg, csv=None):
        """Write the tuning curve as an SVG picture (and CSV), as tessel
        tune --log does next to its log."""
        ctx = self.program._ctx
        n = len(self.curve)
        best = (ctypes.c_double * max(1, n))(*self.curve)
        if csv is not None:
            ctx.status(lib.ts_tune_curve_write_csv(ctx.ptr, os.fsencode(csv),
                                                   n, best))
        ctx.status(lib.ts_tune_curve_write_svg(
            ctx.ptr, os.fsencode(svg), self.program.name.encode(), n, best))
        self.svg = svg

    def compile(self, threads=None):
        """The kernel of the best schedule (the static one when none was
        found), with the threads it was tuned for."""
        sch = self.schedule or self.static_schedule
        return sch.compile(self.threads if threads is None else threads)

    def __repr__(self):
        return "<tessel.Tuning %s: best %.4g ms, static %.4g ms, %d trials>" \
            % (self.program.name, self.best_s * 1e3, self.static_s * 1e3,
               self.trials)


def _check_count(name, specs, args):
    if len(args) != len(specs):
        raise Error("%s takes %d input%s (%s), %d given" % (
            name, len(specs), "" if len(specs) == 1 else "s",
            ", ".join(s.name for s in specs), len(args)))


def _check_arg(kernel, spec, a):
    """Raise the Error that says why "a" does not fit the input "spec"."""
    where = "argument '%s' of %s" % (spec.name, kernel)
    want = "expected a C-contiguous %s" % _describe(spec)
    if not isinstance(a, np.ndarray):
        raise Error("%s: %s, given %s" % (where, want, type(a).__name__))
    if a.dtype != spec.dtype:
        raise Error("%s: %s, given dtype %s (convert with .astype(%s))"
                    % (where, want, a.dtype, spec.dtype))
    if a.shape != spec.shape:
        raise Error("%s: %s, given shape %s" % (where, want, a.shape))
    if not a.flags.c_contiguous:
        raise Error("%s: %s, given a non-contiguous array (strides %s; "
                    "numpy.ascontiguousarray copies it)"
                    % (where, want, a.strides))
    if a.ctypes.data % a.itemsize:
        raise Error("%s: %s, given data not aligned to its %d-byte "
                    "elements" % (where, want, a.itemsize))


class Kernel:
    """A compiled program.  Call it with one NumPy array per input (the
    declared dtype and shape, C order: passed without copying); it
    returns a new array per output (a tuple when there are several).
    Anything else raises tessel.Error naming the argument, what was
    expected and what was given."""

    def __init__(self, program, schedule, func, module):
        self.program = program
        self.schedule = schedule
        self.name = _text(lib.ts_func_symbol(func))
        self._module = module
        p = program
        n = len(p._args) + len(p.outputs)
        self._template = [0] * n
        for i, w in p._weights.items():
            self._template[i] = w.contents.data
        self._in_pos = tuple(i for i in range(len(p._args))
                             if i not in p._weights)
        self._out_pos = tuple(range(len(p._args), n))
        checks = tuple((_FORMATS[_DTYPES.index(s.dtype.type)],
                        s.dtype.itemsize, s.shape) for s in p.inputs)
        specs = tuple((s.shape, s.dtype) for s in p.outputs)
        self._plan = (_capi.MODULE_CALL, module, tuple(self._template),
                      self._in_pos, checks, self._out_pos, specs, np.empty)
        self._single = len(p.outputs) == 1

    @property
    def inputs(self):
        """The TensorSpec of each input."""
        return self.program.inputs

    @property
    def outputs(self):
        """The TensorSpec of each output."""
        return self.program.outputs

    def _pointers(self, args):
        """The data pointers of every argument, "args" checked, and the
        new outputs."""
        p = self.program
        _check_count(self.name, p.inputs, args)
        for spec, a in zip(p.inputs, args):
            if not (isinstance(a, np.ndarray) and a.dtype == spec.dtype and
                    a.shape == spec.shape and a.flags.c_contiguous and
                    a.ctypes.data % a.itemsize == 0):
                _check_arg(self.name, spec, a)
        outs = tuple(np.empty(s.shape, s.dtype) for s in p.outputs)
        ptrs = (ctypes.c_void_p * len(self._template))(*self._template)
        for i, a in zip(self._in_pos, args):
            ptrs[i] = a.ctypes.data
        for i, a in zip(self._out_pos, outs):
            ptrs[i] = a.ctypes.data
        return ptrs, outs

    def __call__(self, *args):
        if _call is not None:
            outs = _call.call(self._plan, args)
            if outs is not None:
                return outs[0] if self._single else outs
        ptrs, outs = self._pointers(args)
        lib.ts_module_call(self._module, ptrs)
        return outs[0] if self._single else outs

    def time(self, *args, min_time=0.2):
        """Time the kernel on "args" from C (ts_module_time, as tessel run
        does): the median of repeated calls after a warm-up, in seconds,
        with no Python in the loop."""
        ptrs, outs = self._pointers(args)
        ctx = self.program._ctx
        specs = self.program._args + self.program.outputs
        arrs = (ctypes.POINTER(_capi.Array) * (len(specs) + 1))()
        for i, s in enumerate(specs):
            shape = (ctypes.c_int64 * max(1, len(s.shape)))(*s.shape)
            a = ctx.check(lib.ts_array_alloc(
                ctx.ptr, _DTYPES.index(s.dtype.type), len(s.shape), shape))
            a.contents.data = ptrs[i]    # the caller's data, not a copy
            arrs[i] = a
        t = _capi.Timing()
        ctx.status(lib.ts_module_time(self._module, arrs, min_time,
                                      ctypes.byref(t)))
        return t.median_s

    def __del__(self):
        m = getattr(self, "_module", None)
        if m and lib is not None and self.program._ctx.ptr:
            lib.ts_module_free(m)
            self._module = None

    def __repr__(self):
        return "<tessel.Kernel %s, schedule %s>" % (self.name,
                                                    self.schedule.hash)


def parse(text, name=None, seed=1):
    """A Program from .tsl text; "name" names it in messages (default
    "<string>")."""
    ctx = _Context(seed)
    dag = ctx.check(lib.ts_parse_string(
        ctx.ptr, name.encode() if name else None, text.encode()))
    return Program(dag, ctx, name=name)


def load(path, shape=None, seed=1):
    """A Program from a .tsl file or an .onnx model.  For a model,
    "shape" fixes symbolic dimensions as tessel's --shape does: a dict
    {"batch": 1} or {"x": (1, 3, 224, 224)}, or a list of "NAME=DIMS"
    strings."""
    ctx = _Context(seed)
    path = os.fspath(path)
    if not path.endswith(".onnx"):
        return Program(ctx.check(lib.ts_parse_file(ctx.ptr,
                                                   os.fsencode(path))), ctx)
    if not lib.ts_onnx_available():
        raise Error("%s: this libtessel was built without ONNX import "
                    "(install protobuf-c and libonnx-dev, then configure)"
                    % path)
    shapes = _shape_settings(shape)
    opt = _capi.OnnxOptions()
    arr = (ctypes.c_char_p * max(1, len(shapes)))(*[s.encode()
                                                    for s in shapes])
    opt.nshapes = len(shapes)
    opt.shapes = arr
    model = ctx.check(lib.ts_onnx_import(ctx.ptr, os.fsencode(path),
                                         ctypes.byref(opt)))
    dag = ctx.check(lib.ts_onnx_dag(model))
    return Program(dag, ctx, model)


def _shape_settings(shape):
    if shape is None:
        return []
    if isinstance(shape, dict):
        return ["%s=%s" % (k, "x".join(str(d) for d in v)
                           if isinstance(v, (tuple, list)) else v)
                for k, v in shape.items()]
    return list(shape)


class TorchProgram(Program):
    """A PyTorch module imported through ONNX (from_torch).  Calling it
    takes NumPy arrays or CPU tensors and returns NumPy arrays; compile,
    tune and build work as on any Program."""

    def __call__(self, *inputs):
        return super().__call__(*(_numpy(x) for x in inputs))

    def eval(self, *inputs):
        return super().eval(*(_numpy(x) for x in inputs))


def _numpy(x):
    """"x" as a NumPy array: a tensor's own memory when it is on the CPU."""
    if hasattr(x, "detach") and hasattr(x, "numpy"):
        return x.detach().cpu().numpy()
    return x


def from_torch(module, example_inputs, opset=None, shape=None, seed=1):
    """Export the PyTorch "module" with torch.onnx.export on
    "example_inputs" (a tensor or a tuple), import the model and return a
    callable Program (TorchProgram) whose outputs match the module's.
    The export runs as the module is (not under torch.no_grad, where some
    layers take fast paths that have no export); "opset" is the ONNX
    opset (None: PyTorch's default)."""
    import torch
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    tmp = tempfile.mkdtemp(prefix="tessel-torch-")
    try:
        path = os.path.join(tmp, type(module).__name__ + ".onnx")
        kw = {} if opset is None else {"opset_version": opset}
        with torch.enable_grad():
            torch.onnx.export(
                module, example_inputs, path,
                input_names=["input%d" % i
                             for i in range(len(example_inputs))],
                **kw)
        prog = load(path, shape=shape, seed=seed)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    prog.__class__ = TorchProgram
    prog.name = type(module).__name__
    return prog
