/*
 * Names as their authors wrote them: C++ (Itanium ABI) and Rust (legacy and
 * v0) linkage names demangled by libiberty's demangler (the one GCC,
 * binutils and perf use; LGPL-2.1+, its demanglers with GCC's linking
 * exception), Cython's generated C names turned back into the .pyx's dotted
 * names, and the short form of a long C++ name for the narrow views.
 */
#ifndef FRAMEWALK_ELF_DEMANGLE_H
#define FRAMEWALK_ELF_DEMANGLE_H

#include "util/strbuf.h"

/* What follows an inline frame's name (symbols/symbolize.h). */
#define INLINED_MARK " [inlined]"

enum symbol_lang {
	SYMBOL_C = 0,               /* as written: nothing to undo */
	SYMBOL_CXX,
	SYMBOL_RUST,
	SYMBOL_CYTHON,
};

/*
 * The readable name of linkage name sym, malloc'd, or NULL when it is not
 * mangled (a C name) or not understood; *lang says which language. C++
 * keeps its argument list; Rust loses its "::h<hash>"; a Cython function
 * reads "module.Class.method [cython]".
 */
char *symbol_demangle(const char *sym, enum symbol_lang *lang);

/*
 * The short form of a demangled name for the narrow views (text report,
 * collapsed stacks, flame graph labels): a C++ function's trailing argument
 * list, cv/ref qualifiers and GCC's specialised clones (".constprop.0",
 * ".isra.0") dropped, its cold part kept apart (" [clone .cold]"), template
 * and generic argument lists shown as "<...>" (a qualified path's own
 * "<T as Trait>" kept). Appends to out; a name with nothing to shorten is
 * appended unchanged.
 */
void symbol_short_name(const char *name, struct strbuf *out);

#endif
