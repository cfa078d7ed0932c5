"""One line a form from bench/fp8_probe.py's log, both sizes side by side (owed.sh shows a pending
script's last 25 lines): TFLOP/s, x cuBLAS (accurate for promote forms, fast for fast ones), the range
over the rounds, rel. err.
    python3 bench/fp8_probe_table.py LOG [FORM_WIDTH]"""
import re
import sys

LINE = re.compile(r"^(\d+)\^3 (.+?): [\d.]+ us ([\d.]+) TFLOP/s \(([\d.]+) cuBLAS (\w+); rounds ([\d.]+)\.\.([\d.]+)\) err (\S+)")


def main(log, width=34):
    rows, errs = {}, {}
    for line in open(log):
        m = LINE.match(line)
        if m:
            n, form, tf, r, _ref, lo, hi, err = m.groups()
            rows.setdefault(form, []).append(f"{n}: {float(tf):.0f} {r} ({lo}..{hi})")
            errs[form] = err
    for form, cells in rows.items():
        print(f"{form:{width}s} | " + " | ".join(cells) + f" | err {errs[form]}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 34)
