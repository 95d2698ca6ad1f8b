# system configuration generated and used by the sysconfig module
build_time_vars = {'ABIFLAGS': '',
 'AR': 'x86_64-linux-gnu-gcc-ar',
 'BLDSHARED': 'x86_64-linux-gnu-gcc -shared -Wl,-O1 -Wl,-Bsymbolic-functions '
              '  -g '
              '-fwrapv -O2   ',
 'CFLAGS': '-Wsign-compare -DNDEBUG -g -fwrapv -O2 -Wall -g '
           ' '
           ' -fstack-protector-strong '
           '-Wformat -Werror=format-security  -g -fwrapv -O2  '
           ' ',
 'CONFIG_ARGS': "'--enable-shared' '--prefix=/usr' "
                "'--libdir=/usr/lib/x86_64-linux-gnu' '--enable-ipv6' "
                "'--enable-loadable-sqlite-extensions' "
                "'--with-dbmliborder=bdb:gdbm' '--with-computed-gotos' "
                "'--without-ensurepip' '--with-system-expat' '--with-dtrace' "
                "'--with-wheel-pkg-dir=/usr/share/python-wheels/' "
                "'--with-ssl-default-suites=openssl' 'MKDIR_P=/bin/mkdir -p' "
                "'--with-system-ffi' 'CC=x86_64-linux-gnu-gcc' 'CFLAGS=-g "
                ' '
                ' -fstack-protector-strong '
                "-Wformat -Werror=format-security ' "
                "'LDFLAGS= "
                ' -g -fwrapv -O2   '
                "' 'CPPFLAGS=-Wdate-time -D_FORTIFY_SOURCE=2'",
 'LDSHARED': 'x86_64-linux-gnu-gcc -shared -Wl,-O1 -Wl,-Bsymbolic-functions '
             '  -g -fwrapv '
             '-O2   ',
 'PY_CFLAGS': '-Wsign-compare -DNDEBUG -g -fwrapv -O2 -Wall -g '
              ' '
              ' -fstack-protector-strong '
              '-Wformat -Werror=format-security  -g -fwrapv -O2  '
              ' ',
 'Py_DEBUG': 0,
 'Py_ENABLE_SHARED': 1,
 'SIZEOF_VOID_P': 8,
 'VERSION': '3.11'}
