# system configuration generated and used by the sysconfig module
build_time_vars = {    'ABIFLAGS': '',
    'AR': 'x86_64-linux-gnu-gcc-ar',
    'BLDSHARED': 'x86_64-linux-gnu-gcc -shared -Wl,-O1 -Wl,-Bsymbolic-functions  -Wl,-z,relro -g -fwrapv -O2    ',
    'CFLAGS': '-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer  -fno-strict-overflow -Wsign-compare -DNDEBUG -g -O2 -Wall',
    'CONFIG_ARGS': "'--enable-shared' '--prefix=/usr' '--libdir=/usr/lib/x86_64-linux-gnu' '--enable-ipv6' '--enable-loadable-sqlite-extensions' '--with-computed-gotos' '--without-ensurepip' '--with-system-expat' '--with-dtrace' '--with-ssl-default-suites=openssl' '--with-system-libmpdec=no' '--with-wheel-pkg-dir=/usr/share/python-wheels/' '--with-missing-stdlib-config=/build/reproducible-path/python3.15-3.15.2/debian/missing-stdlib-config.json' 'MKDIR_P=/bin/mkdir -p' '--enable-experimental-jit=yes-off' 'CC=x86_64-linux-gnu-gcc'",
    'LDSHARED': 'x86_64-linux-gnu-gcc -shared -Wl,-O1 -Wl,-Bsymbolic-functions  -Wl,-z,relro -g -fwrapv -O2    ',
    'PY_CFLAGS': '-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer  -fno-strict-overflow -Wsign-compare -DNDEBUG -g -O2 -Wall',
    'Py_DEBUG': 0,
    'Py_ENABLE_SHARED': 1,
    'Py_GIL_DISABLED': 0,
    'SIZEOF_VOID_P': 8,
    'VERSION': '3.15'}
