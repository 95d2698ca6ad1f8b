/*
 * Implementation of excstate.h: two words of the thread state, then the
 * exception-state stack it points to, each item a value and a link to the
 * previous (outer) item.
 */
#include <errno.h>

#include "python/excstate.h"
#include "util/util.h"

int py_exc_supported(const struct py_offsets *off, const char *version, struct strbuf *why)
{
	const struct py_objects_layout *lo = &off->objects;

	if (!lo->known || lo->tstate_exc_info < 0 || lo->exc_item_value < 0 ||
	    lo->exc_item_previous < 0 || lo->tstate_curexc < 0) {
		strbuf_addf(why, "--mode exception is not supported on Python %s (its "
			    "exception state layout is unknown)", version);
		return -ENOTSUP;
	}
	return 0;
}

int py_exc_current(struct py_objects *ob, uint64_t tstate, uint64_t *exc, int *is_type)
{
	const struct py_objects_layout *lo = ob->lo;
	uint64_t raised = 0, item = 0, value;
	int ret;

	*exc = 0;
	*is_type = 0;
	if (!lo || lo->tstate_exc_info < 0 || lo->exc_item_value < 0 ||
	    lo->exc_item_previous < 0 || lo->tstate_curexc < 0)
		return -ENOTSUP;
	if (!tstate)
		return -EFAULT;
	ret = py_obj_word(ob, tstate + (uint64_t)lo->tstate_curexc, &raised);
	if (ret)
		return ret;
	if (raised) {
		*exc = raised;
		/* <= 3.11 the first of the three words is the type; 3.12+ the exception */
		*is_type = ob->r->off->version_hex < 0x030c0000;
		return 0;
	}
	ret = py_obj_word(ob, tstate + (uint64_t)lo->tstate_exc_info, &item);
	for (int depth = 0; !ret && item && depth < PY_EXC_STACK_MAX; depth++) {
		if ((ret = py_obj_word(ob, item + (uint64_t)lo->exc_item_value, &value)))
			break;
		/* <= 3.10 a handler that ended leaves None; 3.11+ NULL */
		if (value && (ret = py_obj_is_none(ob, value)) == 0) {
			*exc = value;
			return 0;
		}
		if (ret < 0)
			break;
		ret = py_obj_word(ob, item + (uint64_t)lo->exc_item_previous, &item);
	}
	/* a chain longer than any real one: garbage */
	return ret ? ret : item ? -EFAULT : 0;
}

const char *py_exc_type_name(struct py_objects *ob, uint64_t exc, int is_type)
{
	const struct py_type_info *t;

	if (is_type ? py_type_at(ob, exc, &t) : py_obj_type(ob, exc, &t))
		return "?";
	return t->name;
}
