// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime._steptime: `with steptime.step():` in C, for its cost (a ctypes
 * call is ~1 us; a training loop pays two per step). It calls libsteptime
 * through the function pointers steptime/__init__.py hands it (_bind(),
 * from its ctypes handles): one library in the process whichever copy
 * ctypes loaded ($STEPTIME_LIB, the package's, the system's), no link-time
 * dependency, and a test's stand-in (a ctypes callback) reaches this path
 * as it reaches the ctypes one. What is rare (a given stream, an index, a
 * failed mark, torch_npu's stream) goes back to Python, so both paths
 * share that code and behave alike.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <errno.h>
#include <string.h>
#include <steptime/steptime.h>

static struct {
	__typeof__(&steptime_step__new) step_new;
	__typeof__(&steptime_step__mark) step_mark;
	__typeof__(&steptime_step__index_id) step_index;
	__typeof__(&steptime_step__free) step_free;
	__typeof__(&steptime__mark) mark;
	/* Python: the sentinels and the slow paths of steptime/__init__.py */
	PyObject *current, *host, *current_stream, *stream_addr, *check_index,
		 *mark_failed, *globals, *warned, *torch_npu;
} st;

typedef struct {
	PyObject_HEAD
	struct steptime_step *p;	/* NULL: index given, or closed */
	unsigned long long index_id;
	void *stream;			/* NULL: a host mark */
	int strict;
	PyObject *errors;		/* a list, made at the first failure */
} StepObject;

static PyObject *errors_list(StepObject *s)
{
	if (!s->errors)
		s->errors = PyList_New(0);
	return s->errors;
}

/* 0 or a negative errno, as Step.mark(); -1 with an exception set. */
static int do_mark(StepObject *s, unsigned int tag, void *stream, int *err)
{
	struct steptime_mark_opts o = { .sz = sizeof(o), .stream = stream };
	PyObject *e, *r;

	if (s->p)
		*err = st.step_mark(s->p, tag, stream ? &o : NULL);
	else
		*err = st.mark(s->index_id, tag, stream ? &o : NULL);
	if (!*err)
		return 0;
	if (!errors_list(s))
		return -1;
	e = PyLong_FromLong(*err);
	if (!e || PyList_Append(s->errors, e)) {
		Py_XDECREF(e);
		return -1;
	}
	Py_DECREF(e);
	/* steptime._warned: said already, nothing more to do in Python */
	if (PyDict_GetItemWithError(st.globals, st.warned) == Py_True)
		return 0;
	if (PyErr_Occurred())
		return -1;
	r = PyObject_CallFunction(st.mark_failed, "KIi", s->index_id, tag, *err);
	Py_XDECREF(r);
	return r ? 0 : -1;
}

/* A stream object to the address the mark orders on (Python's rules). */
static int stream_addr(PyObject *stream, void **out)
{
	PyObject *a;

	*out = NULL;
	if (stream == Py_None || stream == st.host)
		return 0;
	if (stream == st.current) {
		/* torch_npu imported: its current stream; else a host mark */
		PyObject *mods = PyImport_GetModuleDict();
		PyObject *tn = PyDict_GetItemWithError(mods, st.torch_npu);

		if (!tn)
			return PyErr_Occurred() ? -1 : 0;
		stream = PyObject_CallNoArgs(st.current_stream);
	} else {
		Py_INCREF(stream);
	}
	if (!stream)
		return -1;
	a = PyObject_CallOneArg(st.stream_addr, stream);
	Py_DECREF(stream);
	if (!a)
		return -1;
	if (a != Py_None)
		*out = PyLong_AsVoidPtr(a);
	Py_DECREF(a);
	return PyErr_Occurred() ? -1 : 0;
}

static int step_setup(StepObject *s, PyObject *stream, PyObject *index)
{
	if (!st.step_new) {
		PyErr_SetString(PyExc_RuntimeError, "steptime._steptime: not bound");
		return -1;
	}
	if (stream_addr(stream, &s->stream))
		return -1;
	if (index && index != Py_None) {
		PyObject *i = PyObject_CallOneArg(st.check_index, index);

		if (!i)
			return -1;
		s->index_id = PyLong_AsUnsignedLongLong(i);
		Py_DECREF(i);
		return PyErr_Occurred() ? -1 : 0;
	}
	errno = 0;
	s->p = st.step_new();
	if (!s->p) {
		errno = errno ? errno : ENOMEM;
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	s->index_id = st.step_index(s->p);
	return 0;
}

static PyObject *Step_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "stream", "strict", "index", NULL };
	PyObject *stream = st.current, *index = NULL;
	StepObject *s;
	int strict = 0;

	if ((PyTuple_GET_SIZE(args) || kw) &&
	    !PyArg_ParseTupleAndKeywords(args, kw, "|OpO:step", kwlist,
					 &stream, &strict, &index))
		return NULL;
	s = (StepObject *)type->tp_alloc(type, 0);
	if (!s)
		return NULL;
	s->strict = strict;
	if (step_setup(s, stream, index)) {
		Py_DECREF(s);
		return NULL;
	}
	return (PyObject *)s;
}

static void Step_close_p(StepObject *s)
{
	if (s->p) {
		st.step_free(s->p);
		s->p = NULL;
	}
}

static void Step_dealloc(StepObject *s)
{
	Step_close_p(s);
	Py_CLEAR(s->errors);
	Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyObject *strict_raise(int err)
{
	errno = -err;
	return PyErr_SetFromErrno(PyExc_OSError);
}

static PyObject *Step_enter(StepObject *s, PyObject *unused)
{
	int err;

	if (do_mark(s, STEPTIME_TAG_START, s->stream, &err))
		return NULL;
	if (err && s->strict) {
		Step_close_p(s);
		return strict_raise(err);
	}
	Py_INCREF(s);
	return (PyObject *)s;
}

/* END only when the body did not raise (as the generator it replaces). */
static PyObject *Step_exit(StepObject *s, PyObject *const *args,
			   Py_ssize_t nargs)
{
	int err = 0, r = 0;

	if (!nargs || args[0] == Py_None)
		r = do_mark(s, STEPTIME_TAG_END, s->stream, &err);
	Step_close_p(s);
	if (r)
		return NULL;
	if (err && s->strict)
		return strict_raise(err);
	Py_RETURN_FALSE;
}

static PyObject *Step_mark(StepObject *s, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "tag", "stream", NULL };
	PyObject *stream = Py_None;
	unsigned int tag;
	void *addr;
	int err;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "I|O:mark", kwlist, &tag,
					 &stream) ||
	    stream_addr(stream, &addr) || do_mark(s, tag, addr, &err))
		return NULL;
	return PyLong_FromLong(err);
}

static PyObject *Step_close(StepObject *s, PyObject *unused)
{
	Step_close_p(s);
	Py_RETURN_NONE;
}

static PyObject *Step_errors(StepObject *s, void *closure)
{
	PyObject *l = errors_list(s);

	Py_XINCREF(l);
	return l;
}

static PyMethodDef Step_methods[] = {
	{ "__enter__", (PyCFunction)Step_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)(void (*)(void))Step_exit, METH_FASTCALL,
	  NULL },
	{ "mark", (PyCFunction)(void (*)(void))Step_mark,
	  METH_VARARGS | METH_KEYWORDS,
	  "mark(tag, stream=None): 0 or a negative errno, as Step.mark()" },
	{ "close", (PyCFunction)Step_close, METH_NOARGS, NULL },
	{ NULL }
};

static PyMemberDef Step_members[] = {
	{ "index_id", T_ULONGLONG, offsetof(StepObject, index_id), READONLY,
	  NULL },
	{ NULL }
};

static PyGetSetDef Step_getset[] = {
	{ "errors", (getter)Step_errors, NULL, "the marks' errors", NULL },
	{ NULL }
};

static PyTypeObject StepType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "steptime._steptime.step",
	.tp_basicsize = sizeof(StepObject),
	.tp_dealloc = (destructor)Step_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "step(stream=<torch_npu's current>, strict=False, index=None):"
		  " steptime.step() in C (see its documentation)",
	.tp_methods = Step_methods,
	.tp_members = Step_members,
	.tp_getset = Step_getset,
	.tp_new = Step_new,
};

static void *addr_of(PyObject *o)
{
	return PyLong_AsVoidPtr(o);
}

/* _bind(step_new, step_mark, step_index, step_free, mark: addresses,
 *	 CURRENT, HOST, current_stream, stream_addr, check_index, mark_failed,
 *	 the module's globals) */
static PyObject *bind(PyObject *self, PyObject *args)
{
	PyObject *a[5], *py[7];
	int i;

	if (!PyArg_ParseTuple(args, "OOOOOOOOOOOO!:_bind", &a[0], &a[1], &a[2],
			      &a[3], &a[4], &py[0], &py[1], &py[2], &py[3],
			      &py[4], &py[5], &PyDict_Type, &py[6]))
		return NULL;
	for (i = 0; i < 5; i++)
		if (!addr_of(a[i]))
			return PyErr_Occurred() ? NULL :
			       PyErr_Format(PyExc_ValueError, "_bind: NULL");
	st.step_new = (__typeof__(st.step_new))addr_of(a[0]);
	st.step_mark = (__typeof__(st.step_mark))addr_of(a[1]);
	st.step_index = (__typeof__(st.step_index))addr_of(a[2]);
	st.step_free = (__typeof__(st.step_free))addr_of(a[3]);
	st.mark = (__typeof__(st.mark))addr_of(a[4]);
	for (i = 0; i < 7; i++)
		Py_INCREF(py[i]);
	Py_XSETREF(st.current, py[0]);
	Py_XSETREF(st.host, py[1]);
	Py_XSETREF(st.current_stream, py[2]);
	Py_XSETREF(st.stream_addr, py[3]);
	Py_XSETREF(st.check_index, py[4]);
	Py_XSETREF(st.mark_failed, py[5]);
	Py_XSETREF(st.globals, py[6]);
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
	{ "_bind", bind, METH_VARARGS, NULL },
	{ NULL }
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "_steptime",
	.m_doc = "steptime.step() in C over libsteptime (steptime/__init__.py binds it)",
	.m_size = -1,
	.m_methods = methods,
};

PyMODINIT_FUNC PyInit__steptime(void);
PyMODINIT_FUNC PyInit__steptime(void)
{
	PyObject *m;

	st.torch_npu = PyUnicode_InternFromString("torch_npu");
	st.warned = PyUnicode_InternFromString("_warned");
	if (!st.torch_npu || !st.warned || PyType_Ready(&StepType))
		return NULL;
	m = PyModule_Create(&module);
	if (!m)
		return NULL;
	Py_INCREF(&StepType);
	if (PyModule_AddObject(m, "step", (PyObject *)&StepType)) {
		Py_DECREF(&StepType);
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
