/*
 * Implementation of demangle.h. libiberty's cplus_demangle with DMGL_AUTO
 * tells Itanium C++, Rust legacy (Itanium-shaped, ending in "17h<hash>E")
 * and Rust v0 ("_R...") apart itself; without DMGL_VERBOSE it leaves Rust's
 * hash out. Cython's names follow its code generator (Cython/Compiler/
 * Naming.py): a prefix per kind of function, then the dotted module and
 * class path as length-prefixed parts joined by '_', then the function,
 * after a counter for Python-visible ones ("__pyx_pw_4lxml_5etree_9_Document_
 * 5getroot" is lxml.etree._Document.getroot).
 */
#include <ctype.h>
#include <libiberty/demangle.h>
#include <string.h>
#undef ARRAY_SIZE   /* libiberty's; util.h has the project's */

#include "elf/demangle.h"
#include "util/util.h"

/* Cython's function prefixes (longest first where one begins another). */
static const char *const cython_prefixes[] = {
	"__pyx_pw_",                /* the Python-callable wrapper of a def function */
	"__pyx_pf_",                /* its body */
	"__pyx_gb_",                /* a generator's body */
	"__pyx_f_",                 /* a cdef function */
};

/* "__pyx_pw_4fwcy_5Clock_3tick" -> "fwcy.Clock.tick [cython]", or NULL. */
static char *cython_name(const char *sym)
{
	struct strbuf sb = STRBUF_INIT;
	const char *s = NULL;
	int parts = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cython_prefixes) && !s; i++)
		if (!strncmp(sym, cython_prefixes[i], strlen(cython_prefixes[i])))
			s = sym + strlen(cython_prefixes[i]);
	if (!s)
		return NULL;
	for (;;) {
		const char *digits = s;
		unsigned long n = 0;

		while (isdigit((unsigned char)*s) && n < 4096)
			n = n * 10 + (unsigned long)(*s++ - '0');
		/* a part: <len><name>_ with exactly len characters before the '_' */
		if (s > digits && n && strnlen(s, n + 1) > n && s[n] == '_') {
			strbuf_add(&sb, s, n);
			strbuf_addch(&sb, '.');
			s += n + 1;
			parts++;
			continue;
		}
		/* the function: after its counter, if any; a name starts with no digit */
		if (!*s || !(isalpha((unsigned char)*s) || *s == '_') || !parts) {
			strbuf_release(&sb);
			return NULL;
		}
		strbuf_addstr(&sb, s);
		break;
	}
	strbuf_addstr(&sb, " [cython]");
	return strbuf_detach(&sb);
}

/* A Rust legacy name: Itanium-shaped, its last part the hash "17h<16 hex>E". */
static int rust_legacy(const char *sym)
{
	size_t len = strlen(sym);
	const char *h = sym + len - 20;

	if (len < 24 || strncmp(sym, "_ZN", 3) || strncmp(h, "17h", 3) || sym[len - 1] != 'E')
		return 0;
	for (int i = 3; i < 19; i++)
		if (!isxdigit((unsigned char)h[i]))
			return 0;
	return 1;
}

char *symbol_demangle(const char *sym, enum symbol_lang *lang)
{
	char *out;

	*lang = SYMBOL_C;
	if (!sym)
		return NULL;
	if (!strncmp(sym, "__pyx_", 6)) {
		out = cython_name(sym);
		if (out)
			*lang = SYMBOL_CYTHON;
		return out;
	}
	if (strncmp(sym, "_Z", 2) && strncmp(sym, "_R", 2))
		return NULL;
	out = cplus_demangle(sym, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (!out)
		return NULL;
	*lang = !strncmp(sym, "_R", 2) || rust_legacy(sym) ? SYMBOL_RUST : SYMBOL_CXX;
	return out;
}

static int ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/*
 * Where a C++ operator's name starting at name[i] ends ("operator<<",
 * "operator()": its brackets are its name, not a list), or 0 when no
 * operator's name starts there.
 */
static size_t operator_end(const char *name, size_t i)
{
	static const char *const ops[] = {
		"()", "[]", "<=>", "<<=", ">>=", "->*", "<<", ">>", "<=", ">=", "->", "<", ">",
	};

	if (strncmp(name + i, "operator", 8) || (i && ident_char(name[i - 1])) ||
	    ident_char(name[i + 8]))
		return 0;
	i += 8;
	for (size_t k = 0; k < ARRAY_SIZE(ops); k++)
		if (!strncmp(name + i, ops[k], strlen(ops[k])))
			return i + strlen(ops[k]);
	return i;
}

/* The qualifiers that may follow a C++ function's argument list. */
static int only_qualifiers(const char *s)
{
	static const char *const quals[] = { " const", " volatile", " &&", " &", " noexcept" };

	while (*s) {
		size_t i;

		if (!strncmp(s, " [clone ", 8) || !strcmp(s, INLINED_MARK))
			return 1;
		for (i = 0; i < ARRAY_SIZE(quals); i++)
			if (!strncmp(s, quals[i], strlen(quals[i]))) {
				s += strlen(quals[i]);
				break;
			}
		if (i == ARRAY_SIZE(quals))
			return 0;
	}
	return 1;
}

void symbol_short_name(const char *name, struct strbuf *out)
{
	size_t full = strlen(name), len = full, start = out->len, args = full, args_end = 0;
	int depth = 0;              /* of (), {}, [] */
	int tdepth = 0;             /* of collapsed <...> */

	/* The last top-level '(' group, when only qualifiers follow it. */
	for (size_t i = 0; i < len; i++) {
		size_t op = operator_end(name, i);

		if (op) {
			i = op - 1;
			continue;
		}
		if (name[i] == '(' || name[i] == '{' || name[i] == '[') {
			if (!depth && name[i] == '(')
				args = i;
			depth++;
		} else if ((name[i] == ')' || name[i] == '}' || name[i] == ']') && depth) {
			if (!--depth && name[i] == ')')
				args_end = i + 1;
		}
	}
	/* an argument list is one that closes: "f (a]<b(c" has none */
	if (args < len && args_end > args && only_qualifiers(name + args_end)) {
		len = args;
		while (len && name[len - 1] == ' ')
			len--;   /* "f (int)" -> "f", not "f ": the short form is a fixed point */
	} else {
		args = len;
	}
	/* Template and generic argument lists collapse. */
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		size_t op = operator_end(name, i);

		if (op) {
			if (!tdepth)
				strbuf_add(out, name + i, op - i);
			i = op - 1;
			continue;
		}
		/* after a name or "::" (Rust's "::<T>"); not where a path starts ("<T as Trait>") */
		if (c == '<' && (tdepth || (i && (ident_char(name[i - 1]) || name[i - 1] == '>' ||
						  (i > 1 && name[i - 1] == ':' && name[i - 2] == ':'))))) {
			if (!tdepth++)
				strbuf_addstr(out, "<...>");
			continue;
		}
		if (c == '>' && tdepth) {
			tdepth--;
			continue;
		}
		if (!tdepth)
			strbuf_addch(out, c);
	}
	if (args < full) {
		/*
		 * GCC's clones: " [clone .cold]" stays (another piece of code than
		 * the body, run on the rare path); ".constprop.0", ".isra.0",
		 * ".part.0" are the function itself, specialised.
		 */
		const char *clone = strstr(name + args, " [clone ");

		if (clone && strstr(clone, ".cold"))
			strbuf_addstr(out, " [clone .cold]");
		if (full >= strlen(INLINED_MARK) &&
		    !strcmp(name + full - strlen(INLINED_MARK), INLINED_MARK))
			strbuf_addstr(out, INLINED_MARK);
	}
	if (out->len == start)
		strbuf_addstr(out, name);
}
