/*
 * The demo's C extension (demo/app.py's "records" thread): the kind of
 * hand-written fast path a service grows. Built by scripts/demo.sh with
 * -fomit-frame-pointer, as many extensions on PyPI are, so framewalk has to
 * walk through it by its DWARF unwind tables to reach the Python caller;
 * pack() calls into zlib, itself without frame pointers on Debian.
 *
 *   fastpath.score(data) -> int      a rolling checksum, pure C
 *   fastpath.pack(data) -> bytes     score, then compress2 at level 6
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <zlib.h>

static __attribute__((noinline)) unsigned long mix_block(const unsigned char *p, Py_ssize_t n, unsigned long h)
{
	for (Py_ssize_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ul + (h >> 7);
	return h;
}

static __attribute__((noinline)) unsigned long score_bytes(const unsigned char *p, Py_ssize_t n)
{
	unsigned long h = 14695981039346656037ul;

	for (int round = 0; round < 4; round++)
		h = mix_block(p, n, h + (unsigned long)round);
	return h;
}

static PyObject *fastpath_score(PyObject *self, PyObject *arg)
{
	Py_buffer view;
	unsigned long h;

	(void)self;
	if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
		return NULL;
	h = score_bytes(view.buf, view.len);
	PyBuffer_Release(&view);
	return PyLong_FromUnsignedLong(h);
}

static PyObject *compress_block(const unsigned char *p, Py_ssize_t n)
{
	uLongf out_len = compressBound((uLong)n);
	PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)out_len);

	if (!out)
		return NULL;
	if (compress2((Bytef *)PyBytes_AS_STRING(out), &out_len, p, (uLong)n, 6) != Z_OK) {
		Py_DECREF(out);
		PyErr_SetString(PyExc_RuntimeError, "compress2 failed");
		return NULL;
	}
	if (_PyBytes_Resize(&out, (Py_ssize_t)out_len) < 0)
		return NULL;
	return out;
}

static PyObject *fastpath_pack(PyObject *self, PyObject *arg)
{
	Py_buffer view;
	PyObject *out;

	(void)self;
	if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
		return NULL;
	(void)score_bytes(view.buf, view.len);
	out = compress_block(view.buf, view.len);
	PyBuffer_Release(&view);
	return out;
}

static PyMethodDef fastpath_methods[] = {
	{ "score", fastpath_score, METH_O, "A rolling checksum of a bytes-like object." },
	{ "pack", fastpath_pack, METH_O, "Score, then zlib-compress a bytes-like object." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef fastpath_module = {
	PyModuleDef_HEAD_INIT, "fastpath", "framewalk demo extension", -1, fastpath_methods,
	NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_fastpath(void)
{
	return PyModule_Create(&fastpath_module);
}
