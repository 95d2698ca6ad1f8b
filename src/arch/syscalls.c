/* Lookups in the architecture's table of system calls (arch.h). */
#include "arch.h"

static const struct arch_syscall *find(long nr)
{
	for (size_t i = 0; i < arch_syscall_count; i++)
		if (arch_syscalls[i].nr == nr)
			return &arch_syscalls[i];
	return NULL;
}

const char *arch_syscall_name(long nr)
{
	const struct arch_syscall *c = find(nr);

	return c ? c->name : NULL;
}

int arch_syscall_fd_arg(long nr)
{
	const struct arch_syscall *c = find(nr);

	return c ? c->fd_arg : 0;
}
