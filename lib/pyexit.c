// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * In a Python process, flush from the interpreter's atexit handlers.
 *
 * The device times of stream-marked steps are read back from timeline
 * events, which exist only as long as their stream and runtime. libsteptime
 * flushes at exit(), but Python runs its own atexit handlers first, and a
 * framework's among them: torch_npu registers _npu_shutdown() at import,
 * which destroys the streams and finalizes ACL, and with them the last
 * step's events. So the library registers a flush with the interpreter at
 * its first stream mark with events, whatever made the mark: steptime's
 * Python module, or torch_npu's profiler (mstx ranges on
 * libms_tools_ext.so), which never imports it. atexit runs the handlers
 * last registered first, and a stream exists only once the framework has
 * started: this handler runs before the framework's shutdown.
 *
 * Nothing here links against Python: every name is looked up in the
 * process, and a process without an initialized interpreter is left alone.
 * The registration runs as a pending call, in the main thread with the GIL
 * held: a mark may come from any thread (torch_npu's task queue), holding
 * nothing Python knows about, so taking the GIL there could deadlock.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <steptime/steptime.h>
#include "st_internal.h"

#define PY_METH_NOARGS	0x0004	/* Include/methodobject.h, stable ABI */

/* PyMethodDef, as in the stable ABI. */
struct py_method_def {
	const char *name;
	void *(*meth)(void *self, void *unused);
	int flags;
	const char *doc;
};

static struct {
	int (*is_initialized)(void);
	int (*add_pending_call)(int (*fn)(void *), void *arg);
	void *(*import_module)(const char *name);
	void *(*cfunction_new)(struct py_method_def *def, void *self,
			       void *module);
	void *(*call_method)(void *obj, const char *name, const char *fmt,
			     ...);
	void (*incref)(void *obj);
	void (*decref)(void *obj);
	void (*err_clear)(void);
	void *none;
} py;

/* What the handler calls: the caller's flush (steptime__flush()). */
static int (*exit_flush)(void);

static void *py_exit_flush(void *self, void *unused)
{
	int (*flush)(void) = __atomic_load_n(&exit_flush, __ATOMIC_ACQUIRE);

	if (flush)
		flush();
	py.incref(py.none);
	return py.none;
}

static struct py_method_def exit_flush_def = {
	.name = "steptime_exit_flush",
	.meth = py_exit_flush,
	.flags = PY_METH_NOARGS,
	.doc = "libsteptime: flush before the framework's shutdown",
};

/*
 * In the main thread, with the GIL: atexit.register(flush). A failure is
 * not the application's: its exception is cleared, not raised into
 * whatever bytecode the interpreter runs next.
 */
static int py_register(void *arg)
{
	void *atexit_mod, *fn = NULL, *ret = NULL;

	atexit_mod = py.import_module("atexit");
	if (atexit_mod)
		fn = py.cfunction_new(&exit_flush_def, NULL, NULL);
	if (fn)
		ret = py.call_method(atexit_mod, "register", "O", fn);
	if (ret)
		py.decref(ret);
	else
		py.err_clear();
	if (fn)
		py.decref(fn);
	if (atexit_mod)
		py.decref(atexit_mod);
	return 0;
}

static void py_lookup(void)
{
	py.is_initialized = dlsym(RTLD_DEFAULT, "Py_IsInitialized");
	py.add_pending_call = dlsym(RTLD_DEFAULT, "Py_AddPendingCall");
	py.import_module = dlsym(RTLD_DEFAULT, "PyImport_ImportModule");
	py.cfunction_new = dlsym(RTLD_DEFAULT, "PyCFunction_NewEx");
	py.call_method = dlsym(RTLD_DEFAULT, "PyObject_CallMethod");
	py.incref = dlsym(RTLD_DEFAULT, "Py_IncRef");
	py.decref = dlsym(RTLD_DEFAULT, "Py_DecRef");
	py.err_clear = dlsym(RTLD_DEFAULT, "PyErr_Clear");
	py.none = dlsym(RTLD_DEFAULT, "_Py_NoneStruct");
	if (!py.is_initialized || !py.add_pending_call || !py.import_module ||
	    !py.cfunction_new || !py.call_method || !py.incref ||
	    !py.decref || !py.err_clear || !py.none || !py.is_initialized())
		return;
	py.add_pending_call(py_register, NULL);
}

void st_py_exit_flush(int (*flush)(void))
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	__atomic_store_n(&exit_flush, flush, __ATOMIC_RELEASE);
	pthread_once(&once, py_lookup);
}
