/*
 * Names as their authors wrote them (elf/demangle.h), on real symbols:
 * C++ from libstdc++ and PyTorch's ATen, Rust legacy and v0 from rustc's
 * own libraries and serde_json, Cython from lxml's etree; each demangled
 * (Rust without its hash), in its language, and in its short form for the
 * narrow views. C names and malformed ones are left alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "elf/demangle.h"

struct case_ {
	const char *sym;
	enum symbol_lang lang;
	const char *full;           /* NULL: not mangled, kept as is */
	const char *short_form;
};

static const struct case_ cases[] = {
	{ "_ZNSt6vectorIiSaIiEE9push_backERKi", SYMBOL_CXX,
	  "std::vector<int, std::allocator<int> >::push_back(int const&)",
	  "std::vector<...>::push_back" },
	{ "_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE7compareERKS4_", SYMBOL_CXX,
	  "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::"
	  "compare(std::__cxx11::basic_string<char, std::char_traits<char>, "
	  "std::allocator<char> > const&) const",
	  "std::__cxx11::basic_string<...>::compare" },
	{ "_ZN2at6native3addERKNS_6TensorES3_RKN3c106ScalarE", SYMBOL_CXX,
	  "at::native::add(at::Tensor const&, at::Tensor const&, c10::Scalar const&)",
	  "at::native::add" },
	/* a lambda, an operator whose name holds '(' or '<', an anonymous namespace */
	{ "_ZZN3foo3barEvENKUlvE_clEv", SYMBOL_CXX,
	  "foo::bar()::{lambda()#1}::operator()() const", "foo::bar()::{lambda()#1}::operator()" },
	{ "_ZN3FoolsERKS_", SYMBOL_CXX, "Foo::operator<<(Foo const&)", "Foo::operator<<" },
	{ "_ZN3FooltEi", SYMBOL_CXX, "Foo::operator<(int)", "Foo::operator<" },
	{ "_ZN12_GLOBAL__N_13fooEv", SYMBOL_CXX, "(anonymous namespace)::foo()",
	  "(anonymous namespace)::foo" },
	/* GCC's split-off cold part stays told apart from the body */
	{ "_ZN3foo3barEv.cold", SYMBOL_CXX, "foo::bar() [clone .cold]", "foo::bar [clone .cold]" },
	/* ... and its specialised copies are the function (seen in test_names' build) */
	{ "_ZNK12_GLOBAL__N_111AccumulatorImE3runERKSt6vectorImSaImEEi.constprop.0", SYMBOL_CXX,
	  "(anonymous namespace)::Accumulator<unsigned long>::run(std::vector<unsigned long, "
	  "std::allocator<unsigned long> > const&, int) const [clone .constprop.0]",
	  "(anonymous namespace)::Accumulator<...>::run" },
	/* Rust legacy: the hash goes; "<T as Trait>" where a path starts is kept */
	{ "_ZN4core3ptr13drop_in_place17h1234567890abcdefE", SYMBOL_RUST,
	  "core::ptr::drop_in_place", "core::ptr::drop_in_place" },
	{ "_ZN100_$LT$$RF$mut$u20$serde_json..ser..Serializer$LT$W$C$F$GT$$u20$as$u20$"
	  "serde_core..ser..Serializer$GT$13serialize_str17h087dcf4bf24cafe9E", SYMBOL_RUST,
	  "<&mut serde_json::ser::Serializer<W,F> as serde_core::ser::Serializer>::serialize_str",
	  "<&mut serde_json::ser::Serializer<...> as serde_core::ser::Serializer>::serialize_str" },
	/* Rust v0 */
	{ "_RNvMs1_NtCs6IqgnrtlzSn_10rustc_span6symbolNtB5_6Symbol6as_str", SYMBOL_RUST,
	  "<rustc_span::symbol::Symbol>::as_str", "<rustc_span::symbol::Symbol>::as_str" },
	{ "_RNvYINtNtNtCsgEmfK2I1SDS_4core5slice4iter7IterMutmENtNtNtNtB9_4iter8adapters3zip"
	  "27TrustedRandomAccessNoCoerce4sizeCsfEOYDRpO4Ta_11miniz_oxide", SYMBOL_RUST,
	  "<core::slice::iter::IterMut<u32> as core::iter::adapters::zip::"
	  "TrustedRandomAccessNoCoerce>::size",
	  "<core::slice::iter::IterMut<...> as core::iter::adapters::zip::"
	  "TrustedRandomAccessNoCoerce>::size" },
	{ "_RINvCs4k3LPBBIJ3O_21rustc_data_structures7outlineNCNvMNtNtB2_4sync12worker_local"
	  "NtBQ_10RegistryId6verifys_0jECsjxQzBqb8aDj_12rustc_middle", SYMBOL_RUST,
	  "rustc_data_structures::outline::<<rustc_data_structures::sync::worker_local::"
	  "RegistryId>::verify::{closure#1}, usize>",
	  "rustc_data_structures::outline::<...>" },
	/* Cython: the .pyx's dotted name, marked */
	{ "__pyx_pw_4lxml_5etree_9_Document_5getroot", SYMBOL_CYTHON,
	  "lxml.etree._Document.getroot [cython]", "lxml.etree._Document.getroot [cython]" },
	{ "__pyx_pf_4lxml_5etree_9_Document_4getroot", SYMBOL_CYTHON,
	  "lxml.etree._Document.getroot [cython]", "lxml.etree._Document.getroot [cython]" },
	{ "__pyx_f_4lxml_5etree__copyDoc", SYMBOL_CYTHON, "lxml.etree._copyDoc [cython]",
	  "lxml.etree._copyDoc [cython]" },
	{ "__pyx_pw_4fwcy_1hot", SYMBOL_CYTHON, "fwcy.hot [cython]", "fwcy.hot [cython]" },
	/* C, and what only looks mangled */
	{ "PyObject_Call", SYMBOL_C, NULL, "PyObject_Call" },
	{ "_PyEval_EvalFrameDefault", SYMBOL_C, NULL, "_PyEval_EvalFrameDefault" },
	{ "_Znot_really", SYMBOL_C, NULL, "_Znot_really" },
	{ "_ZN", SYMBOL_C, NULL, "_ZN" },
	{ "__pyx_module_is_main_fwcy", SYMBOL_C, NULL, "__pyx_module_is_main_fwcy" },
	{ "__pyx_pw_", SYMBOL_C, NULL, "__pyx_pw_" },
	{ "__pyx_pw_99999999999999999999x_", SYMBOL_C, NULL, "__pyx_pw_99999999999999999999x_" },
};

static void test_real_symbols(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct case_ *c = &cases[i];
		enum symbol_lang lang = SYMBOL_CXX;
		char *full = symbol_demangle(c->sym, &lang);
		struct strbuf sb = STRBUF_INIT;

		if (c->full ? !full || strcmp(full, c->full) : full != NULL)
			print_message("%s: got %s\n", c->sym, full ? full : "(none)");
		assert_int_equal(lang, c->lang);
		if (c->full)
			assert_string_equal(full, c->full);
		else
			assert_null(full);
		symbol_short_name(full ? full : c->sym, &sb);
		if (strcmp(strbuf_str(&sb), c->short_form))
			print_message("%s: short %s\n", c->sym, strbuf_str(&sb));
		assert_string_equal(strbuf_str(&sb), c->short_form);
		strbuf_release(&sb);
		free(full);
	}
}

/* Names that are not C++ at all go through the short form unchanged or bounded. */
static void test_short_form_of_odd_names(void **state)
{
	static const char *const same[] = {
		"", "<", ">", "a<", "a>b", "(", ")", "f(", "x) const", "operator", "operator<",
		"[vdso]+0x10", "libz.so.1+0x4a80", "py::work:/tmp/a.py",
	};
	char deep[4096];

	(void)state;
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		struct strbuf sb = STRBUF_INIT;

		symbol_short_name(same[i], &sb);
		assert_true(strbuf_str(&sb)[0] || !same[i][0]);
		assert_true(sb.len <= strlen(same[i]) + 5);
		strbuf_release(&sb);
	}
	/* thousands of nested brackets: one pass, bounded output */
	for (size_t i = 0; i + 1 < sizeof(deep); i++)
		deep[i] = i < 4 ? "std:"[i] : i % 2 ? '<' : 'a';
	deep[sizeof(deep) - 1] = 0;
	{
		struct strbuf sb = STRBUF_INIT;

		symbol_short_name(deep, &sb);
		assert_true(sb.len < 64);
		strbuf_release(&sb);
	}
}

/*
 * The short form is a fixed point: shortening it again changes nothing, and
 * it never ends in a space (a collapsed profile's reader trims the space
 * before the count, so write -> load -> write would differ; fuzz_load found
 * "f (a]<b(c": an unclosed '(' was cut as an argument list, then again).
 */
static void test_short_form_is_a_fixed_point(void **state)
{
	static const char *const names[] = {
		"thread_method (/work/a]<script(typ\r", "f(", "a (b]<c(d", "foo (int)",
		"ns::f(int) const", "std::vector<int>::push_back(int&&)", "f (x", "g ()",
		"(", "x) const", "h(int) [clone .cold]",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct strbuf once = STRBUF_INIT, twice = STRBUF_INIT;

		symbol_short_name(names[i], &once);
		symbol_short_name(strbuf_str(&once), &twice);
		if (strcmp(strbuf_str(&once), strbuf_str(&twice)))
			print_message("%s: %s then %s\n", names[i], strbuf_str(&once),
				      strbuf_str(&twice));
		assert_string_equal(strbuf_str(&once), strbuf_str(&twice));
		assert_true(!once.len || strbuf_str(&once)[once.len - 1] != ' ');
		strbuf_release(&once);
		strbuf_release(&twice);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_symbols),
		cmocka_unit_test(test_short_form_of_odd_names),
		cmocka_unit_test(test_short_form_is_a_fixed_point),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
