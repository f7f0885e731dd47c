/* tessel._call: the one hot path of the Python package in C.  Calling a
 * compiled kernel from Python costs what it takes to find each array's
 * data pointer and check it; done with ctypes that is a few microseconds
 * per array (NumPy's __array_interface__ and .ctypes build dictionaries
 * and objects), done here through the buffer protocol it is a few tens of
 * nanoseconds.  Nothing else is here: the kernel itself is run by the
 * library's ts_module_call, whose address the package passes in, so this
 * module links nothing but Python.
 *
 * call(plan, args) takes the plan a Kernel prepares once:
 *   (fn, module, template, in_pos, in_checks, out_pos, out_specs, empty)
 * fn and module are the addresses of ts_module_call and the ts_module;
 * template holds one pointer per kernel argument (the weights' filled
 * in, 0 elsewhere); in_pos and out_pos the argument positions of the
 * inputs given and of the outputs; in_checks, per input, (formats,
 * itemsize, shape) with formats the buffer-protocol codes accepted;
 * out_specs, per output, the arguments of empty (shape, dtype).  It
 * returns the tuple of outputs, or None when an argument does not fit:
 * the package then says which and why, in Python, where the message is
 * easier to write well. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

enum { MAX_ARGS = 64 };

typedef void (*module_call_fn)(void *module, void *const *ptrs);

/* Whether the buffer "v" fits the check (formats, itemsize, shape) "chk". */
static int fits(const Py_buffer *v, PyObject *chk)
{
	PyObject *formats = PyTuple_GET_ITEM(chk, 0);
	PyObject *shape = PyTuple_GET_ITEM(chk, 2);
	Py_ssize_t itemsize = PyLong_AsSsize_t(PyTuple_GET_ITEM(chk, 1));
	const char *fmt = v->format ? v->format : "B";
	Py_ssize_t n = PyTuple_GET_SIZE(shape);

	if (*fmt == '=' || *fmt == '@' || *fmt == '<')
		fmt++;
	if (v->itemsize != itemsize || !fmt[0] || fmt[1] ||
	    !strchr(PyUnicode_AsUTF8(formats), fmt[0]) || v->ndim != n)
		return 0;
	for (Py_ssize_t k = 0; k < n; k++)
		if (v->shape[k] != PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, k)))
			return 0;
	return (uintptr_t)v->buf % (uintptr_t)itemsize == 0;
}

/* Release the "n" buffers "views". */
static void release(Py_buffer *views, int n)
{
	for (int i = 0; i < n; i++)
		PyBuffer_Release(&views[i]);
}

/* Fill "ptrs" with the data of the outputs of "plan", made in "outs". */
static int make_outputs(PyObject *plan, void **ptrs, PyObject *outs)
{
	PyObject *pos = PyTuple_GET_ITEM(plan, 5);
	PyObject *specs = PyTuple_GET_ITEM(plan, 6);
	PyObject *empty = PyTuple_GET_ITEM(plan, 7);
	Py_buffer v;

	for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(pos); j++) {
		PyObject *a = PyObject_Call(empty, PyTuple_GET_ITEM(specs, j),
			NULL);
		if (!a)
			return -1;
		PyTuple_SET_ITEM(outs, j, a);
		if (PyObject_GetBuffer(a, &v, PyBUF_WRITABLE |
		    PyBUF_C_CONTIGUOUS) < 0)
			return -1;
		ptrs[PyLong_AsSsize_t(PyTuple_GET_ITEM(pos, j))] = v.buf;
		PyBuffer_Release(&v);	/* "outs" keeps the array alive */
	}
	return 0;
}

/* call(plan, args): run the kernel of "plan" on the tuple "args". */
static PyObject *call(PyObject *self, PyObject *const *argv, Py_ssize_t argc)
{
	PyObject *plan, *args, *template, *pos, *checks, *outs;
	Py_buffer views[MAX_ARGS];
	void *ptrs[MAX_ARGS];
	Py_ssize_t nargs, nin;
	module_call_fn fn;
	void *module;
	int got = 0;

	if (argc != 2 || !PyTuple_Check(argv[0]) || !PyTuple_Check(argv[1])) {
		PyErr_SetString(PyExc_TypeError, "call(plan, args)");
		return NULL;
	}
	plan = argv[0];
	args = argv[1];
	template = PyTuple_GET_ITEM(plan, 2);
	pos = PyTuple_GET_ITEM(plan, 3);
	checks = PyTuple_GET_ITEM(plan, 4);
	nargs = PyTuple_GET_SIZE(template);
	nin = PyTuple_GET_SIZE(pos);
	if (nargs > MAX_ARGS || PyTuple_GET_SIZE(args) != nin)
		Py_RETURN_NONE;
	for (Py_ssize_t i = 0; i < nargs; i++)
		ptrs[i] = PyLong_AsVoidPtr(PyTuple_GET_ITEM(template, i));
	for (; got < nin; got++) {
		if (PyObject_GetBuffer(PyTuple_GET_ITEM(args, got),
		    &views[got], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
			PyErr_Clear();
			break;
		}
		if (!fits(&views[got], PyTuple_GET_ITEM(checks, got))) {
			PyBuffer_Release(&views[got]);
			break;
		}
		ptrs[PyLong_AsSsize_t(PyTuple_GET_ITEM(pos, got))] =
			views[got].buf;
	}
	if (got < nin) {
		release(views, got);
		Py_RETURN_NONE;
	}
	outs = PyTuple_New(PyTuple_GET_SIZE(PyTuple_GET_ITEM(plan, 5)));
	if (!outs || make_outputs(plan, ptrs, outs) < 0) {
		release(views, got);
		Py_XDECREF(outs);
		return NULL;
	}
	fn = (module_call_fn)PyLong_AsVoidPtr(PyTuple_GET_ITEM(plan, 0));
	module = PyLong_AsVoidPtr(PyTuple_GET_ITEM(plan, 1));
	Py_BEGIN_ALLOW_THREADS
	fn(module, ptrs);
	Py_END_ALLOW_THREADS
	release(views, got);
	return outs;
}

static PyMethodDef methods[] = {
	{ "call", (PyCFunction)(void (*)(void))call, METH_FASTCALL,
	  "call(plan, args): run a kernel's plan on args; None when an "
	  "argument does not fit" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT, "_call",
	"The call path of tessel.Kernel, checked through the buffer protocol.",
	-1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__call(void);

PyMODINIT_FUNC PyInit__call(void)
{
	return PyModule_Create(&module_def);
}
