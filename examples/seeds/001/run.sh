#!/usr/bin/env bash
# Seed 001 with one command: vLLM's console block for 200 requests (1000 in, 100 out) against
# one server under MPS, then two servers on one GPU benchmarked at once (MPS; 64 + 64 SMs;
# 96 + 4 SMs), each simulated in-process (suite.yaml). Prints the blocks under the seed's
# headings. ./run.sh --quick runs suite-quick.yaml (50 prompts per test).
SEED=001
source "$(dirname "$0")/../common.sh"
suite=examples/seeds/001/suite.yaml
[ "$quick" = 1 ] && suite=examples/seeds/001/suite-quick.yaml
seed_run_suite "50 prompts per test instead of 200 (suite-quick.yaml)" "$suite"
# The seed's layout: its headings, then each server's vLLM block in a code fence (servebench's
# extras and server-metrics blocks, the combined block and the progress bars stay in the log).
awk '
  function close_section() { if (fence) print "```"; fence = 0; printf "%s", warnings; warnings = "" }
  /^Running test case / { close_section() }
  /^Running test case mps100_single_server / { print "MPS 100:\n\nSingle Server:" }
  /^Running test case mps100_two_servers /   { print "\nTwo Servers:" }
  /^Running test case gtx_64_sms /           { print "\nGTX\n\n* 64 SMs (0-3, 4-7)" }
  /^Running test case gtx_100_sms_96_4 /     { print "\n* 100 SMs (96 + 4 remaining)" }
  /^WARNING: the simulator fell behind/      { if (!($0 in seen)) warnings = warnings $0 "\n"
                                               seen[$0] = 1 }
  /^=+ Serving Benchmark Result =+$/         { if (fence) print ""; else print "```"
                                               fence = 1; inblock = 1 }
  inblock                                    { print }
  inblock && /^=+$/                          { inblock = 0 }
  END                                        { close_section() }
' "$out.log" > "$out/blocks.md"
cat "$out/blocks.md"
echo
echo "Both servers of a test were benchmarked at once, from one t0; their combined tables:"
awk '/^Running test case /{name=$4} /^\| target /{print "\n" name; t=1} t&&/^\|/{print; next} {t=0}' "$out.log"
echo
echo "Written: $out/blocks.md"
seed_suite_status
exit $status
