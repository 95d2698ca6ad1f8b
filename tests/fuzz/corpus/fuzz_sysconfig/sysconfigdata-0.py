# system configuration generated and used by the sysconfig module
build_time_vars = {'ABIFLAGS': '',
 'AR': 'ar',
 'BLDSHARED': 'gcc -shared -L/root/.pyenv/versions/3.12.1/lib '
              '-Wl,-rpath,/root/.pyenv/versions/3.12.1/lib '
              '-L/root/.pyenv/versions/3.12.1/lib '
              '-Wl,-rpath,/root/.pyenv/versions/3.12.1/lib',
 'CFLAGS': '-fno-strict-overflow -Wsign-compare -DNDEBUG -g -O3 -Wall',
 'CONFIG_ARGS': "'--prefix=/root/.pyenv/versions/3.12.1' '--enable-shared' "
                "'--libdir=/root/.pyenv/versions/3.12.1/lib' "
                "'LDFLAGS=-L/root/.pyenv/versions/3.12.1/lib "
                "-Wl,-rpath,/root/.pyenv/versions/3.12.1/lib' "
                "'LIBS=-L/root/.pyenv/versions/3.12.1/lib "
                "-Wl,-rpath,/root/.pyenv/versions/3.12.1/lib' "
                "'CPPFLAGS=-I/root/.pyenv/versions/3.12.1/include'",
 'LDSHARED': 'gcc -shared -L/root/.pyenv/versions/3.12.1/lib '
             '-Wl,-rpath,/root/.pyenv/versions/3.12.1/lib '
             '-L/root/.pyenv/versions/3.12.1/lib '
             '-Wl,-rpath,/root/.pyenv/versions/3.12.1/lib',
 'PY_CFLAGS': '-fno-strict-overflow -Wsign-compare -DNDEBUG -g -O3 -Wall',
 'Py_DEBUG': 0,
 'Py_ENABLE_SHARED': 1,
 'SIZEOF_VOID_P': 8,
 'VERSION': '3.12'}
