#!/usr/bin/env bash
# The parity proof on the whole generated set: the reference policy run directly and through MCP
# (one `sopbench mcp serve` process per episode, over stdio); the verdicts must be identical.
# Usage: benchmarks/mcp_parity.sh SCRATCH_DIR  (needs the mcp extra)
set -euo pipefail
out=${1:?give a scratch folder}
mkdir -p "$out"
started=$SECONDS
sopbench run --agent reference --output "$out/direct" --no-baselines >/dev/null
direct_s=$((SECONDS - started)); started=$SECONDS
sopbench run --agent reference --output "$out/mcp" --via mcp --no-baselines >/dev/null
mcp_s=$((SECONDS - started))
q="select task_id, run, status, end_reason, passed, verdict from episodes order by task_id, run"
n=$(sqlite3 "$out/mcp/results.sqlite" "select count(*) from episodes")
if diff <(sqlite3 "$out/direct/results.sqlite" "$q") <(sqlite3 "$out/mcp/results.sqlite" "$q") >/dev/null; then
    echo "parity: $n episodes, identical verdicts; direct ${direct_s} s, via mcp ${mcp_s} s"
else
    echo "parity: verdicts differ" >&2; exit 1
fi
