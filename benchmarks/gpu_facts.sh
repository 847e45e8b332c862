#!/usr/bin/env bash
# The factual-recall study's GPU work (docs/beyond/facts.md), in one script with a time-out per
# step, for a quarter of an hour of device time:
#   1. the facts CUDA tests (a search twice on the device: the same numbers; against the CPU: in law);
#   2. criterion 1's GPU figure: closed-form top-1 over N = M = 10⁵ outputs at d = 4096, seconds a trial;
#   3. the trained full-scale sweep `facts` (studies/facts/facts.toml) on the device into
#      OUT/facts.db, resumed if OUT/facts.db holds some of it (run by run, evaluation by evaluation);
#   4. what is stored: N* per (memory, optimiser, d), seconds per search.
# `bash benchmarks/gpu_facts.sh cpu OUT` runs steps 1, 3 and 4 on the CPU (step 2 at N = 2·10⁴).
#
#   bash benchmarks/gpu_facts.sh [DEVICE] [OUT]      DEVICE: cuda (default), cuda:K or cpu
#
# Uses `python3 -m assocmem` (set PYTHONPATH to an install). Time-outs (seconds): TESTS_TIMEOUT
# (120), TIMING_TIMEOUT (120), SWEEP_TIMEOUT (420); a sweep stopped by its time-out keeps every
# finished search and evaluation in OUT/facts.db, and the next call resumes it.
set -uo pipefail
device=${1:-cuda}
out=${2:-${OUT:-facts-gpu}}
py=${PYTHON:-python3}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-${TMPDIR:-/tmp}/assocmem-pycache}

step() { echo; echo "=== $1 ($(date -u +%H:%M:%S))"; }

step "device"
"$py" - <<'EOF'
import platform
import torch
print("torch", torch.__version__, "| python", platform.python_version())
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    print("GPU", p.name, f"{p.total_memory / 2**30:.1f} GiB")
EOF

step "1. facts tests on $device"
if "$py" -c "import pytest" 2>/dev/null; then
    (cd "$here" && timeout "${TESTS_TIMEOUT:-120}" "$py" -m pytest -q --noconftest -p no:cacheprovider \
        tests/test_facts.py tests/test_facts_minibatch.py -k "cuda or device" -rs 2>&1 | tail -n 8)
else
    echo "pytest is not installed here: skipped"
fi

step "2. closed-form top-1 in blocks, N = M = 10^5, d = 4096 (criterion 1)"
if [ "$device" = cpu ]; then
    size=(-N 20000 --dims 256 1024 --memory-gb 2)
else
    size=(-N 100000 --dims 4096 --memory-gb 60)
fi
timeout "${TIMING_TIMEOUT:-120}" "$py" "$here/benchmarks/top1_blocks.py" --device "$device" \
    "${size[@]}" --trials 2 2>&1 | tail -n 8

step "3. the trained sweep facts on $device into $out/facts.db"
spec="$out/facts-$device.toml"
sed "s/^\[base\]$/[base]\ndevice = \"$device\"/" "$here/src/assocmem/studies/facts/facts.toml" >"$spec"
start=$(date +%s)
timeout "${SWEEP_TIMEOUT:-420}" "$py" -m assocmem sweep run "$spec" --db "$out/facts.db" \
    --memory-gb 60 --quiet 2>&1 | tail -n 5
echo "sweep: exit $? after $(($(date +%s) - start)) s"

step "4. stored searches"
"$py" - "$out/facts.db" <<'EOF'
import json, sqlite3, sys
from collections import defaultdict

rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT config, metrics, provenance FROM runs WHERE kind = 'facts_capacity' AND status = 'ok'"
).fetchall()
table = defaultdict(list)
for config, metrics, prov in rows:
    c, m, p = json.loads(config), json.loads(metrics), json.loads(prov)
    table[(c["memory"], c["optimizer"], c["dim"])].append((m["n_star"], p["wall_seconds"]))
print(f"{len(rows)} of 60 searches stored")
for (memory, optimizer, dim), found in sorted(table.items()):
    stars = ", ".join(str(n) for n, _ in found)
    seconds = sum(s for _, s in found) / len(found)
    print(f"{memory:7s} {optimizer:5s} d = {dim:4d}: N* {stars:24s} {seconds:7.1f} s a search")
EOF
