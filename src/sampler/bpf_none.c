/* The BPF backend's stand-in for builds without clang/bpftool/libbpf. */
#include <errno.h>

#include "sampler/backend.h"
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

static int bpf_none_start(struct session *sess, struct strbuf *why)
{
	(void)sess;
	return bpf_backend_probe(why);
}

const struct backend_ops backend_bpf_ops = {
	.start = bpf_none_start,
};

void bpf_backend_set_debug(int on)
{
	(void)on;
}
