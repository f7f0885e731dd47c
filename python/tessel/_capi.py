"""The C API of libtessel as ctypes sees it.

The library is loaded by its soname, libtessel.so.0, as the dynamic
linker finds it (the installed one), or from the path in the environment
variable TESSEL_LIBRARY (the build tree's .libs/libtessel.so.0, for the
tests).  Structures are mirrored only where the API hands them out by
pointer and documents their fields (ts_array, ts_compile_options,
ts_onnx_options, ts_tune_progress); DAGs and tensors are opaque handles
read through their accessors.
"""

import ctypes
import os
from ctypes import (POINTER, Structure, c_bool, c_char_p, c_double, c_int,
                    c_int64, c_uint64, c_void_p)

SONAME = "libtessel.so.0"
MAX_DIMS = 8


class Array(Structure):
    """struct ts_array (include/tessel/dsl.h)."""
    _fields_ = [("dtype", c_int), ("ndim", c_int),
                ("shape", c_int64 * MAX_DIMS), ("size", c_int64),
                ("data", c_void_p)]


class CompileOptions(Structure):
    """struct ts_compile_options (include/tessel/backend.h)."""
    _fields_ = [("opt_level", c_int), ("contract", c_bool),
                ("fast_math", c_bool), ("triple", c_char_p),
                ("cpu", c_char_p), ("features", c_char_p),
                ("vector_width", c_int), ("threads", c_int),
                ("unaligned_args", c_bool)]


class OnnxOptions(Structure):
    """struct ts_onnx_options (include/tessel/onnx.h)."""
    _fields_ = [("nshapes", c_int), ("shapes", POINTER(c_char_p)),
                ("nknown", c_int), ("known_names", POINTER(c_char_p)),
                ("known_values", POINTER(POINTER(Array)))]


class TuneProgress(Structure):
    """struct ts_tune_progress (include/tessel/tune.h)."""
    _fields_ = [("task", c_char_p), ("trials", c_int), ("total", c_int),
                ("resumed", c_int), ("best_s", c_double),
                ("elapsed_s", c_double), ("trials_per_s", c_double),
                ("errors", c_int)]


class Timing(Structure):
    """struct ts_timing (include/tessel/backend.h)."""
    _fields_ = [("median_s", c_double), ("min_s", c_double),
                ("max_s", c_double), ("mean_s", c_double),
                ("nsamples", c_int), ("samples", POINTER(c_double))]


PROGRESS_FN = ctypes.CFUNCTYPE(None, POINTER(TuneProgress), c_void_p)
P = c_void_p
S = c_char_p

# name: (result, argument types), as declared in include/tessel/*.h.
_SIGNATURES = {
    "ts_version": (S, []),
    "ts_ctx_alloc": (P, []),
    "ts_ctx_free": (None, [P]),
    "ts_ctx_error": (S, [P]),
    "ts_ctx_clear_error": (None, [P]),
    "ts_ctx_warnings": (S, [P]),
    "ts_ctx_clear_warnings": (None, [P]),
    "ts_ctx_keep": (c_int, [P, P]),
    "ts_ctx_set_seed": (None, [P, c_uint64]),
    "ts_dtype_name": (S, [c_int]),
    "ts_parse_string": (P, [P, S, S]),
    "ts_parse_file": (P, [P, S]),
    "ts_dag_name": (S, [P]),
    "ts_dag_ninputs": (c_int, [P]),
    "ts_dag_input": (P, [P, c_int]),
    "ts_dag_noutputs": (c_int, [P]),
    "ts_dag_output": (P, [P, c_int]),
    "ts_tensor_name": (S, [P]),
    "ts_tensor_dtype": (c_int, [P]),
    "ts_tensor_ndim": (c_int, [P]),
    "ts_tensor_dim": (c_int64, [P, c_int]),
    "ts_tensor_is_weight": (c_bool, [P]),
    "ts_dag_hash": (S, [P]),
    "ts_dag_random_inputs": (POINTER(POINTER(Array)), [P, P, c_uint64]),
    "ts_dag_check_memory": (c_int, [P, P]),
    "ts_array_alloc": (POINTER(Array), [P, c_int, c_int, POINTER(c_int64)]),
    "ts_eval": (c_int, [P, P, P, P]),
    "ts_onnx_available": (c_bool, []),
    "ts_onnx_import": (P, [P, S, POINTER(OnnxOptions)]),
    "ts_onnx_dag": (P, [P]),
    "ts_onnx_source": (S, [P]),
    "ts_onnx_find_weight": (POINTER(Array), [P, S]),
    "ts_onnx_inputs": (POINTER(POINTER(Array)), [P, P, c_uint64]),
    "ts_onnx_ninputs": (c_int, [P]),
    "ts_onnx_noutputs": (c_int, [P]),
    "ts_onnx_input_name": (S, [P, c_int, c_bool]),
    "ts_onnx_output_name": (S, [P, c_int, c_bool]),
    "ts_target_host": (P, [P]),
    "ts_target_lookup": (P, [P, S]),
    "ts_target_to_json": (S, [P]),
    "ts_target_runs_on": (c_bool, [P, P, POINTER(S)]),
    "ts_target_kind_name": (S, [c_int]),
    "ts_schedule_naive": (P, [P, P]),
    "ts_static_baseline": (P, [P, P, P, c_int]),
    "ts_schedule_from_json": (P, [P, P, S]),
    "ts_schedule_to_json": (S, [P]),
    "ts_schedule_to_string": (S, [P]),
    "ts_schedule_hash": (S, [P]),
    "ts_records_choose": (P, [P, P, S, c_int, POINTER(S)]),
    "ts_lower": (P, [P, P, P]),
    "ts_func_symbol": (S, [P]),
    "ts_compile_options_for": (CompileOptions, [P]),
    "ts_module_compile": (P, [P, P, POINTER(CompileOptions)]),
    "ts_module_free": (None, [P]),
    "ts_module_time": (c_int, [P, P, c_double, POINTER(Timing)]),
    "ts_build_aot": (c_int, [P, P, S, POINTER(CompileOptions)]),
    "ts_tune_options_new": (P, [P, P]),
    "ts_tune_options_set": (c_int, [P, P, S, S]),
    "ts_tuner_new": (P, [P, P, P, P]),
    "ts_tuner_run": (c_int, [P, PROGRESS_FN, P]),
    "ts_tuner_free": (None, [P]),
    "ts_tuner_best_schedule": (P, [P]),
    "ts_tuner_best_time": (c_double, [P]),
    "ts_tuner_static_time": (c_double, [P]),
    "ts_tuner_static_schedule": (P, [P]),
    "ts_tuner_kept_static": (c_bool, [P, POINTER(c_double)]),
    "ts_tuner_history": (c_int, [P, POINTER(POINTER(c_double))]),
    "ts_tuner_trials": (c_int, [P]),
    "ts_tuner_resumed": (c_int, [P]),
    "ts_tune_curve_write_csv": (c_int, [P, S, c_int, POINTER(c_double)]),
    "ts_tune_curve_write_svg": (c_int, [P, S, S, c_int, POINTER(c_double)]),
}


def _load():
    """The library with the signatures above declared."""
    lib = ctypes.CDLL(os.environ.get("TESSEL_LIBRARY") or SONAME)
    for name, (res, args) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


lib = _load()
# The address of ts_module_call, for the C call path.
MODULE_CALL = ctypes.cast(lib.ts_module_call, c_void_p).value
lib.ts_module_call.restype = None
lib.ts_module_call.argtypes = [P, POINTER(c_void_p)]
