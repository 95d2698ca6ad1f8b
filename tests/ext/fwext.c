/*
 * A small C extension for framewalk's `check` tests (tests/functional/
 * test_check.py builds it with and without -fno-omit-frame-pointer, at
 * several -O levels, stripped, and without unwind tables). Its functions are
 * real frames: not inlined, each calling out and keeping values live across
 * the call, so whether they keep a frame pointer follows the compiler flags.
 * -DFWEXT_NAME=NAME sets the module name, so several builds load side by side.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdio.h>
#include <string.h>

#ifndef FWEXT_NAME
#define FWEXT_NAME fwext
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(a) #a
#define STR(a) STR_(a)

#define NOINLINE __attribute__((noinline))

static volatile long sink;

static NOINLINE long stage_end(long x)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", x);
	sink = (long)strlen(buf);
	return x + sink;
}

/* Stage n: a call out, then the next stage, with a and b live across both. */
#define STAGE(n, next)                                          \
	static NOINLINE long stage##n(long x)                   \
	{                                                       \
		char buf[48];                                   \
		long a = x * (n + 3), b;                        \
		snprintf(buf, sizeof(buf), "%ld/%d", x, n);     \
		b = (long)strlen(buf) + a;                      \
		b += next(b ^ (n + 1));                         \
		sink = a - b;                                   \
		return a + b * 3;                               \
	}

STAGE(19, stage_end)
STAGE(18, stage19)
STAGE(17, stage18)
STAGE(16, stage17)
STAGE(15, stage16)
STAGE(14, stage15)
STAGE(13, stage14)
STAGE(12, stage13)
STAGE(11, stage12)
STAGE(10, stage11)
STAGE(9, stage10)
STAGE(8, stage9)
STAGE(7, stage8)
STAGE(6, stage7)
STAGE(5, stage6)
STAGE(4, stage5)
STAGE(3, stage4)
STAGE(2, stage3)
STAGE(1, stage2)
STAGE(0, stage1)

/* run(n): the whole chain, n times; returns a checksum. */
static PyObject *fwext_run(PyObject *self, PyObject *arg)
{
	long n = PyLong_AsLong(arg), sum = 0;

	(void)self;
	if (n == -1 && PyErr_Occurred())
		return NULL;
	for (long i = 0; i < n; i++)
		sum += stage0(i);
	return PyLong_FromLong(sum);
}

static PyMethodDef fwext_methods[] = {
	{ "run", fwext_run, METH_O, "run the chain of stages n times" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef fwext_module = {
	PyModuleDef_HEAD_INIT, STR(FWEXT_NAME), "framewalk check test extension", -1,
	fwext_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC CAT(PyInit_, FWEXT_NAME)(void)
{
	return PyModule_Create(&fwext_module);
}
