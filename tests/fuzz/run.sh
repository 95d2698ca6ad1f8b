#!/bin/sh
# Build and run every libFuzzer harness of tests/fuzz/.
#
#   tests/fuzz/run.sh [SECONDS_PER_HARNESS]   fuzz each harness (default 60 s)
#   tests/fuzz/run.sh --replay                run the seeds and saved crashes once
#   tests/fuzz/run.sh --merge                 minimize the committed seed corpus
#                                             with what the runs found (-merge=1)
#
# Each harness starts from its committed seeds (tests/fuzz/corpus/NAME, never
# written by a run) plus what earlier local runs found ($B/fuzz-corpus/NAME,
# not committed), after replaying the saved crash inputs
# (tests/fuzz/crashes/NAME-*). A new crash, leak, timeout (> 25 s for one
# input) or out-of-memory (> 1 GiB in one allocation, 2 GiB RSS) is saved
# as tests/fuzz/crashes/NAME-crash-<sha1> and makes the script exit 1.
# FUZZ_JOBS harnesses run at once (default: the number of CPUs); FUZZ_ONLY
# restricts the run to a space-separated list of harness names.
set -eu

cd "$(dirname "$0")/../.."
B=${FUZZ_BUILDDIR:-build-fuzz}
MODE=fuzz
SECONDS_PER=60
case "${1:-}" in
--replay) MODE=replay ;;
--merge) MODE=merge ;;
'') ;;
*[!0-9]*) echo "usage: $0 [SECONDS_PER_HARNESS | --replay | --merge]" >&2; exit 2 ;;
*) SECONDS_PER=$1 ;;
esac
JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}

tests/fuzz/build.sh

HARNESSES=${FUZZ_ONLY:-$(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$//')}
LOGS="$B/fuzz-logs"
mkdir -p "$LOGS" tests/fuzz/crashes
OPTS="-timeout=25 -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1"
# LSan finds leaks; UBSan reports become crashes (-fno-sanitize-recover)
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# Replay the saved crash inputs of one harness: 0 when all pass.
replay_crashes() {
	h=$1
	set -- tests/fuzz/crashes/"$h"-*
	[ -e "$1" ] || return 0
	"$B/fuzz/$h" $OPTS -artifact_prefix="$LOGS/$h-replay-" "$@" >"$LOGS/$h.replay.log" 2>&1
}

CORPUS_MAX_FILES=50
CORPUS_MAX_KB=2048

# Drop the largest files of $2 that are not in $1 until it fits the caps.
trim_corpus() {
	while :; do
		n=$(ls "$2" | wc -l)
		kb=$(du -sk "$2" | cut -f1)
		[ "$n" -le "$CORPUS_MAX_FILES" ] && [ "$kb" -le "$CORPUS_MAX_KB" ] && return 0
		victim=""
		for f in $(ls -S "$2"); do
			if [ ! -e "$1/$f" ]; then
				victim=$f
				break
			fi
		done
		[ -n "$victim" ] || return 0
		rm -f "$2/$victim"
	done
}

run_one() {
	h=$1
	bin="$B/fuzz/$h"
	seeds="tests/fuzz/corpus/$h"
	work="$B/fuzz-corpus/$h"
	mkdir -p "$work" "$seeds"
	if [ "$MODE" != merge ] && ! replay_crashes "$h"; then
		echo "$h: FAILED replaying tests/fuzz/crashes/$h-* (see $LOGS/$h.replay.log)"
		return 1
	fi
	case $MODE in
	replay)
		# shellcheck disable=SC2086
		"$bin" $OPTS -runs=0 -artifact_prefix="$LOGS/$h-replay-" "$seeds" \
			>"$LOGS/$h.log" 2>&1 ;;
	fuzz)
		# shellcheck disable=SC2086
		"$bin" $OPTS -max_total_time="$SECONDS_PER" \
			-artifact_prefix="tests/fuzz/crashes/$h-" "$work" "$seeds" \
			>"$LOGS/$h.log" 2>&1 ;;
	merge)
		# the seeds stay; inputs of earlier runs that add coverage join
		# them (smallest first), then the largest additions go until the
		# corpus fits CORPUS_MAX_FILES and CORPUS_MAX_KB
		rm -rf "$work.merged"
		cp -r "$seeds" "$work.merged"
		# shellcheck disable=SC2086
		"$bin" $OPTS -merge=1 -artifact_prefix="$LOGS/$h-merge-" "$work.merged" "$work" \
			>"$LOGS/$h.log" 2>&1 &&
			trim_corpus "$seeds" "$work.merged" &&
			rm -rf "$seeds" && mv "$work.merged" "$seeds" ;;
	esac
	rc=$?
	stats=$(grep -E '^#[0-9]+.*(DONE|INITED)' "$LOGS/$h.log" | tail -n 1 | sed 's/^#[0-9]* *//')
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOGS/$h.log" | tail -n 1)
	if [ "$rc" -ne 0 ]; then
		echo "$h: FAILED (exit $rc) $stats"
		grep -E '^(==[0-9]+== ?ERROR|SUMMARY|.*runtime error|.*check failed|artifact_prefix|Test unit written)' \
			"$LOGS/$h.log" | head -n 8 | sed 's/^/    /'
		# a CI log is all that is kept of a clean clone's run: a small
		# input is printed whole, to be saved with base64 -d
		unit=$(sed -n 's/.*Test unit written to //p' "$LOGS/$h.log" | tail -n 1)
		if [ -n "$unit" ] && [ -f "$unit" ] && [ "$(wc -c <"$unit")" -le 4096 ]; then
			echo "    the input, base64:"
			base64 -w 96 "$unit" | sed 's/^/      /'
		fi
		echo "    full log: $LOGS/$h.log"
		return 1
	fi
	echo "$h: ok, ${execs:-?} runs; $stats"
}

export B MODE SECONDS_PER OPTS LOGS
fail=0
if [ "$JOBS" -gt 1 ] && [ "$MODE" = fuzz ]; then
	# run JOBS harnesses at a time; each prints its own summary line
	pids=""
	n=0
	for h in $HARNESSES; do
		( run_one "$h" || exit 1 ) >"$LOGS/$h.summary" 2>&1 &
		pids="$pids $!"
		n=$((n + 1))
		if [ "$n" -ge "$JOBS" ]; then
			for p in $pids; do wait "$p" || fail=1; done
			pids=""
			n=0
		fi
	done
	for p in $pids; do wait "$p" || fail=1; done
	for h in $HARNESSES; do cat "$LOGS/$h.summary"; done
else
	for h in $HARNESSES; do
		run_one "$h" || fail=1
	done
fi
if [ "$MODE" = merge ]; then
	du -sh tests/fuzz/corpus/* | sed 's/^/corpus: /'
	for h in $HARNESSES; do
		echo "corpus: $h $(ls "tests/fuzz/corpus/$h" | wc -l) files"
	done
fi
if [ "$fail" -ne 0 ]; then
	echo "fuzz: FAILED (crash inputs are in tests/fuzz/crashes/)"
	exit 1
fi
echo "fuzz: all harnesses ok"
