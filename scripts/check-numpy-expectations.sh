#!/usr/bin/env bash
# Regenerates the numpy expectations with the installed numpy and compares them with the
# committed tests/testdata/numpy_expectations.txt (the header line, naming numpy's version, aside).
# Exit 77 (CTest's skip) when no python3 with numpy is installed (Debian: python3-numpy).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python=""
for candidate in /usr/bin/python3 python3; do
  if "$candidate" -c 'import numpy' 2>/dev/null; then
    python="$candidate"
    break
  fi
done
if [ -z "$python" ]; then
  echo "no python3 with numpy (apt-get install python3-numpy): skipped"
  exit 77
fi
diff <(grep -v '^#' "$root/tests/testdata/numpy_expectations.txt") \
  <("$python" "$root/scripts/gen-numpy-expectations.py" | grep -v '^#')
echo "numpy $("$python" -c 'import numpy; print(numpy.__version__)') gives the committed expectations"
