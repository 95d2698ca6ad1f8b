"""Second module of the structure.py workload: a leaf in another file."""


def helper_spin(n):
    h = 0
    while h < n:                                        # @leaf_helper
        h += 1                                          # @leaf_helper
    return h
