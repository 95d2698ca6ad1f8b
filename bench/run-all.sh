#!/usr/bin/env bash
# framewalk vs CPython 3.15's own sampler (python3.15 -m profiling.sampling),
# side by side in one run. See bench/README.md.
#
#   bench/run-all.sh FRAMEWALK [--quick] [--rss-seconds N] [--only rate,toggle,slowdown,rss]
#                              [--no-peer-rss] [--quiet-wait S] [--results DIR]
#
# Default (full, ~50 min): max-rate captures of 10 s x 3 each; slowdown
# with the profiler paused/resumed every 0.5 s, 60 s per rate and profiler;
# slowdown with 12 interleaved 1.5 s rounds per condition, both at 100 Hz
# and 10 kHz; RSS over 600 s at 1 kHz on a 50-thread target (framewalk,
# then the peer: 20 min).
# --quick (~8 min): 5 s x 2, toggle 20 s, 5 rounds of 1 s, RSS over 60 s.
# --quiet-wait S: before each capture/round wait up to S s for other jobs
# on the machine to go quiet (default 30 for rate, 15 for slowdown).
# Prints the summary table; writes bench/results/{rate,toggle,slowdown,rss-Ns,summary}.{txt,json}
# and the profilers' own outputs under bench/results/raw/.
# Needs root (ptrace-level access, chroot, mount). Creates the Debian-unstable
# root with scripts/sid-root.sh if it is missing; mounts proc inside it only
# if it is not mounted and unmounts it on exit.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
root=${FRAMEWALK_SID_ROOT:-/var/cache/framewalk/sid}
py=/usr/bin/python3

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[[ $# -ge 1 ]] || usage
fw=$1; shift
[[ -x $fw ]] || { echo "run-all: $fw is not an executable (build it with make)" >&2; exit 2; }
quick=0 rss_seconds= only=rate,toggle,slowdown,rss peer_rss=1 results=$here/results wait_args=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --quick) quick=1 ;;
        --rss-seconds) rss_seconds=$2; shift ;;
        --only) only=$2; shift ;;
        --no-peer-rss) peer_rss=0 ;;
        --quiet-wait) wait_args=(--quiet-wait "$2"); shift ;;
        --results) results=$2; shift ;;
        -h|--help) usage ;;
        *) echo "run-all: unknown option $1" >&2; usage ;;
    esac
    shift
done
[[ $(id -u) == 0 ]] || { echo "run-all: must run as root" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "run-all: needs GNU time (apt-get install time)" >&2; exit 1; }

if ((quick)); then
    rate_args=(--seconds 5 --reps 2)
    toggle_args=(--seconds 20)
    slow_args=(--reps 5 --round 1)
    rss_seconds=${rss_seconds:-60}
else
    rate_args=(--seconds 10 --reps 3)
    toggle_args=(--seconds 60)
    slow_args=(--reps 12 --round 1.5)
    rss_seconds=${rss_seconds:-600}
fi
profilers=framewalk; ((peer_rss)) && profilers=framewalk,peer

[[ -x $root/usr/bin/python3.15 ]] || "$repo/scripts/sid-root.sh" "$root"

# The lead may rebuild build/framewalk while this runs: benchmark a copy.
work=$(mktemp -d /tmp/framewalk-bench.XXXXXX)
mounted=0
cleanup() {
    ((mounted)) && mountpoint -q "$root/proc" && umount "$root/proc"
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
cp -p "$fw" "$work/framewalk"
export FWBENCH_FRAMEWALK_SOURCE=$(cd "$(dirname "$fw")" && pwd)/$(basename "$fw")
if ! mountpoint -q "$root/proc"; then
    mount -t proc proc "$root/proc"; mounted=1
fi
mkdir -p "$results"

for b in ${only//,/ }; do
    case $b in
        rate)     "$py" "$here/rate.py" "$work/framewalk" "${rate_args[@]}" ${wait_args[@]+"${wait_args[@]}"} --results "$results" ;;
        toggle)   "$py" "$here/toggle.py" "$work/framewalk" "${toggle_args[@]}" --profilers framewalk,peer \
                        --results "$results" ;;
        slowdown) "$py" "$here/slowdown.py" "$work/framewalk" "${slow_args[@]}" ${wait_args[@]+"${wait_args[@]}"} --results "$results" ;;
        rss)      "$py" "$here/rss.py" "$work/framewalk" --seconds "$rss_seconds" \
                        --profilers "$profilers" --results "$results" ;;
        *) echo "run-all: unknown benchmark $b" >&2; exit 2 ;;
    esac
    echo
done
echo "== summary (also $results/summary.txt) =="
"$py" "$here/summarize.py" --results "$results" --rss-seconds "$rss_seconds"
