# What the checks of scripts/dist/ share; sourced, not run.

# Stops the check with its name and the reason.
fail() {
    echo "$(basename "$0" .sh): FAILED: $*" >&2
    exit 1
}
step() { printf '\n--> %s\n' "$*"; }
now() { date +%s.%N; }
# Seconds since a `now`, with two decimals.
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
