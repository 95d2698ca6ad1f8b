// C++ for tests/functional/test_names.py, loaded with ctypes: a template
// method in an anonymous namespace, a lambda inside a namespaced function
// and an overloaded operator, kept out of line so each is a frame.
#include <cstdint>
#include <vector>

namespace {
template <typename T> struct Accumulator {
	__attribute__((noinline)) T run(const std::vector<T> &v, int rounds) const
	{
		T acc{};
		for (int r = 0; r < rounds; r++)
			for (auto x : v)
				acc = acc * 3 + x + (T)r;
		return acc;
	}
};
}

namespace fw {
namespace shapes {
struct Vec2 {
	double x, y;
};

__attribute__((noinline)) Vec2 operator+(const Vec2 &a, const Vec2 &b)
{
	return Vec2{ a.x + b.x * 1.0000001, a.y + b.y * 0.9999999 };
}

__attribute__((noinline)) double area(const std::vector<double> &xs, int rounds)
{
	auto step = [&](int r) __attribute__((noinline)) {
		Vec2 acc{ 0, 0 };
		for (double x : xs)
			acc = acc + Vec2{ x, (double)r };
		return acc.x + acc.y;
	};
	double total = 0;
	for (int r = 0; r < rounds; r++)
		total += step(r);
	return total;
}
}
}

extern "C" uint64_t fwcxx_work(int rounds)
{
	static std::vector<uint64_t> v(4096, 7);
	static std::vector<double> xs(2048, 0.5);
	Accumulator<uint64_t> a;

	return a.run(v, rounds) ^ (uint64_t)fw::shapes::area(xs, rounds);
}
