/* The BPF backend's stand-in for builds without clang/bpftool/libbpf. */
#include <errno.h>

#include "sampler/bpf.h"

int bpf_backend_built(void)
{
	return 0;
}

int bpf_backend_probe(struct strbuf *why)
{
	strbuf_addstr(why, "this framewalk was built without BPF support "
		      "(install clang, bpftool and libbpf-dev, then rebuild)");
	return -ENOTSUP;
}

int bpf_backend_run(struct session *sess, struct strbuf *why)
{
	(void)sess;
	return bpf_backend_probe(why);
}
