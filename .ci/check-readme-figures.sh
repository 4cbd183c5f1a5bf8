#!/usr/bin/env bash
# README.md quotes no figure that perf/RESULTS.md does not hold (seconds; Python 3, standard
# library only).
#
# What counts as a figure in README.md: in its prose (fenced code blocks, `code spans` and HTML
# comments left out, lines joined, so a figure broken over two lines is still seen),
#   - a number, or a range "A-B" / "A to B", followed by a unit of time (ns, us, ms, s), of rate
#     (pairs/s, GB/s, TB/s, GFLOP/s, TFLOP/s), "%", or "bytes per particle";
#   - a speed-up written "471x";
#   - a number in e-notation with a decimal mantissa (7.2e-5, 1.795e12): a measured error or
#     rate. Powers of ten without one (1e6, 1e-4) are sizes and settings, not figures.
# A figure is held when perf/RESULTS.md has a figure of the same kind (times in any unit of
# time, other units alike) that, rounded half up to the README figure's last digit, equals it:
# "0.389 s" is held by "389.0 ms", "9.2e-5" by "9.16e-05", "4.97 ms" by "4.971 ms".
# A paragraph whose figures were measured elsewhere starts with a line
# "<!-- figures: PATH -->" (PATH from the repository root); its figures are then looked up,
# as bare numbers, in that file instead.
#
#   .ci/check-readme-figures.sh              # check README.md against perf/RESULTS.md
#   .ci/check-readme-figures.sh --self-test  # show that the check passes and fails as it should
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'PYTHON'
import re
import sys
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path

NUMBER = r"\d+(?:\.\d+)?"
UNITS = r"ns|us|µs|ms|s|%|pairs/s|GB/s|TB/s|GFLOP/s|TFLOP/s|bytes per particle"
WITH_UNIT = re.compile(rf"(?<![\w.])({NUMBER})(?:\s*(?:-|to)\s*({NUMBER}))?\s*({UNITS})(?![\w/])")
SPEEDUP = re.compile(rf"(?<![\w.])({NUMBER})x\b")
E_NOTATION = re.compile(r"(?<![\w.])(\d+\.\d+)e([-+]?\d+)\b")
BARE = re.compile(rf"(?<![\w.]){NUMBER}(?:e[-+]?\d+)?")
SECONDS = {"ns": Decimal("1e-9"), "us": Decimal("1e-6"), "µs": Decimal("1e-6"),
           "ms": Decimal("1e-3"), "s": Decimal(1)}
MARKER = re.compile(r"^<!--\s*figures:\s*(\S+)\s*-->")


def without_code_blocks(text):
    return re.sub(r"^```.*?^```[^\n]*$", "", text, flags=re.S | re.M)


def prose(text):
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"`[^`]*`", "", text)
    return re.sub(r"\s+", " ", text)


def figures(text):
    """(kind, value in the kind's unit, the figure's last digit in that unit, as written)."""
    found = []
    for m in WITH_UNIT.finditer(text):
        unit = m[3]
        kind, scale = ("time", SECONDS[unit]) if unit in SECONDS else (unit, Decimal(1))
        for number in filter(None, (m[1], m[2])):
            value = Decimal(number)
            found.append((kind, value * scale, Decimal(1).scaleb(value.as_tuple().exponent)
                          * scale, m[0]))
    for m in SPEEDUP.finditer(text):
        value = Decimal(m[1])
        found.append(("x", value, Decimal(1).scaleb(value.as_tuple().exponent), m[0]))
    for m in E_NOTATION.finditer(text):
        value = Decimal(f"{m[1]}e{m[2]}")
        found.append(("e", value, Decimal(1).scaleb(value.as_tuple().exponent), m[0]))
    return found


def held(figure, candidates):
    kind, value, digit, _ = figure
    for other_kind, other, _, _ in candidates:
        if other_kind not in (kind, None):
            continue
        try:
            if other.quantize(digit, ROUND_HALF_UP) == value:
                return True
        except InvalidOperation:  # far larger than the figure: no match
            continue
    return False


def bare_numbers(text):
    return [(None, Decimal(n), None, n) for n in BARE.findall(text)]


def missing(readme, results, read_file):
    """The README's figures that their source does not hold."""
    default = figures(results)
    absent = []
    for paragraph in re.split(r"\n\s*\n", without_code_blocks(readme)):
        marker = MARKER.match(paragraph.strip())
        source = bare_numbers(read_file(marker[1])) if marker else default
        for figure in figures(prose(paragraph)):
            if not held(figure, source):
                absent.append((figure[3], marker[1] if marker else "perf/RESULTS.md"))
    return absent


def self_test():
    results = ("| 1e6 uniform | 4.971 ms | 9.16e-05 |\n| 1e8 | 389.0 ms | 6.45e-05 |\n"
               "76 % of the rate, 471x, 1.795e+12 pairs/s\n")
    other = {"docs/B.md": "| compile | 16.7 to 22.0 (16.0 to 21.0) |"}
    cases = [
        ("4.97 ms at 9.2e-5; 1e8 in 0.389 s at 6.5e-5, 76 %, 471x, 1.80e12", True),
        ("a figure split over\nlines: 4.97\nms", True),
        ("settings are not figures: 1e6 particles, `--tolerance 1.5e-3`, order 7", True),
        ("```\nkfmm --check 2.5 s\n```", True),
        ("<!-- figures: docs/B.md -->\nIt compiles in 16.7 to 22.0 s.", True),
        ("6.5 ms at 1e6", False),
        ("4.9-5.1 ms", False),
        ("an error of 9.3e-5", False),
        ("0.39 s", True),
        ("0.38 s", False),
        ("77 %", False),
        ("<!-- figures: docs/B.md -->\nIt compiles in 20.5 s.", False),
    ]
    failures = 0
    for readme, should_pass in cases:
        absent = missing(readme, results, lambda path: other[path])
        if (not absent) != should_pass:
            failures += 1
            print(f"check-readme-figures: self-test: {readme!r} should "
                  f"{'pass' if should_pass else 'fail'}, missing {absent}", file=sys.stderr)
    if failures:
        sys.exit(1)
    print(f"check-readme-figures: self-test passed ({len(cases)} cases)")


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if sys.argv[1:]:
        sys.exit("usage: .ci/check-readme-figures.sh [--self-test]")
    readme = Path("README.md").read_text()
    results = Path("perf/RESULTS.md").read_text()
    absent = missing(readme, results, lambda path: Path(path).read_text())
    for quoted, source in absent:
        print(f"ci: README.md quotes '{quoted}', which {source} does not hold", file=sys.stderr)
    if absent:
        sys.exit(1)
    print(f"ci: every figure README.md quotes is in perf/RESULTS.md (or the file it names)")


main()
PYTHON
