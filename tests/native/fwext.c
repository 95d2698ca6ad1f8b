/* fwext: a C extension for framewalk's whole-stack tests.
 *
 * Python -> C -> Python -> C -> libc:
 *   fwext.call_twice(fn)  is ext_outer: calls the Python callable fn twice;
 *   fwext.spin(n)         is ext_inner: sorts n ints with qsort and a C
 *                         comparator (cmp_ints), `rounds` times.
 * The functions are noinline and externally visible so that every build
 * (-fomit-frame-pointer or not) keeps them as real frames with their names.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) int
cmp_ints(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* fwext.spin(n): fill an array with a pseudo-random sequence, qsort it. */
__attribute__((noinline)) PyObject *
ext_inner(PyObject *self, PyObject *arg)
{
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n <= 0 || n > 10 * 1000 * 1000) {
        PyErr_SetString(PyExc_ValueError, "n out of range");
        return NULL;
    }
    int *buf = malloc((size_t)n * sizeof *buf);
    if (!buf)
        return PyErr_NoMemory();
    unsigned int s = 12345;
    for (long i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        buf[i] = (int)(s >> 8);
    }
    qsort(buf, (size_t)n, sizeof *buf, cmp_ints);  /* @ext_qsort */
    /* Result first, free last: no tail call, ext_inner stays on the stack
     * until it returns. */
    PyObject *res = PyLong_FromLong(buf[n / 2]);
    free(buf);
    return res;
}

/* fwext.call_twice(fn): call fn twice, return None. Neither call is a tail
 * call, so ext_outer stays on the stack during both. Kept deliberately small:
 * built with -fomit-frame-pointer it saves only rbx and never touches rbp
 * (CFI says rbp is "same value"), like most thin wrappers in real extensions,
 * so an unwinder must carry the caller's rbp through it unchanged. */
__attribute__((noinline)) PyObject *
ext_outer(PyObject *self, PyObject *fn)
{
    PyObject *r = PyObject_CallNoArgs(fn);  /* @ext_call */
    if (!r)
        return NULL;
    Py_DECREF(r);
    r = PyObject_CallNoArgs(fn);  /* @ext_call */
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_NONE;
}

static PyMethodDef fwext_methods[] = {
    {"call_twice", ext_outer, METH_O, "call fn twice, return its second result"},
    {"spin", ext_inner, METH_O, "qsort n pseudo-random ints"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef fwext_module = {
    PyModuleDef_HEAD_INIT, "fwext", NULL, -1, fwext_methods,
};

PyMODINIT_FUNC
PyInit_fwext(void)
{
    return PyModule_Create(&fwext_module);
}
