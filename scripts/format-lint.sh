#!/usr/bin/env bash
# Checks the Swift sources against .swift-format (lineLength 120 and the rules it enables) with the swift-format
# that ships in the toolchain: any finding fails, formatting included (--strict). Needs nothing but the toolchain;
# about 10 seconds. scripts/test.sh runs it before the first build.
#
#   scripts/format-lint.sh        # lint; prints file:line:column and the rule of each finding
#   scripts/format-lint.sh --fix  # rewrite the files in place (swift format format -i), then lint again:
#                                 # what is left (a long comment or string, a rule format cannot apply) is fixed by hand
#
# Left out: the OpenAPI client that swift-openapi-generator writes (scripts/generate-openapi.sh; never edited by
# hand).
set -euo pipefail
cd "$(dirname "$0")/.."

FIX=""
for argument in "$@"; do
    case "$argument" in
        --fix) FIX=1 ;;
        *) echo "format-lint.sh: unknown option $argument (try --fix)" >&2; exit 1 ;;
    esac
done

files=()
while IFS= read -r -d '' file; do
    files+=("$file")
done < <(find ./Package.swift ./Sources ./Backends ./Tests ./Benchmarks ./Integrations ./Fuzz \
    \( -name .build -o -name '.build-*' -o -path '*/OpenAPI/Generated' \) -prune -o -name '*.swift' -print0 | sort -z)

if [ -n "$FIX" ]; then swift format format -i --parallel "${files[@]}"; fi
if ! swift format lint --strict --parallel "${files[@]}"; then
    echo "format-lint.sh: the findings above break .swift-format's rules; scripts/format-lint.sh --fix rewrites" \
        "the files, and what it cannot fix (long comments and strings) is fixed by hand" >&2
    exit 1
fi
echo "format-lint.sh: ${#files[@]} files follow .swift-format"
