/*
 * The static build's answer to libdwfl's debuginfod hooks: none. libdw.a's
 * debuginfod-client.o finds libdebuginfod with dlopen, which a statically
 * linked program cannot do safely (the loaded library would bring a second,
 * shared glibc), and libdebuginfod itself needs libcurl. Defining the four
 * functions that object exports keeps the linker from taking it out of the
 * archive at all, so the binary has no dlopen and no debuginfod: separate
 * debug info is found only in the files already on the machine (build-id,
 * .gnu_debuglink, /usr/lib/debug, the debuginfod cache). Signatures follow
 * elfutils' libdwfl internal header; the return values are what libdwfl
 * itself returns when elfutils is built without debuginfod support.
 */
#include <elfutils/libdwfl.h>
#include <stddef.h>

int __libdwfl_debuginfod_find_executable(Dwfl *dwfl, const unsigned char *build_id,
					 size_t build_id_len);
int __libdwfl_debuginfod_find_debuginfo(Dwfl *dwfl, const unsigned char *build_id,
					size_t build_id_len);
void __libdwfl_debuginfod_end(debuginfod_client *c);

int __libdwfl_debuginfod_find_executable(Dwfl *dwfl, const unsigned char *build_id,
					 size_t build_id_len)
{
	(void)dwfl, (void)build_id, (void)build_id_len;
	return -1;
}

int __libdwfl_debuginfod_find_debuginfo(Dwfl *dwfl, const unsigned char *build_id,
					size_t build_id_len)
{
	(void)dwfl, (void)build_id, (void)build_id_len;
	return -1;
}

void __libdwfl_debuginfod_end(debuginfod_client *c)
{
	(void)c;
}

debuginfod_client *dwfl_get_debuginfod_client(Dwfl *dwfl)
{
	(void)dwfl;
	return NULL;
}
