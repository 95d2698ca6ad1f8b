# Cython for tests/functional/test_names.py: a def function, a method of a
# class and the cdef function both call, built with cython3 in the test.
cdef double inner(long n):
    cdef double acc = 0
    cdef long i
    for i in range(n):
        acc += (i % 7) * 0.5 + acc * 1e-9    # @inner_loop
    return acc


def hot(long n):
    return inner(n)                           # @hot_call


class Clock:
    def tick(self, long n):
        return inner(n) + 1                   # @tick_call
